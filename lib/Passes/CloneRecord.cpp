//===- lib/Passes/CloneRecord.cpp - The .hotswap.clones section
//-------------===//

#include "hotswap/Passes/CloneRecord.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CallReads.h"
#include "hotswap/Code/CounterCode.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Hazards.h"
#include "hotswap/Code/LongJump.h"
#include "hotswap/Code/RelocationProof.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/CounterRecord.h"
#include "hotswap/Passes/RecordLines.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;

std::optional<uint64_t> CloneRecord::cloneOffset(uint64_t Off) const {
  if (Off >= Size || Map.empty() || Map.front().first != 0)
    return std::nullopt;
  auto It = llvm::upper_bound(
      Map, Off, [](uint64_t V, const auto &E) { return V < E.first; });
  const auto &[O, C] = *std::prev(It);
  return C + (Off - O);
}

namespace {
json::Array pairsJSON(ArrayRef<std::pair<uint64_t, uint64_t>> Ps) {
  json::Array A;
  for (auto [X, Y] : Ps)
    A.push_back(json::Array{hex(X), hex(Y)});
  return A;
}

Expected<std::vector<std::pair<uint64_t, uint64_t>>>
pairsMember(const json::Object &O, StringRef Key) {
  const json::Array *A = O.getArray(Key);
  if (!A)
    return makeError("'" + Key + "' is not an array");
  std::vector<std::pair<uint64_t, uint64_t>> Out;
  for (const json::Value &E : *A) {
    const json::Array *P = E.getAsArray();
    uint64_t V[2];
    bool Ok = P && P->size() == 2;
    for (unsigned I = 0; Ok && I < 2; ++I) {
      std::optional<StringRef> S = (*P)[I].getAsString();
      Ok = S && S->consume_front("0x") && !S->getAsInteger(16, V[I]);
    }
    if (!Ok)
      return makeError("an element of '" + Key +
                       "' is not a pair of hexadecimal strings");
    Out.push_back({V[0], V[1]});
  }
  return Out;
}

Expected<CloneRecord> parseRecord(const json::Object &O) {
  CloneRecord R;
  Expected<std::string> K = stringMember(O, "kernel");
  if (!K)
    return K.takeError();
  R.Kernel = std::move(*K);
  for (auto [Key, Out] : {std::pair<StringRef, uint64_t *>{"code", &R.Code},
                          {"size", &R.Size},
                          {"clone", &R.Clone},
                          {"clone_size", &R.CloneSize}}) {
    Expected<uint64_t> N = hexMember(O, Key);
    if (!N)
      return N.takeError();
    *Out = *N;
  }
  for (auto [Key, Out] :
       {std::pair<StringRef, std::vector<std::pair<uint64_t, uint64_t>> *>{
            "map", &R.Map},
        {"inserted", &R.Inserted}}) {
    auto Ps = pairsMember(O, Key);
    if (!Ps)
      return Ps.takeError();
    *Out = std::move(*Ps);
  }
  for (auto [Key, Out] :
       {std::pair<StringRef, std::vector<std::pair<uint64_t, uint64_t>> *>{
            "relaxed", &R.Relaxed},
        {"fallthrough", &R.FallThrough}})
    if (O.get(Key)) {
      auto Ps = pairsMember(O, Key);
      if (!Ps)
        return Ps.takeError();
      *Out = std::move(*Ps);
    }
  if (const json::Value *V = O.get("asm")) {
    const json::Array *A = V->getAsArray();
    if (!A)
      return makeError("'asm' is not an array");
    for (const json::Value &E : *A) {
      const json::Array *P = E.getAsArray();
      std::optional<StringRef> Off, Text;
      uint64_t N = 0;
      if (P && P->size() == 2) {
        Off = (*P)[0].getAsString();
        Text = (*P)[1].getAsString();
      }
      if (!Off || !Text || !Off->consume_front("0x") ||
          Off->getAsInteger(16, N) ||
          (!R.Asm.empty() && R.Asm.back().first >= N))
        return makeError("'asm' is not a sorted array of pairs of a "
                         "hexadecimal string and assembly");
      R.Asm.push_back({N, Text->str()});
    }
  }
  if (const json::Value *V = O.get("replaced")) {
    const json::Array *A = V->getAsArray();
    if (!A)
      return makeError("'replaced' is not an array");
    for (const json::Value &E : *A) {
      std::optional<StringRef> S = E.getAsString();
      uint64_t N;
      if (!S || !S->consume_front("0x") || S->getAsInteger(16, N) ||
          (!R.Replaced.empty() && R.Replaced.back() >= N))
        return makeError("'replaced' is not a sorted array of hexadecimal "
                         "strings");
      R.Replaced.push_back(N);
    }
  }
  return R;
}
} // namespace

