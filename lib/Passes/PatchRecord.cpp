//===- lib/Passes/PatchRecord.cpp - The .hotswap.patches section ----------===//

#include "hotswap/Passes/PatchRecord.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CallReads.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Hazards.h"
#include "hotswap/Code/InPlace.h"
#include "hotswap/Code/LongJump.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Code/Relocate.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;

namespace {
Expected<PatchRecord> parseRecord(const json::Object &O) {
  PatchRecord R;
  for (auto [Key, Out] :
       {std::pair<StringRef, std::string *>{"kernel", &R.Kernel},
        {"asm", &R.Asm}}) {
    Expected<std::string> S = stringMember(O, Key);
    if (!S)
      return S.takeError();
    *Out = std::move(*S);
  }
  for (auto [Key, Out] : {std::pair<StringRef, uint64_t *>{"code", &R.Code},
                          {"size", &R.Size},
                          {"site", &R.Site},
                          {"body", &R.Body},
                          {"body_size", &R.BodySize},
                          {"insert_begin", &R.InsertBegin},
                          {"insert_end", &R.InsertEnd}}) {
    Expected<uint64_t> N = hexMember(O, Key);
    if (!N)
      return N.takeError();
    *Out = *N;
  }
  // A gateway (absent: none).
  if (O.get("gateway"))
    for (auto [Key, Out] :
         {std::pair<StringRef, uint64_t *>{"gateway", &R.Gateway},
          {"gateway_size", &R.GatewaySize}}) {
      Expected<uint64_t> N = hexMember(O, Key);
      if (!N)
        return N.takeError();
      *Out = *N;
    }
  if (R.Gateway > UINT64_MAX - R.GatewaySize || (R.Gateway && !R.GatewaySize))
    return makeError("its gateway's address and size do not fit each other");
  Expected<std::string> Orig = stringMember(O, "orig");
  if (!Orig)
    return Orig.takeError();
  std::string Bytes;
  if (Orig->empty() || Orig->size() % 8 || !tryGetFromHex(*Orig, Bytes))
    return makeError("'orig' is not the hexadecimal bytes of an instruction");
  R.Orig.assign(Bytes.begin(), Bytes.end());
  Expected<std::string> W = stringMember(O, "where");
  if (!W)
    return W.takeError();
  std::optional<code::SiteWhere> Where = code::parseSiteWhere(*W);
  if (!Where)
    return makeError("'where' is not one of before, after, replace");
  R.Where = *Where;
  // Ranges that hold together, without overflow.
  if (R.Site > R.Size || R.Orig.size() > R.Size - R.Site ||
      R.InsertBegin > R.InsertEnd || R.InsertEnd > R.BodySize ||
      R.Code > UINT64_MAX - R.Size || R.Body > UINT64_MAX - R.BodySize)
    return makeError("its offsets and sizes do not fit each other");
  return R;
}
} // namespace

Expected<std::vector<PatchRecord>>
hotswap::readPatchRecords(const Object &Obj) {
  return readRecords<PatchRecord>(Obj, PatchRecords, parseRecord);
}

Error hotswap::appendPatchRecords(Object &Obj, ArrayRef<PatchRecord> Records) {
  return appendRecordLines(
      Obj, PatchRecords, Records.size(), [&](json::OStream &J, size_t I) {
        const PatchRecord &R = Records[I];
        J.object([&] {
          J.attribute("asm", R.Asm);
          J.attribute("body", hex(R.Body));
          J.attribute("body_size", hex(R.BodySize));
          J.attribute("code", hex(R.Code));
          if (R.Gateway) {
            J.attribute("gateway", hex(R.Gateway));
            J.attribute("gateway_size", hex(R.GatewaySize));
          }
          J.attribute("insert_begin", hex(R.InsertBegin));
          J.attribute("insert_end", hex(R.InsertEnd));
          J.attribute("kernel", R.Kernel);
          J.attribute("orig", toHex(R.Orig, /*LowerCase=*/true));
          J.attribute("site", hex(R.Site));
          J.attribute("size", hex(R.Size));
          J.attribute("where", code::siteWhereName(R.Where));
        });
      });
}

