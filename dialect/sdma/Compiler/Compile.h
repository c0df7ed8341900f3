//===- Compile.h - one entry point from schedule text to artifacts -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The compile library, as CIRCT's lib/Firtool serves firtool: everything
// between a schedule's text and what the runtime loads, behind one call.
//
//   sdma::CompileOptions options;
//   options.ranks = 8;
//   options.variants = {"b2b"};
//   sdma::Artifacts out = sdma::compile(text, options);
//   if (!out.ok) ... out.error, out.diagnostics ...
//   out.ldstProgram          // the load/store kernel (sdma-to-hip)
//   out.variants[0].plan     // the DMA plan (sdma-to-plan)
//   out.variants[0].packets  // the AMD SDMA packet plan, where asked for
//
// The stages: parse (after a nesting guard), sdma-unroll (binding the rank
// count and, for a rooted schedule, the root), the verifier's proof
// (ScheduleVerifier), the load/store kernel from the flat schedule, then
// per DMA variant the rest of the sdma-lower-dma pipeline on the proved
// flat schedule (it is unrolled and proved once, whatever the variants),
// the plan and, where asked for, convert-sdma-to-sdmapkt and the packet
// encoding. compileProgram stops after the load/store kernel:
//
//   sdma::ProgramOptions options;
//   options.ranks = 8;
//   options.root = 3;            // broadcast from rank 3 (sdma.root)
//   sdma::Artifacts out = sdma::compileProgram(text, options);
//   out.ldstProgram              // the only output; out.variants is empty
//
// The header holds no MLIR type: sdma-run, sdma-fuzz, the tests and the C
// and Python APIs call it alike; sdma-opt and sdma-translate stay the
// MLIR-native tools for one stage at a time.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_COMPILER_COMPILE_H
#define SDMA_COMPILER_COMPILE_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdma {

/// What every compile binds and how it reports: the options of
/// compileProgram, and the front of CompileOptions.
struct ProgramOptions {
  /// The rank count; unset: the schedule's own fixed count (a schedule that
  /// leaves it open, ranks(%R), then fails with Artifacts::ranksOpen).
  std::optional<int64_t> ranks;
  /// The root of a rooted schedule (`implements ... root N`), bound by
  /// sdma-unroll's root option before anything is evaluated: `sdma.root`
  /// is this rank and the proof checks the collective rooted here. Unset:
  /// the declared N. Outside [0, ranks), or for a schedule that declares
  /// no root, the compile fails with a diagnostic saying so.
  std::optional<int64_t> root;
  /// The ranks per node of a hierarchical schedule (sdma.local_ranks),
  /// bound by sdma-unroll local-ranks=G. Set, the output is the node plan
  /// (Artifacts::nodePlan) instead of the load/store program: each node's
  /// local phases are schedules of G ranks, compiled on their own.
  std::optional<int64_t> localRanks;
  /// The local experts per rank and the major alignment of an MoE schedule
  /// (sdma.experts, expert-major offsets), bound by sdma-unroll experts=E
  /// major-align=A. Unset: the schedule's own.
  std::optional<int64_t> experts, majorAlign;
  /// sdma-unroll's op budget; 0: the pipeline's default.
  int64_t maxOps = 0;
  /// The name diagnostics give the input ("schedule.mlir").
  std::string bufferName = "<schedule>";
  /// Receives each diagnostic (error, warning, remark) as it happens,
  /// formatted as MLIR's tools print them; unset: they are collected in
  /// Artifacts::diagnostics.
  std::function<void(std::string_view)> diagnostics;
  /// Receives a short line before each stage ("compiling variant b2b").
  std::function<void(const std::string &)> progress;
};