Expected<std::vector<CloneRecord>>
hotswap::readCloneRecords(const Object &Obj) {
  return readRecords<CloneRecord>(Obj, CloneRecords, parseRecord);
}

Error hotswap::appendCloneRecords(Object &Obj, ArrayRef<CloneRecord> Records) {
  // Written one at a time, keys in the order json::Object prints them.
  return appendRecordLines(
      Obj, CloneRecords, Records.size(), [&](json::OStream &J, size_t I) {
        const CloneRecord &R = Records[I];
        J.object([&] {
          if (!R.Asm.empty())
            J.attributeArray("asm", [&] {
              for (const auto &A : R.Asm)
                J.array([&] {
                  J.value(hex(A.first));
                  J.value(A.second);
                });
            });
          J.attribute("clone", hex(R.Clone));
          J.attribute("clone_size", hex(R.CloneSize));
          J.attribute("code", hex(R.Code));
          if (!R.FallThrough.empty())
            J.attribute("fallthrough", pairsJSON(R.FallThrough));
          J.attribute("inserted", pairsJSON(R.Inserted));
          J.attribute("kernel", R.Kernel);
          J.attribute("map", pairsJSON(R.Map));
          if (!R.Relaxed.empty())
            J.attribute("relaxed", pairsJSON(R.Relaxed));
          if (!R.Replaced.empty())
            J.attributeArray("replaced", [&] {
              for (uint64_t Off : R.Replaced)
                J.value(hex(Off));
            });
          J.attribute("size", hex(R.Size));
        });
      });
}

const CloneRecord *hotswap::currentClone(ArrayRef<CloneRecord> Records,
                                         const KernelInfo &K) {
  const CloneRecord *Found = nullptr;
  for (const CloneRecord &R : Records)
    if (R.Kernel == K.Name && R.Clone == K.CodeEntry)
      Found = &R;
  return Found;
}