Expected<StringSet<>> hotswap::patchedKernels(const Object &Obj) {
  StringSet<> Out;
  if (!Obj.findSection(PatchRecordSectionName))
    return Out;
  Expected<std::vector<PatchRecord>> Recs = readPatchRecords(Obj);
  if (!Recs)
    return Recs.takeError();
  for (const PatchRecord &R : *Recs)
    Out.insert(R.Kernel);
  return Out;
}

namespace {
/// verify's checks of one kernel's sites (\p Recs, all of kernel \p K).
class KernelPatchCheck {
public:
  KernelPatchCheck(const Object &Obj, const KernelsAnalysis::Result &R,
                   const amdgpu::TargetMC &MC, const code::FunctionMap &Map,
                   code::CallReads &Calls, VerifyProblems &P)
      : Obj(Obj), R(R), MC(MC), Map(Map), Calls(Calls), P(P) {}

  void run(const KernelInfo &K, ArrayRef<const PatchRecord *> Recs);

private:
  const Object &Obj;
  const KernelsAnalysis::Result &R;
  const amdgpu::TargetMC &MC;
  const code::FunctionMap &Map;
  code::CallReads &Calls;
  VerifyProblems &P;

  void problem(const KernelInfo &K, const Twine &What) {
    P.push_back("kernel '" + K.Name + "' (patched in place): " + What.str());
  }
  /// The original code: the bytes now, each slot given its original
  /// bytes back once it is found to be the branch to its body.
  std::optional<std::vector<uint8_t>>
  original(const KernelInfo &K, ArrayRef<const PatchRecord *> Recs);
  /// The gateway of \p Rec (at instruction \p I of the original \p G)
  /// and its body's long jump back \p Back: where they are, what they
  /// reach, and that they write only registers free where they run.
  void longJumps(const KernelInfo &K, const PatchRecord &Rec,
                 const code::FunctionCFG &G, ArrayRef<MCInst> Decoded,
                 code::FunctionSeams &Seams, uint32_t I,
                 ArrayRef<uint8_t> Inserted,
                 const std::optional<code::ReadRelaxation> &Back, bool Wave32);
  /// Gateways seen so far, to find two that overlap.
  std::vector<std::pair<uint64_t, uint64_t>> Gateways;

public:
  /// Problems of the gateways of all kernels taken together.
  void finish();

private:
  void hazards(const KernelInfo &K, ArrayRef<const PatchRecord *> Recs,
               const code::CodeFunction &F, const code::FunctionCFG &G,
               ArrayRef<MCInst> Decoded, ArrayRef<uint8_t> Orig,
               ArrayRef<uint32_t> At, bool Wave32);
};

std::optional<std::vector<uint8_t>>
KernelPatchCheck::original(const KernelInfo &K,
                           ArrayRef<const PatchRecord *> Recs) {
  const PatchRecord &First = *Recs.front();
  std::optional<ArrayRef<uint8_t>> Now = Obj.bytesIfAt(First.Code, First.Size);
  if (!Now) {
    problem(K, "its code at " + hex(First.Code) + " is not in the object");
    return std::nullopt;
  }
  std::vector<uint8_t> Code(Now->begin(), Now->end());
  uint64_t End = 0;
  for (const PatchRecord *Rec : Recs) {
    if (Rec->Code != First.Code || Rec->Size != First.Size) {
      problem(K, "its records disagree on where its code is");
      return std::nullopt;
    }
    if (Rec->Site < End) {
      problem(K, "the sites at " + hex(First.Code + Rec->Site) +
                     " and before overlap");
      return std::nullopt;
    }
    End = Rec->Site + Rec->Orig.size();
    const uint64_t Site = Rec->Code + Rec->Site;
    std::string Why = code::checkInPlaceSlot(
        MC, ArrayRef<uint8_t>(Code).slice(Rec->Site, Rec->Orig.size()), Site,
        Rec->Gateway ? Rec->Gateway : Rec->Body,
        Rec->Gateway ? "its gateway" : "its body");
    if (!Why.empty()) {
      problem(K, Why);
      return std::nullopt;
    }
    llvm::copy(Rec->Orig, Code.begin() + Rec->Site);
  }
  return Code;
}

void KernelPatchCheck::longJumps(
    const KernelInfo &K, const PatchRecord &Rec, const code::FunctionCFG &G,
    ArrayRef<MCInst> Decoded, code::FunctionSeams &Seams, uint32_t I,
    ArrayRef<uint8_t> Inserted, const std::optional<code::ReadRelaxation> &Back,
    bool Wave32) {
  const uint64_t Site = Rec.Code + Rec.Site;
  const std::string Of = "the site at " + hex(Site) + ": ";
  // A body returns with a long jump exactly when its site has a gateway.
  if (!Rec.Gateway || !Back) {
    problem(K, Of + (Rec.Gateway ? "its body returns with a branch, but "
                                   "its site has a gateway"
                                 : "its body returns with a long jump, but "
                                   "its site has no gateway"));
    return;
  }
  const code::RegisterModel &RM = code::RegisterModel::get(MC.regInfo());
  const code::RegSet Named =
      code::LiveBound(RM, G, code::instructionRegs(MC, Decoded, Wave32))
          .named();
  // The gateway: in padding outside every function, a long jump to the
  // body, with registers free before the site's instruction.
  std::optional<ArrayRef<uint8_t>> Gw =
      Obj.bytesIfAt(Rec.Gateway, Rec.GatewaySize);
  const Section *GS = Obj.sectionForAddress(Rec.Gateway);
  auto InFunction = [&](const code::CodeFunction &F) {
    return F.Begin < Rec.Gateway + Rec.GatewaySize && Rec.Gateway < F.End;
  };
  // In padding a gateway may take, as the original has it: the gap the
  // function map finds there now holds the gateways, so its extent is the
  // one checked (its bytes were padding: restore's edits say what they
  // were).
  auto InRoom = [&](const code::CodeGap &Gap) {
    code::CodeGap AsPadding = Gap;
    AsPadding.Kind = code::GapKind::Zeros;
    return Gap.Begin <= Rec.Gateway &&
           Rec.Gateway + Rec.GatewaySize <= Gap.End &&
           code::isGatewayRoom(AsPadding, Map);
  };
  if (!Gw || !GS || !GS->isExec() || llvm::any_of(Map.Functions, InFunction) ||
      llvm::none_of(Map.Gaps, InRoom)) {
    problem(K, Of + "its gateway at " + hex(Rec.Gateway) +
                   " is not in padding before a function");
    return;
  }
  Gateways.push_back({Rec.Gateway, Rec.Gateway + Rec.GatewaySize});
  Expected<code::ReadRelaxation> J = code::readLongJump(MC, *Gw, Rec.Gateway);
  if (!J) {
    problem(K, Of + "its gateway at " + hex(Rec.Gateway) +
                   " is not a long jump: " + toString(J.takeError()));
    return;
  }
  if (J->Target != Rec.Body)
    problem(K, Of + "its gateway at " + hex(Rec.Gateway) + " reaches " +
                   hex(J->Target) + ", not its body at " + hex(Rec.Body));
  code::SiteRegisters Before = Seams.at(I, code::SiteWhere::Before);
  Before.Scratch = code::jumpScratch(RM, Before, Named);
  if (std::string Why = code::longJumpRegsProblem(RM, Before, J->Writes);
      !Why.empty())
    problem(K, Of + "its gateway at " + hex(Rec.Gateway) + ": " + Why);
  // What the gateway wrote is nothing the inserted code may read.
  code::decodeRange(
      MC, Inserted, Rec.Body + Rec.InsertBegin,
      [&](const code::Insn &In, const MCInst &M) {
        code::RegSet Reads = RM.emptySet();
        for (uint16_t U : code::instructionRegs(MC, M, Wave32).Uses)
          Reads.set(U);
        Reads &= J->Writes;
        if (Reads.any())
          problem(K, Of + "code inserted at " + hex(In.Addr) + " reads " +
                         RM.format(Reads) + ", which its gateway wrote");
      });
  // The long jump back, with registers free after the site's instruction.
  code::SiteRegisters After = Seams.at(I, code::SiteWhere::After);
  After.Scratch = code::jumpScratch(RM, After, Named);
  if (std::string Why = code::longJumpRegsProblem(RM, After, Back->Writes);
      !Why.empty())
    problem(K, Of + "its body's long jump back at " + hex(Back->Entry) + ": " +
                   Why);
}

void KernelPatchCheck::finish() {
  llvm::sort(Gateways);
  for (size_t N = 1; N < Gateways.size(); ++N)
    if (Gateways[N].first < Gateways[N - 1].second)
      P.push_back("section '" + PatchRecordSectionName.str() +
                  "': the gateways at " + hex(Gateways[N - 1].first) + " and " +
                  hex(Gateways[N].first) + " overlap");
}

void KernelPatchCheck::hazards(const KernelInfo &K,
                               ArrayRef<const PatchRecord *> Recs,
                               const code::CodeFunction &F,
                               const code::FunctionCFG &G,
                               ArrayRef<MCInst> Decoded, ArrayRef<uint8_t> Orig,
                               ArrayRef<uint32_t> At, bool Wave32) {
  // The inserted code spliced into the original, as a copy holds it: its
  // hazards are the body's (the branches make one more, which the waits at
  // the body's ends clear: checkInPlaceBody).
  std::vector<code::Insertion> Ins;
  std::vector<uint32_t> Replaced;
  for (size_t N = 0; N < Recs.size(); ++N) {
    const PatchRecord &Rec = *Recs[N];
    std::optional<ArrayRef<uint8_t>> Body =
        Obj.bytesIfAt(Rec.Body, Rec.BodySize);
    code::Insertion In;
    In.Before = Rec.Where == code::SiteWhere::After ? At[N] + 1 : At[N];
    In.Replace = Rec.Where == code::SiteWhere::Replace;
    ArrayRef<uint8_t> B =
        Body->slice(Rec.InsertBegin, Rec.InsertEnd - Rec.InsertBegin);
    In.Bytes.assign(B.begin(), B.end());
    if (In.Replace)
      Replaced.push_back(At[N]);
    Ins.push_back(std::move(In));
  }
  llvm::stable_sort(Ins,
                    [](const code::Insertion &A, const code::Insertion &B) {
                      return A.Before < B.Before;
                    });
  const PatchRecord &First = *Recs.front();
  code::RelocationResult RR =
      code::relocate(MC, G, Decoded, Orig, First.Code, Ins);
  if (!RR.Code) {
    problem(K, "its inserted code cannot be spliced into its code to check "
               "hazards (" +
                   RR.Refusal.Kind + "): " + RR.Refusal.Message);
    return;
  }
  code::CodeFunction C = F;
  C.End = C.Begin + RR.Code->Bytes.size();
  std::vector<MCInst> CD;
  code::FunctionCFG CG = code::buildCFG(MC, C, RR.Code->Bytes, Map, &CD);
  for (const code::NewHazard &NH :
       code::newHazards(MC, code::HazardRules::of(MC, R.Target, Wave32),
                        code::FunctionKind::Kernel, G, Decoded, CG, CD,
                        RR.Code->InsnAddr, Replaced))
    problem(K, "hazard: " + NH.Message);
}

void KernelPatchCheck::run(const KernelInfo &K,
                           ArrayRef<const PatchRecord *> Recs) {
  std::optional<std::vector<uint8_t>> Orig = original(K, Recs);
  if (!Orig)
    return;
  const PatchRecord &First = *Recs.front();
  code::CodeFunction O;
  O.Name = K.Name;
  O.Begin = First.Code;
  O.End = First.Code + First.Size;
  if (const code::CodeFunction *F = Map.startingAt(First.Code)) {
    O = *F;
    O.End = First.Code + First.Size;
  }
  std::vector<MCInst> Decoded;
  code::FunctionCFG G = code::buildCFG(MC, O, *Orig, Map, &Decoded);
  const bool Wave32 =
      R.Target.Gen >= amdgpu::Generation::GFX10 && K.KD.isWave32();
  code::FunctionSeams Seams(
      MC, G, Decoded, code::FunctionKind::Kernel, Wave32, R.Target.Gen,
      {K.KD.usableSGPRs(R.Target), K.KD.usableVGPRs(R.Target)}, &Calls);
  std::vector<uint32_t> At;
  for (const PatchRecord *Rec : Recs) {
    const uint64_t Site = Rec->Code + Rec->Site;
    std::optional<uint32_t> I = G.insnAt(Site);
    if (!I || G.Insns[*I].Size != Rec->Orig.size()) {
      problem(K, "its record patches " + hex(Site) +
                     ", where no instruction of its size starts");
      return;
    }
    At.push_back(*I);
    // A site no body may take, or whose instruction may not move, is
    // not read further (its seam is not one the analyses give).
    std::string Why = code::siteRefusal(G, *I, Rec->Where);
    if (Why.empty())
      Why = code::movableRefusal(MC, G, Decoded[*I], *I);
    if (Why.empty() && *I + 1 >= G.Insns.size())
      Why = "its instruction is the function's last";
    if (!Why.empty()) {
      problem(K, "the site at " + hex(Site) + ": " + Why);
      return;
    }
    std::optional<ArrayRef<uint8_t>> Body =
        Obj.bytesIfAt(Rec->Body, Rec->BodySize);
    if (!Body) {
      problem(K, "the body at " + hex(Rec->Body) + " of the site at " +
                     hex(Site) + " is not in the object");
      return;
    }
    std::optional<code::ReadRelaxation> Back;
    for (const std::string &Pr : code::checkInPlaceBody(
             MC, Rec->Where, Site, Rec->Orig, *Body, Rec->Body,
             Rec->InsertBegin, Rec->InsertEnd, &Back))
      problem(K, Pr);
    ArrayRef<uint8_t> Inserted =
        Body->slice(Rec->InsertBegin, Rec->InsertEnd - Rec->InsertBegin);
    if (Rec->Gateway || Back)
      longJumps(K, *Rec, G, Decoded, Seams, *I, Inserted, Back, Wave32);
    code::SiteRegisters Regs = Seams.at(*I, Rec->Where);
    for (const code::BodyProblem &BP :
         code::checkBody(MC, Inserted, Wave32, Seams.waitCounts().Set,
                         Regs.Writable, Regs.InFlight))
      problem(K, "code inserted at " + hex(Rec->Body + Rec->InsertBegin) +
                     " (" + code::siteWhereName(Rec->Where).str() + " " +
                     hex(Site) + "): " +
                     (BP.Insn
                          ? "instruction " + std::to_string(*BP.Insn + 1) + ": "
                          : std::string()) +
                     BP.Message);
    Expected<std::vector<uint8_t>> Want = MC.assemble(Rec->Asm);
    if (!Want)
      problem(K, "the assembly its record gives for the site at " + hex(Site) +
                     " does not assemble: " + toString(Want.takeError()));
    else if (ArrayRef<uint8_t>(*Want) != Inserted)
      problem(K, "the code inserted at " + hex(Rec->Body + Rec->InsertBegin) +
                     " is not the assembly its record gives for the site at " +
                     hex(Site));
  }
  hazards(K, Recs, O, G, Decoded, *Orig, At, Wave32);
}
} // namespace

