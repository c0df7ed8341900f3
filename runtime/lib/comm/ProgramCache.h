//===- ProgramCache.h - the communicator's loaded schedules -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every schedule a communicator runs is an Instance: its load/store program
// (compiled for the communicator's rank count by the compiler library, or
// read from a directory of precompiled programs where there is none), its
// kernel loaded on the device, and its words of the control area (flags,
// the rank-barrier counter, run counters, arrival counters, the kernel's
// error record, count tables), zeroed once and never reused. The built-in
// collectives are embedded schedules (schedules/), instantiated per root
// and per reduction type and operator on first use.
//
// The control words belong to a program, not to a kernel: the variants of
// one reduction schedule and root (one kernel per type and operator) are
// the same program and share them, as calls on a communicator run one
// after another (every call is ordered on the caller's streams, as NCCL's
// are). So a communicator holds at most kMaxPrograms programs (built-ins:
// about 4 per rank, one per root of a rooted collective) and any number
// of their variants: at 8 ranks, sdmaReduce's 320 (root, type, operator)
// triples are 8 programs.
//
// Adding an instance is collective: every rank adds the same one, and a
// rank that cannot (no compiler, a kernel that does not load, a full
// control area) makes the step fail on every rank, with nothing added
// anywhere, so the communicator stays usable.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_PROGRAMCACHE_H
#define SDMA_RUNTIME_LIB_COMM_PROGRAMCACHE_H

#include "comm/Agreement.h"
#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"
#include "sdma/runtime/Communicator.h"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace sdma::rt {

class ScheduleCompiler;

/// What a built-in is instantiated for, bound by the compiler before it
/// unrolls the schedule: the root of a rooted collective, and the local
/// experts per rank and the major alignment of an MoE one (0: none).
struct ProgramParams {
  int root = 0;
  int experts = 0, majorAlign = 0;
  /// `schedule` with its parameters: "broadcast_root3",
  /// "all_to_allv_2d_e4_a16" (a precompiled program's file stem).
  std::string name(const std::string &schedule) const;
};

/// One loaded schedule and its place in the control area (offsets from
/// the heap's base, the same on every rank), shared with the other
/// variants of its program.
struct Instance {
  LdstProgram program;
  std::unique_ptr<CommKernel> kernel;
  /// The program's error record (kRecordWords words at this index).
  int record = 0;
  size_t flagsOffset = 0, syncOffset = 0, epochsOffset = 0, arriveOffset = 0,
         errorOffset = 0, tagsOffset = 0;
  size_t countsOffset = 0; // 0: no count tables (not an all-to-allv)
  /// [rank]: the (rank, buffer) pairs that rank's ops touch.
  std::vector<std::set<std::pair<int, int>>> touched;
  /// [buffer]: 1 if some rank touches it on another rank.
  std::vector<char> remote;
  /// What the DMA plan is compiled from: the schedule's text (empty for a
  /// program loaded as a program), its name and root.
  std::string text, name;
  std::optional<int> root;
  /// The DMA path (DmaProgram.h), added on the first call that takes it
  /// (ProgramCache::addDma): the program, its kernel and its control words
  /// (plan.flags flags, a run counter, the job-barrier words: its own, so
  /// the load/store kernel's run-counted flags stay in step when one
  /// program's calls alternate paths). Once tried and refused, why.
  std::shared_ptr<const DmaProgram> dma;
  std::unique_ptr<CommKernel> dmaKernel;
  size_t dmaFlagsOffset = 0, dmaEpochsOffset = 0, dmaArriveOffset = 0;
  bool dmaTried = false;
  Error dmaRefused;
};

class ProgramCache {
public:
  ProgramCache(int rank, int ranks, const CommOptions &options,
               CommDevice &device, Agreement &agreement, size_t controlBytes);
  ~ProgramCache();

  /// The name of built-in `schedule` instantiated for `params` and
  /// `arithmetic` (null: a data-movement collective).
  static std::string key(const std::string &schedule,
                         const ProgramParams &params,
                         const Arithmetic *arithmetic);
  /// The instance `key` names, or -1 if it was never added.
  int find(const std::string &key) const;

  /// Adds built-in `schedule` for `params` (and `arithmetic`) as `key`.
  /// Collective.
  bool addBuiltin(const std::string &schedule, const ProgramParams &params,
                  const Arithmetic *arithmetic, int &index, Error &error);
  /// Adds a user's schedule: the text of a schedule or of a program
  /// (`name` in messages; a path finds a precompiled program by its
  /// file's name). Collective; every rank must pass the same text. With
  /// `arithmetic`, a program that reduces computes in it (the variants
  /// share one program's control words).
  bool addSchedule(const std::string &text, const std::string &name,
                   const Arithmetic *arithmetic, int &index, Error &error);