/// The checks of every range of code inserted into \p K's copy (whose
/// bytes are \p CopyBytes from \p CopyBase), against the seam of the
/// original instruction of \p G it precedes or replaces. Returns the
/// registers based counter code reads, when the copy's entry sets them up
/// (CounterCode.h), and the end of that code.
static std::optional<std::pair<code::BasedRegisters, uint64_t>>
verifyInsertedCode(const amdgpu::TargetMC &MC, const KernelsAnalysis::Result &R,
                   const KernelInfo &K, const code::FunctionCFG &G,
                   ArrayRef<MCInst> Decoded, ArrayRef<uint8_t> CopyBytes,
                   uint64_t CopyBase,
                   ArrayRef<std::pair<uint64_t, uint64_t>> Inserted,
                   ArrayRef<std::pair<uint64_t, uint64_t>> FallThrough,
                   ArrayRef<uint32_t> Replaced, ArrayRef<uint64_t> InsnAddr,
                   const DenseMap<uint64_t, code::CounterTarget> &Counters,
                   DenseSet<uint64_t> &CountersSeen, code::FunctionSeams &Seams,
                   bool Wave32, VerifyProblems &P) {
  const code::WaitCounts &WC = Seams.waitCounts();
  // Based counter code: the registers the copy's entry sets up, the base
  // they hold, and where that code ends.
  std::optional<std::pair<code::BasedRegisters, uint64_t>> Based;
  uint64_t BaseValue = 0;
  // The code of range [B, E), at the seam (I, W).
  auto Check = [&](uint64_t B, uint64_t E, uint32_t I, code::SiteWhere W) {
    code::SiteRegisters Regs = Seams.at(I, W);
    // Counter code (the counter map names where) reads the PC to find its
    // counter: it must be exactly counter code, adding to its own counter.
    ArrayRef<uint8_t> Body = CopyBytes.slice(B - CopyBase, E - B);
    auto Counter = Counters.find(B);
    const bool IsCounter = Counter != Counters.end();
    // Only based counter code leaves its atomic in flight (CounterCode.h).
    bool StoresMayStay = false;
    if (IsCounter) {
      CountersSeen.insert(B);
      Expected<code::CounterTarget> Target =
          code::counterCodeTarget(MC, Body, B);
      const code::CounterTarget &Want = Counter->second;
      // Based code adds at an offset from the base the entry's sets up.
      std::string BaseProblem;
      StoresMayStay = Target && Target->Based;
      if (Target && Target->Based && Target->SetsBase) {
        if (I != 0 || W != code::SiteWhere::Before || B != CopyBase || Based)
          BaseProblem = "sets up a base, but is not the code the copy starts "
                        "with";
        else {
          Based.emplace(*Target->Based, E);
          BaseValue = Target->BaseAddr;
        }
      } else if (Target && Target->Based) {
        if (!Based)
          BaseProblem = "adds at an offset from " + Target->Based->Base +
                        ", which the copy's entry does not set up";
        else if (!(Based->first == *Target->Based))
          BaseProblem = "reads " + Target->Based->Base + " and " +
                        Target->Based->One + ", not " + Based->first.Base +
                        " and " + Based->first.One +
                        " that the copy's entry sets up";
        else
          Target->Counter += BaseValue;
      }
      if (!BaseProblem.empty())
        P.push_back("cloned kernel '" + K.Name + "': the counter code at " +
                    hex(B) + " " + BaseProblem);
      else if (!Target)
        P.push_back("cloned kernel '" + K.Name + "': the counter code at " +
                    hex(B) +
                    " is not counter code: " + toString(Target.takeError()));
      else if (Target->Counter != Want.Counter)
        P.push_back("cloned kernel '" + K.Name + "': the counter code at " +
                    hex(B) + " adds to " + hex(Target->Counter) +
                    ", not to its counter at " + hex(Want.Counter));
      else if (Target->ExecLo && !Wave32)
        P.push_back("cloned kernel '" + K.Name + "': the counter code at " +
                    hex(B) +
                    " moves only EXEC_LO, but the kernel runs in wave64 "
                    "(the lanes of EXEC_HI would count too)");
      else if (Target->Unit != Want.Unit)
        P.push_back(
            "cloned kernel '" + K.Name + "': the counter code at " + hex(B) +
            " counts " +
            (Target->Unit == code::CounterUnit::Lane ? "lanes" : "waves") +
            ", but the counter map says " +
            (Want.Unit == code::CounterUnit::Lane ? "lanes" : "waves"));
    }
    for (const code::BodyProblem &BP :
         code::checkBody(MC, Body, Wave32, WC.Set, Regs.Writable, Regs.InFlight,
                         IsCounter, StoresMayStay))
      P.push_back(
          "cloned kernel '" + K.Name + "': code inserted at " + hex(B) + " (" +
          code::siteWhereName(W).str() + " " + hex(G.Insns[I].Addr) + "): " +
          (BP.Insn ? "instruction " + std::to_string(*BP.Insn + 1) + ": "
                   : std::string()) +
          BP.Message);
  };
  // The original instruction each range lands before: control reaching it
  // arrives at the range's start.
  size_t NextRange = 0;
  for (uint32_t I = 0; I < G.Insns.size() && NextRange < Inserted.size(); ++I) {
    bool IsReplaced = llvm::is_contained(Replaced, I);
    // The range before I ends at I's copy; one replacing I starts where
    // control reaching I lands (the proof's address of I).
    if (IsReplaced ? Inserted[NextRange].first != InsnAddr[I]
                   : Inserted[NextRange].second != InsnAddr[I])
      continue;
    auto [B, E] = Inserted[NextRange++];
    code::SiteWhere W =
        IsReplaced ? code::SiteWhere::Replace : code::SiteWhere::Before;
    std::string Why = code::siteRefusal(G, I, W);
    if (!Why.empty()) {
      P.push_back("cloned kernel '" + K.Name + "': code inserted at " + hex(B) +
                  " " + (IsReplaced ? "replaces" : "precedes") +
                  " the instruction at " + hex(G.Insns[I].Addr) + ": " + Why);
      continue;
    }
    Check(B, E, I, W);
  }
  if (NextRange != Inserted.size())
    P.push_back("cloned kernel '" + K.Name + "': code inserted at " +
                hex(Inserted[NextRange].first) +
                " precedes no original instruction");
  // Code on the fall-through way into an instruction (the proof placed it
  // right before where control reaching the instruction lands): checked
  // at the seam before that instruction, whose state holds on every way in.
  for (auto [B, E] : FallThrough) {
    std::optional<uint32_t> At;
    for (uint32_t I = 0; I < G.Insns.size() && !At; ++I) {
      bool Lands = InsnAddr[I] == E;
      for (auto [IB, IE] : Inserted)
        Lands |= IB == E && IE == InsnAddr[I];
      if (Lands && !llvm::is_contained(Replaced, I))
        At = I;
    }
    if (!At) {
      P.push_back("cloned kernel '" + K.Name + "': fall-through code at " +
                  hex(B) + " precedes no original instruction");
      continue;
    }
    if (std::string Why = code::siteRefusal(G, *At, code::SiteWhere::Before);
        !Why.empty()) {
      P.push_back("cloned kernel '" + K.Name + "': fall-through code at " +
                  hex(B) + " precedes the instruction at " +
                  hex(G.Insns[*At].Addr) + ": " + Why);
      continue;
    }
    Check(B, E, *At, code::SiteWhere::Before);
  }
  return Based;
}

