//===- ScheduleCompiler.h - compile schedules from the runtime -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The runtime holds no MLIR. It reaches the compiler the way CUDA reaches
// NVRTC: it dlopen()s libsdma-compiler.so (the compile library with MLIR
// linked statically and its symbols hidden; C entry in
// dialect/sdma/Compiler/CApi.h) and caches what it returns on disk, keyed
// by the schedule text, the options and the library file itself. Without
// the library, precompiled artifacts (CompiledSchedule::parse of files)
// still serve.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_SCHEDULECOMPILER_H
#define SDMA_RUNTIME_SCHEDULECOMPILER_H

#include "sdma/runtime/Executor.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sdma::rt {

/// What to compile (sdma::CompileOptions, as the C entry takes it).
struct ScheduleCompileOptions {
  std::optional<int64_t> ranks;
  /// The root of a rooted schedule (`implements ... root N`, written with
  /// `sdma.root`); unset: N. See ProgramCompileOptions::root.
  std::optional<int64_t> root;
  std::vector<std::string> variants{"pcpy"};
  /// "each", "first" or "all" (CompileOptions::VariantPolicy).
  std::string policy = "each";
  bool prelaunch = false;
  int64_t engines = 0;
  bool ldst = true;
  /// "none", "primary" or "all".
  std::string packets = "none";
  std::string packetCompletion = "atomic";
  /// The SDMA target profile packets are built for (gfx9, gfx942, gfx950);
  /// empty: the compiler's default (gfx9).
  std::string sdmaTarget;
  /// The name diagnostics give the schedule.
  std::string name = "<schedule>";

  /// The options as the C entry's JSON.
  std::string toJson() const;
};

/// What to compile into a load/store program (sdma::ProgramOptions): the
/// schedule's parameters, bound in the compiler before it unrolls the
/// schedule, never by editing its text.
struct ProgramCompileOptions {
  /// The rank count; unset: the schedule's own (an open one is then an
  /// error, ScheduleCompileResult::ranksOpen).
  std::optional<int64_t> ranks;
  /// The root of a rooted schedule (`implements broadcast(...) root 0`,
  /// its root named by `sdma.root`): the program is the collective rooted
  /// at this rank, and the proof checks it so. Unset: the declared root.
  /// Outside [0, ranks), or for a schedule without a root, the result is
  /// ok = false with a diagnostic saying so.
  std::optional<int64_t> root;
  /// The ranks per node of a hierarchical schedule: the result is then its
  /// node plan (ScheduleCompileResult::nodePlan), not a program.
  std::optional<int64_t> localRanks;
  /// The local experts per rank and major alignment of an MoE schedule
  /// (sdma.experts; all_to_allv_2d's padding).
  std::optional<int64_t> experts, majorAlign;
  /// The name diagnostics give the schedule.
  std::string name = "<schedule>";

  /// The options as the program entry's JSON.
  std::string toJson() const;
};

/// What came back (sdma::Artifacts).
struct ScheduleCompileResult {
  bool ok = false;
  std::string error, diagnostics;
  bool ranksOpen = false;
  std::string schedule, proof;
  int64_t ranks = 0;
  bool declaresCollective = false;
  std::string ldst;
  /// The node plan (ProgramCompileOptions::localRanks), else empty.
  std::string nodePlan;
  struct Variant {
    std::string variant, plan, packets;
  };
  std::vector<Variant> variants;
  std::vector<std::pair<std::string, std::string>> skipped; // variant, reason
  /// Served from the disk cache; the entry found was corrupt and rebuilt.
  bool cacheHit = false, cacheWasCorrupt = false;

  /// Variant `index` loaded as the runtime loads files.
  std::optional<CompiledSchedule> load(size_t index, std::string &error) const;
};

class ScheduleCompiler {
public:
  /// Loads the compiler library: `path`, else $SDMA_COMPILER_LIBRARY, else
  /// libsdma-compiler.so on the loader's search path, else beside the
  /// executable's ../lib. nullptr with "no compiler: ..." if none loads or
  /// its ABI version differs. `cacheDirectory` as for kernels ("": the
  /// default; SDMA_CACHE_DIR).
  static std::unique_ptr<ScheduleCompiler>
  load(std::string &error, const std::string &path = "",
       std::string cacheDirectory = "");
  ~ScheduleCompiler();
  ScheduleCompiler(const ScheduleCompiler &) = delete;
  ScheduleCompiler &operator=(const ScheduleCompiler &) = delete;

  /// The library file in use.
  const std::string &libraryPath() const { return path_; }

  /// Compiles `text`; false with `error` only where the library's answer
  /// cannot be read (a failed compile is a result: ok = false, with the
  /// diagnostics).
  bool compile(const std::string &text, const ScheduleCompileOptions &options,
               ScheduleCompileResult &result, std::string &error) const;
  /// The same with the options as JSON text (the C entry's own).
  bool compileJson(const std::string &text, const std::string &optionsJson,
                   ScheduleCompileResult &result, std::string &error) const;

  /// Compiles `text` to its load/store program only: result.ldst (with the
  /// proof and the schedule's name and ranks); result.variants stays empty,
  /// no DMA plan or packets are built. Errors as compile(); cached the same
  /// way, under keys of their own.
  bool compileProgram(const std::string &text,
                      const ProgramCompileOptions &options,
                      ScheduleCompileResult &result, std::string &error) const;

private:
  using EntryPoint = char *(*)(const char *, size_t, const char *);
  ScheduleCompiler() = default;
  /// Compiles through `entry`, cached under `kind`.
  bool run(EntryPoint entry, const char *kind, const std::string &text,
           const std::string &optionsJson, ScheduleCompileResult &result,
           std::string &error) const;
  void *handle_ = nullptr;
  EntryPoint compile_ = nullptr, compileProgram_ = nullptr;
  void (*free_)(char *) = nullptr;
  std::string path_, identity_, cacheDirectory_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_SCHEDULECOMPILER_H