struct CompileOptions : ProgramOptions {
  /// DMA variants to compile (pcpy, bcst, swap, b2b), in order; the first
  /// is the primary.
  std::vector<std::string> variants{"pcpy"};
  enum class VariantPolicy {
    /// Every variant must compile; a failure is an error.
    Each,
    /// The first variant that compiles; the others before it are skipped.
    FirstThatCompiles,
    /// Every variant that compiles.
    AllThatCompile,
  };
  /// Skipped variants are listed in Artifacts::skipped with the first line
  /// of their first error (their diagnostics are not reported).
  VariantPolicy policy = VariantPolicy::Each;
  /// sdma-lower-dma's options.
  bool prelaunch = false;
  int64_t engines = 0;
  /// Emit the load/store kernel.
  bool ldst = true;
  /// Lower to AMD SDMA packets: none, the primary variant, or every one.
  enum class Packets { None, Primary, All };
  Packets packets = Packets::None;
  std::string packetCompletion = "atomic";
  /// convert-sdma-to-sdmapkt's target (sdmaTargets()); empty: its default.
  std::string sdmaTarget;
  /// convert-sdma-to-sdmapkt's max-chunk-bytes; 0: the target's default
  /// (64 MiB or one packet's limit, whichever is less).
  int64_t maxChunkBytes = 0;
  /// convert-sdma-to-sdmapkt's max-packet-bytes; 0: the target's limit.
  int64_t maxPacketBytes = 0;
  bool packetTimestamps = false;
  /// The count tables' contents at the start, where the host knows them
  /// (sdma-run --counts): a schedule that reads counts at run time
  /// (sdma.copyv) then gets DMA variants too, built for these counts
  /// (sdma-resolve-counts); Artifacts::resolvedCounts holds what the
  /// tables hold at the end. By buffer name: [rank][entry].
  std::map<std::string, std::vector<std::vector<int64_t>>> countTables;
  /// For tests: this variant's lowering starts with an sdma-unroll of the
  /// source with a budget of one op, so it fails as any failing pass would.
  std::string failVariantForTesting;
};

/// One DMA variant's output.
struct VariantArtifacts {
  std::string variant;
  std::string plan;    // sdma.plan JSON
  std::string packets; // sdma.packets JSON, or empty
  /// Engine queues and commands of the plan.
  size_t queues = 0, commands = 0;
};

struct SkippedVariant {
  std::string variant, reason;
};

struct Artifacts {
  bool ok = false;
  /// Why it failed in one line (without a tool prefix). Where diagnostics
  /// say more, `diagnosed` is set.
  std::string error;
  bool diagnosed = false;
  /// It failed because the schedule leaves its rank count open and
  /// CompileOptions::ranks is unset.
  bool ranksOpen = false;
  /// The diagnostics, when CompileOptions::diagnostics is unset.
  std::string diagnostics;
  /// The schedule's symbol name and rank count.
  std::string schedule;
  int64_t ranks = 0;
  /// What the verifier proved, in one line; whether the schedule declares
  /// the collective it implements (else its outputs are unchecked).
  std::string proof;
  bool declaresCollective = false;
  /// The schedule reads counts at run time (sdma.copyv): the load/store
  /// program is its only output; every DMA variant is skipped.
  bool runtimeCounts = false;
  /// With CompileOptions::countTables: every count table's contents at the
  /// end (the host writes them: the DMA variants do not move counts).
  std::map<std::string, std::vector<std::vector<int64_t>>> resolvedCounts;
  /// The schedule reduces (sdma.reduce): DMA engines cannot add, so the
  /// load/store program is its only output; `reduction` is the operator
  /// the proof found ("sum"; empty when nothing is combined).
  bool needsCompute = false;
  std::string reduction;
  /// The load/store program (CompileOptions::ldst).
  std::string ldstProgram;
  /// The node plan (sdma.node-plan JSON), with ProgramOptions::localRanks.
  std::string nodePlan;
  std::vector<VariantArtifacts> variants;
  std::vector<SkippedVariant> skipped;
};

/// The DMA variants, in the order the cost model tries them.
std::vector<std::string> dmaVariants();

/// The SDMA target profiles packets can be built for, the default first.
std::vector<std::string> sdmaTargets();

/// A compiler that keeps its MLIR context between compiles (the fuzzer and
/// the communicator compile many schedules). Not thread-safe.
class Compiler {
public:
  /// `threading`: MLIR's pass-manager threads.
  explicit Compiler(bool threading = true);
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  Artifacts compile(std::string_view scheduleText,
                    const CompileOptions &options);
  /// The load/store program only (Artifacts::ldstProgram, with the proof
  /// and what the schedule is): parse, unroll, prove, translate; no DMA
  /// variant, plan or packets.
  Artifacts compileProgram(std::string_view scheduleText,
                           const ProgramOptions &options);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Compiles with a fresh Compiler.
Artifacts compile(std::string_view scheduleText, const CompileOptions &options);
Artifacts compileProgram(std::string_view scheduleText,
                         const ProgramOptions &options);

} // namespace sdma

#endif // SDMA_COMPILER_COMPILE_H