void hotswap::verifyPatches(const Object &Obj, const KernelsAnalysis::Result &R,
                            VerifyProblems &P) {
  if (!Obj.findSection(PatchRecordSectionName))
    return;
  Expected<std::vector<PatchRecord>> Recs = readPatchRecords(Obj);
  if (!Recs) {
    P.push_back(toString(Recs.takeError()));
    return;
  }
  if (Recs->empty())
    return;
  Expected<std::unique_ptr<ObjectCode>> C = ObjectCode::read(Obj, R);
  if (!C) {
    P.push_back(toString(C.takeError()));
    return;
  }
  const StringMap<const KernelInfo *> &ByName = (*C)->ByName;
  // Each kernel's records, in site order.
  MapVector<StringRef, std::vector<const PatchRecord *>> Of;
  for (const PatchRecord &Rec : *Recs) {
    if (!ByName.count(Rec.Kernel)) {
      P.push_back("section '" + PatchRecordSectionName.str() +
                  "' records a site of kernel '" + Rec.Kernel +
                  "', which the object does not have");
      continue;
    }
    Of[Rec.Kernel].push_back(&Rec);
  }
  KernelPatchCheck Check(Obj, R, *(*C)->MC, (*C)->Map, *(*C)->Calls, P);
  for (auto &[Name, List] : Of) {
    llvm::stable_sort(List, [](const PatchRecord *A, const PatchRecord *B) {
      return A->Site < B->Site;
    });
    Check.run(*ByName.lookup(Name), List);
  }
  Check.finish();
}