/// Based counter code reads registers its copy's entry set up (\p Based,
/// the entry's code ending at \p EntryEnd): no other instruction of the
/// copy \p CG (decoded: \p Decoded) writes them, and it calls nothing
/// that might; firmware starts the copy at its entry (no preload header
/// in the original \p G).
static void
verifyBasedRegisters(const amdgpu::TargetMC &MC, const KernelInfo &K,
                     const code::FunctionCFG &G, const code::FunctionCFG &CG,
                     ArrayRef<MCInst> Decoded,
                     const code::BasedRegisters &Based, uint64_t EntryEnd,
                     bool Wave32, VerifyProblems &P) {
  const std::string Regs = Based.Base + " and " + Based.One;
  if (!CG.Calls.empty())
    P.push_back("cloned kernel '" + K.Name + "': its counter code reads " +
                Regs + ", but the copy calls (at " +
                hex(CG.Insns[CG.Calls.front().Insn].Addr) +
                ": a callee may write them)");
  if (llvm::any_of(G.Windows, [](const code::CodeWindow &W) {
        return W.K == code::CodeWindow::PreloadHeader;
      }))
    P.push_back("cloned kernel '" + K.Name + "': its counter code reads " +
                Regs +
                ", set up at its entry, but firmware may start it past "
                "its entry (a preload header)");
  if (Decoded.size() != CG.Insns.size()) {
    P.push_back("cloned kernel '" + K.Name + "': its copy does not decode");
    return;
  }
  for (size_t I = 0; I < CG.Insns.size(); ++I) {
    if (CG.Insns[I].Addr < EntryEnd)
      continue;
    code::InsnRegs R = code::instructionRegs(MC, Decoded[I], Wave32);
    SmallVector<uint16_t, 16> Defs(R.ScalarDefs.begin(), R.ScalarDefs.end());
    Defs.append(R.VectorDefs.begin(), R.VectorDefs.end());
    for (uint16_t U : Defs)
      if (U < Based.Units.size() && Based.Units.test(U)) {
        P.push_back(
            "cloned kernel '" + K.Name + "': '" +
            StringRef(MC.printInst(Decoded[I], CG.Insns[I].Addr)).trim().str() +
            "' at " + hex(CG.Insns[I].Addr) + " writes " + Regs +
            ", which its counter code reads");
        return;
      }
  }
}