  const Instance &instance(int index) const { return instances_[index]; }

  /// Why instance `index` can never take the DMA path (it reduces, reads
  /// counts at run time, or was loaded as a load/store program), or "".
  std::string dmaInapplicable(int index) const;
  /// Adds the DMA path of instance `index` (its plan compiled as
  /// options.dmaVariant, or read from the program directory as
  /// NAME-R.VARIANT.plan.json), once. Collective: every rank adds it or
  /// none does, and a refusal is remembered everywhere (Instance::
  /// dmaRefused; false with it in `error` now and at every later call).
  bool addDma(int index, Error &error);
  size_t size() const { return instances_.size(); }
  /// The programs (error records) in use, and an instance of record `r`.
  /// (Safe while another thread adds programs: the watchdog's reads. An
  /// instance stays where it is: instances_ is a deque.)
  size_t records() const {
    std::lock_guard<std::mutex> lock(recordsMutex_);
    return recordOwner_.size();
  }
  /// The control-area offset of every program's polled error words (a
  /// copy, safe while another thread adds programs: an abort's).
  std::vector<size_t> errorOffsets() const;
  const Instance &recordOwner(size_t r) const {
    std::lock_guard<std::mutex> lock(recordsMutex_);
    return instances_[recordOwner_[r]];
  }
  /// The DMA program of record `r`'s instance, or null (a copy of the
  /// pointer, safe while another thread adds it).
  std::shared_ptr<const DmaProgram> dmaOf(size_t r) const {
    std::lock_guard<std::mutex> lock(recordsMutex_);
    return instances_[recordOwner_[r]].dma;
  }

  /// Compiles every built-in (each root of the rooted ones; the MoE ones
  /// for each of `experts` at `majorAlign`, none if it is empty) and each
  /// of `schedules` (paths) for `ranks` into `directory` (name-R.hip), for
  /// jobs without the compiler library.
  static bool precompile(const std::string &directory, int ranks,
                         const std::vector<std::string> &schedules,
                         const CommOptions &options, Error &error,
                         const std::vector<int> &experts = {},
                         int majorAlign = 1);
  /// The name a schedule's precompiled program has: the file's stem.
  static std::string programName(const std::string &path);

private:
  /// The program of `text` for this rank count (with `params` where
  /// given): compiled, or precompiled by `name` where there is no compiler.
  bool compile(const std::string &text, const std::string &name,
               std::optional<ProgramParams> params, LdstProgram &program,
               Error &error);
  /// The compiler library, loaded on first use (null: compilerError_).
  ScheduleCompiler *compiler();
  /// The DMA plan of instance `instance`'s schedule, and with kernel
  /// submission its SDMA packets for the device's target: compiled, or
  /// read from the program directory where there is no compiler
  /// (NAME-R.VARIANT.plan.json, NAME-R.VARIANT.TARGET.packets.json).
  bool compilePlan(const Instance &instance, Plan &plan,
                   std::optional<PacketPlan> &packets, Error &error);
  /// Reserves the control area (or shares that of program `programKey`'s
  /// earlier variant) and loads the kernel of `program` (or takes
  /// `refused`, this rank's reason it has none), then agrees with every
  /// rank; on failure anywhere, adds nothing.
  bool add(std::optional<LdstProgram> program, const Error &refused,
           const std::string &what, const std::string &programKey, int &index,
           Error &error);
  /// Sets `instance`'s control words: a new record and fresh words, or
  /// those of the earlier variant of `programKey`. False if full.
  bool placeControl(const LdstProgram &program, const std::string &programKey,
                    Instance &instance, Error &error);
  bool reserve(size_t bytes, size_t &offset);

  int rank_, ranks_;
  const CommOptions &options_;
  CommDevice &device_;
  Agreement &agreement_;
  size_t controlBytes_, controlUsed_ = 0;
  std::deque<Instance> instances_;
  std::map<std::string, int> index_;
  /// [record]: the first instance of that program; program key -> record.
  std::vector<int> recordOwner_;
  std::map<std::string, int> programRecord_;
  std::mutex compilerMutex_;
  /// Guards instances_ and recordOwner_ against errorOffsets().
  mutable std::mutex recordsMutex_;
  std::unique_ptr<ScheduleCompiler> compiler_;
  std::string compilerError_;
  bool compilerTried_ = false;
};

/// Makes a reduction program (compiled for f32 and sum) compute with
/// `arithmetic`: the kernel's SDMA_REDUCE_TYPE/OP (and PreMulSum's scalar)
/// and the metadata's buffer types and operator. The schedule's proof
/// holds for any one operator and type (the contribution sets do not
/// depend on them).
bool setReduceArithmetic(LdstProgram &program, const Arithmetic &arithmetic,
                         Error &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_PROGRAMCACHE_H
