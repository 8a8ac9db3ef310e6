//===- hotswap/Pass/PipelineParser.h - Pass names and pipelines -*- C++ -*-===//
//
// The pipeline language, without any concrete pass: a table of textual names
// (passes, `print<analysis>` printers, aliases) and the parser that turns
// `-passes=` text into a PassManager. Grammar (LLVM's, flattened):
//   pipeline := element (',' element)*
//   element  := name | name '<' params '>'
// Errors carry the column of the offending element and never abort. The
// built-in passes are registered by hotswap::PassBuilder (Passes layer).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_PIPELINEPARSER_H
#define HOTSWAP_PASS_PIPELINEPARSER_H

#include "hotswap/Pass/PassManager.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hotswap {

using PassFactory = std::function<llvm::Expected<std::unique_ptr<Pass>>(
    llvm::StringRef Params)>;

/// Sets \p Out to the value of a pass parameter \p Key=\p Value that is a
/// regular expression (only=REGEX), checked: "invalid regular expression
/// 'V' in KEY=: why" when it does not compile (\p Out unchanged).
llvm::Error regexParam(llvm::StringRef Key, llvm::StringRef Value,
                       std::string &Out);

/// The parameters "only=REGEX;FLAG;..." of pass \p Pass: only= (checked by
/// regexParam) into \p Only, each of \p Flags sets its bool. Anything else
/// is "PASS: unknown parameter 'P' (known: only=REGEX, FLAG...)" (without
/// "PASS: " when \p Pass is empty: the parser names registered passes).
llvm::Error
parseOnlyParams(llvm::StringRef Pass, llvm::StringRef Params, std::string &Only,
                llvm::ArrayRef<std::pair<llvm::StringRef, bool *>> Flags = {});

/// A pipeline as parsed: each pass's factory and parameters, aliases
/// expanded, every name and parameter checked. It makes the PassManager of
/// each run (passes keep state per run) without reading the text again.
class PipelinePlan {
public:
  /// A new PassManager with fresh passes.
  llvm::Expected<PassManager> instantiate() const;
  /// Appends fresh passes to \p PM.
  llvm::Error appendTo(PassManager &PM) const;
  size_t size() const { return Steps.size(); }

private:
  friend class PipelineParser;
  struct Step {
    PassFactory Factory;
    std::string Params;
  };
  std::vector<Step> Steps;
};

class PipelineParser {
public:
  /// What a name stands for; --print-passes groups by it.
  enum class Kind { Transform, Check, Analysis, Alias, Custom };

  /// Makes \p Name usable in pipelines (a pass of the embedding program).
  /// Error if the name is taken or not a valid name.
  llvm::Error registerPass(llvm::StringRef Name, llvm::StringRef Description,
                           PassFactory Factory) {
    return add(Kind::Custom, Name, Description, std::move(Factory), "");
  }
  /// `Name` expands to `Pipeline`.
  llvm::Error registerAlias(llvm::StringRef Name, llvm::StringRef Pipeline,
                            llvm::StringRef Description) {
    return add(Kind::Alias, Name, Description, nullptr, Pipeline);
  }
  /// Makes `print<Name>` usable: \p Factory makes a pass that prints an
  /// analysis of the embedding program or plugin (it gets the parameters
  /// written inside `print<Name<...>>`, none so far: reject any).
  llvm::Error registerAnalysisPrinter(llvm::StringRef Name,
                                      llvm::StringRef Description,
                                      PassFactory Factory) {
    return add(Kind::Analysis, Name, Description, std::move(Factory), "");
  }

  /// Who registers names while it is set (a pass plugin: PassPlugin sets
  /// it around the plugin's registration callback): --print-passes lists
  /// them under Origin, each factory is replaced by Wrap(Name, Factory),
  /// and the first registration that fails is kept in FirstError even when
  /// the registrant ignores the Error it got back.
  struct RegistrationScope {
    std::string Origin;
    std::function<PassFactory(llvm::StringRef Name, PassFactory)> Wrap;
    std::string FirstError;
  };
  /// Sets (or, with null, clears) the current scope; returns the previous.
  RegistrationScope *setRegistrationScope(RegistrationScope *S) {
    std::swap(S, Scope);
    return S;
  }

  /// Parses \p Text once (each pass is made once to check its
  /// parameters).
  llvm::Expected<PipelinePlan> parsePipeline(llvm::StringRef Text) const;
  /// Appends the passes of \p Text to \p PM.
  llvm::Error parsePassPipeline(PassManager &PM, llvm::StringRef Text) const;

  /// --print-passes.
  void printPassNames(llvm::raw_ostream &OS) const;

protected:
  /// Built-in transforms and checks (Kind::Transform/Check), and printers of
  /// analyses: \p Name is then the analysis name, used as `print<Name>`, and
  /// \p Factory ignores its (always empty) parameters.
  llvm::Error add(Kind K, llvm::StringRef Name, llvm::StringRef Description,
                  PassFactory Factory, llvm::StringRef Expansion);
  /// What is registered from now on (outside a RegistrationScope) is the
  /// embedding program's, not built in (PassBuilder, after its own).
  void finishBuiltins() { BuiltinsDone = true; }

private:
  struct Entry {
    std::string Name;
    std::string Description;
    Kind K;
    PassFactory Factory;   // everything but aliases
    std::string Expansion; // aliases
    std::string Origin;    // empty: built in; else who registered it
  };
  llvm::Error parseInto(PipelinePlan &Plan, llvm::StringRef Text,
                        llvm::StringRef Whole, size_t Base,
                        unsigned Depth) const;
  std::vector<Entry> Entries;
  llvm::StringMap<size_t> ByName;
  llvm::StringMap<size_t> AnalysisByName;
  RegistrationScope *Scope = nullptr;
  bool BuiltinsDone = false;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_PIPELINEPARSER_H