/// From the counter map and `__hotswap_counters`: each counter code's
/// address -> its counter's. An error when the map and the area disagree.
static Error counterTargets(const Object &Obj,
                            DenseMap<uint64_t, code::CounterTarget> &Out) {
  Expected<std::vector<CounterEntry>> Map = readCounterMap(Obj);
  if (!Map)
    return Map.takeError();
  if (Map->empty())
    return Error::success();
  const SymbolTable *ST = Obj.symtab();
  std::optional<Symbol> Area;
  if (ST)
    Area = ST->find(CounterSymbolName);
  const uint64_t Need = Map->size() * CounterBytes;
  if (!Area || !Area->Sec || !Area->Sec->isNoBits() ||
      !(Area->Sec->Flags & ELF::SHF_WRITE) || Area->Size != Need ||
      Area->Value < Area->Sec->Addr ||
      Area->Value - Area->Sec->Addr > Area->Sec->size() ||
      Area->Sec->size() - (Area->Value - Area->Sec->Addr) < Need)
    return makeError("the counter map has " + Twine(Map->size()) +
                     " counters, but '" + CounterSymbolName +
                     "' is not a writable zero-filled area of " + Twine(Need) +
                     " bytes");
  for (const CounterEntry &E : *Map)
    if (!Out.try_emplace(
                E.Code,
                code::CounterTarget{Area->Value + E.Index * CounterBytes,
                                    E.Unit == "lane" ? code::CounterUnit::Lane
                                                     : code::CounterUnit::Wave})
             .second)
      return makeError("the counter map names counter code at " + hex(E.Code) +
                       " twice");
  return Error::success();
}

void hotswap::verifyClones(const Object &Obj, const KernelsAnalysis::Result &R,
                           VerifyProblems &P) {
  Expected<std::vector<CloneRecord>> Recs = readCloneRecords(Obj);
  if (!Recs) {
    P.push_back(toString(Recs.takeError()));
    return;
  }
  // Counter code -> the counter it must add to (instrument); each must be
  // code inserted into a copy, checked below.
  DenseMap<uint64_t, code::CounterTarget> Counters;
  DenseSet<uint64_t> CountersSeen;
  if (Error E = counterTargets(Obj, Counters))
    P.push_back(toString(std::move(E)));
  auto Unseen = make_scope_exit([&] {
    std::vector<uint64_t> Left;
    for (const auto &KV : Counters)
      if (!CountersSeen.count(KV.first))
        Left.push_back(KV.first);
    llvm::sort(Left);
    for (uint64_t A : Left)
      P.push_back("the counter map names counter code at " + hex(A) +
                  ", where no code inserted into a kernel's copy starts");
  });
  if (Recs->empty())
    return;
  // The functions as the bytes give them now: a cloned kernel's function is
  // its copy; the original is a function through its symbol, if any. What
  // calls read, from the callees' bytes (as the planner found it).
  Expected<std::unique_ptr<ObjectCode>> C = ObjectCode::read(Obj, R);
  if (!C) {
    P.push_back(toString(C.takeError()));
    return;
  }
  const std::unique_ptr<amdgpu::TargetMC> *MC = &(*C)->MC;
  const code::FunctionMap &Map = (*C)->Map;
  code::CallReads &Calls = *(*C)->Calls;
  const StringMap<const KernelInfo *> &ByName = (*C)->ByName;
  for (const CloneRecord &Rec : *Recs)
    if (!ByName.count(Rec.Kernel))
      P.push_back("section '" + CloneRecordSectionName.str() +
                  "' records a clone of kernel '" + Rec.Kernel +
                  "', which the object does not have");
  for (const KernelInfo &K : R.Kernels) {
    const CloneRecord *Rec = currentClone(*Recs, K);
    if (!Rec)
      continue;
    const code::CodeFunction *Copy = Map.startingAt(Rec->Clone);
    std::optional<ArrayRef<uint8_t>> Orig = Obj.bytesIfAt(Rec->Code, Rec->Size);
    std::optional<ArrayRef<uint8_t>> CopyBytes =
        Obj.bytesIfAt(Rec->Clone, Rec->CloneSize);
    if (!Copy || !Orig || !CopyBytes) {
      P.push_back("cloned kernel '" + K.Name + "': its original code at " +
                  hex(Rec->Code) + " or its copy at " + hex(Rec->Clone) +
                  " is not in the object");
      continue;
    }
    code::CodeFunction O = *Copy;
    O.Name = K.Name;
    O.Begin = Rec->Code;
    O.End = Rec->Code + Rec->Size;
    code::CodeFunction C = *Copy;
    C.End = Rec->Clone + Rec->CloneSize;
    std::vector<MCInst> Decoded;
    code::FunctionCFG G = code::buildCFG(**MC, O, *Orig, Map, &Decoded);
    std::vector<std::pair<uint64_t, uint64_t>> Inserted;
    for (auto [B, E] : Rec->Inserted)
      Inserted.push_back({Rec->Clone + B, Rec->Clone + E});
    std::vector<uint32_t> Replaced;
    for (uint64_t Off : Rec->Replaced) {
      std::optional<uint32_t> I = G.insnAt(Rec->Code + Off);
      if (!I) {
        P.push_back("cloned kernel '" + K.Name +
                    "': its record replaces offset " + hex(Off) +
                    ", where no instruction starts");
        break;
      }
      Replaced.push_back(*I);
    }
    if (Replaced.size() != Rec->Replaced.size())
      continue;
    std::vector<std::pair<uint64_t, uint64_t>> Relaxed, FallThrough;
    for (auto [B, E] : Rec->Relaxed)
      Relaxed.push_back({Rec->Clone + B, Rec->Clone + E});
    for (auto [B, E] : Rec->FallThrough)
      FallThrough.push_back({Rec->Clone + B, Rec->Clone + E});
    // The original's seams, by its own analyses: they prove the registers
    // of relaxations and of inserted code free.
    const bool Wave32 =
        R.Target.Gen >= amdgpu::Generation::GFX10 && K.KD.isWave32();
    code::FunctionSeams Seams(
        **MC, G, Decoded, code::FunctionKind::Kernel, Wave32, R.Target.Gen,
        {K.KD.usableSGPRs(R.Target), K.KD.usableVGPRs(R.Target)}, &Calls);
    code::RelocationProofResult Proof = code::proveRelocation(
        **MC, G, Decoded, *Orig, Map, C, *CopyBytes, Inserted, Replaced,
        !Counters.empty(), Relaxed, &Seams, FallThrough);
    for (const std::string &Pr : Proof.Problems)
      P.push_back("cloned kernel '" + K.Name + "': " + Pr);
    if (!Proof.proven())
      continue;
    std::optional<std::pair<code::BasedRegisters, uint64_t>> Based;
    if (!Inserted.empty() || !FallThrough.empty())
      Based = verifyInsertedCode(
          **MC, R, K, G, Decoded, *CopyBytes, Rec->Clone, Inserted, FallThrough,
          Replaced, Proof.InsnAddr, Counters, CountersSeen, Seams, Wave32, P);
    // Code the record gives as assembly is that assembly: assembled again
    // here, byte for byte (what the rule said at the site, guards and all).
    for (const auto &[Off, Text] : Rec->Asm) {
      const uint64_t At = Rec->Clone + Off;
      auto Range =
          llvm::find_if(Inserted, [&](const auto &R) { return R.first == At; });
      if (Range == Inserted.end()) {
        P.push_back("cloned kernel '" + K.Name + "': its record gives " +
                    "assembly for " + hex(At) +
                    ", where no inserted code starts");
        continue;
      }
      Expected<std::vector<uint8_t>> Want = (*MC)->assemble(Text);
      ArrayRef<uint8_t> Have = CopyBytes->slice(Range->first - Rec->Clone,
                                                Range->second - Range->first);
      if (!Want) {
        P.push_back("cloned kernel '" + K.Name + "': the assembly its " +
                    "record gives for " + hex(At) +
                    " does not assemble: " + toString(Want.takeError()));
      } else if (ArrayRef<uint8_t>(*Want) != Have) {
        // The first instruction that differs, as a person reads it.
        size_t D = 0;
        while (D < Have.size() && D < Want->size() && Have[D] == (*Want)[D])
          ++D;
        std::string First = "its end";
        code::decodeRange(
            **MC, Have, At, [&](const code::Insn &I, const MCInst &M) {
              if (I.Addr - At <= D && D < I.end() - At)
                First = "'" +
                        StringRef((*MC)->printInst(M, I.Addr)).trim().str() +
                        "' at " + hex(I.Addr);
            });
        P.push_back("cloned kernel '" + K.Name + "': the code inserted at " +
                    hex(At) + " is not the assembly its record gives (" +
                    std::to_string(Want->size()) + " bytes); it differs at " +
                    First);
      }
    }
    // The copy's hazards the original has not, from the copy's bytes: what
    // was inserted (bodies, counters, long jumps) and what took an
    // instruction's place.
    if (!Inserted.empty() || !FallThrough.empty() || !Relaxed.empty()) {
      // The copy as the proof read it.
      const code::FunctionCFG &CG = Proof.CopyCFG;
      ArrayRef<MCInst> CopyDecoded = Proof.CopyDecoded;
      if (Based)
        verifyBasedRegisters(**MC, K, G, CG, CopyDecoded, Based->first,
                             Based->second, Wave32, P);
      for (const code::NewHazard &NH :
           code::newHazards(**MC, code::HazardRules::of(**MC, R.Target, Wave32),
                            code::FunctionKind::Kernel, G, Decoded, CG,
                            CopyDecoded, Proof.InsnAddr, Replaced))
        P.push_back("cloned kernel '" + K.Name + "': hazard: " + NH.Message);
    }
    for (size_t I = 0; I < G.Insns.size(); ++I) {
      uint64_t Off = G.Insns[I].Addr - Rec->Code;
      std::optional<uint64_t> Mapped = Rec->cloneOffset(Off);
      uint64_t Actual = Proof.InsnAddr[I] - Rec->Clone;
      // Where control lands: inserted code right before counts.
      bool Lands = Mapped == Actual;
      for (auto [B, E] : Rec->Inserted)
        Lands |= Mapped == B && E == Actual;
      if (!Lands) {
        P.push_back("cloned kernel '" + K.Name + "': its record maps offset " +
                    hex(Off) + " to " +
                    (Mapped ? hex(*Mapped) : std::string("nothing")) +
                    ", but the copy of that instruction is at " + hex(Actual));
        break;
      }
    }
  }
}
