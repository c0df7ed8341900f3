//===- Communicator.h - one process per rank, the caller's buffers -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A Communicator is one rank of a job of processes (one per GPU, as
// torchrun and mpirun start them). The ranks meet through the Bootstrap
// (a UniqueId handed around by the job), then:
//
//   - share memory: each rank allocates a symmetric heap that every other
//     rank maps (CUDA IPC handles on a GPU, POSIX shared memory on the CPU
//     device), and can register memory it already has (cudaMalloc'd
//     tensors). memAlloc and registerMemory are collective: every rank calls
//     them in the same order, so a buffer has the same offset in every
//     rank's heap or registration, and a peer's copy of a local pointer is
//     found without asking;
//   - run collectives and user schedules on the caller's buffers and
//     stream: a launch builds the kernel's table of every rank's pointers
//     on the host and enqueues one kernel, nothing else -- no host copy, no
//     synchronisation, capturable in a CUDA graph (the kernel keeps its
//     run number in device memory, SdmaTable::epochs);
//   - check what it can: the first call with a given signature (operation,
//     bytes, type, root, buffers) is compared across ranks once (checkCalls),
//     every peer's buffer is bounds-checked before a launch, a schedule
//     loaded by a different text on one rank is an error on every rank, and
//     a rank that never signals is named in the timeout error.
//
// Rooted collectives compile the built-in schedule for each root used
// (the program and its flags are the root's own).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_COMMUNICATOR_H
#define SDMA_RUNTIME_COMMUNICATOR_H

#include "sdma/runtime/Bootstrap.h"
#include "sdma/runtime/LdstProgram.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace sdma::rt {

/// Element types, numbered as ncclDataType_t.
enum class DataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
};
/// Bytes per element; 0 for a value outside the enum.
size_t dataTypeBytes(DataType type);
const char *dataTypeName(DataType type);

struct CommOptions {
  /// "cpu", "cuda" or "hip"; "": $SDMA_DEVICE, else "cuda".
  std::string device;
  /// The CUDA device; -1: the calling thread's current one (as NCCL), else
  /// $LOCAL_RANK modulo the device count, else 0.
  int deviceOrdinal = -1;
  /// Each rank's symmetric heap (0: $SDMA_HEAP_BYTES, else 256 MiB on a
  /// GPU and 16 MiB on the CPU device).
  size_t heapBytes = 0;
  /// Joining, the setup's exchanges and every wait in a kernel (0:
  /// $SDMA_TIMEOUT_MS, else 30 s).
  uint64_t timeoutMs = 0;
  /// Compare the first call of each signature across ranks (a host
  /// exchange, once per signature); false skips it ($SDMA_CHECK_CALLS=0).
  bool checkCalls = true;
  /// Kernel and schedule caches ("": the default, $SDMA_CACHE_DIR).
  std::string cacheDirectory;
  /// libsdma-compiler.so ("": ScheduleCompiler::load's search).
  std::string compilerLibrary;
  /// Precompiled programs, <schedule>-<ranks>.hip, for a runtime without
  /// the compiler library ("": $SDMA_PROGRAM_DIR).
  std::string programDirectory;
  /// The CPU device: emulated GPU threads per rank.
  int cpuThreads = 4;
  /// All-reduce: messages of at least this many bytes whose element count
  /// the rank count divides run two-shot (reduce-scatter + all-gather),
  /// smaller ones one-shot (0: $SDMA_TWO_SHOT_BYTES, else 256 KiB).
  size_t twoShotBytes = 0;
};

/// Reduction operators, numbered as ncclRedOp_t.
enum class ReduceOp : int { Sum = 0, Prod = 1, Max = 2, Min = 3 };
/// "sum", "prod", "max", "min"; nullptr outside the enum.
const char *reduceOpName(ReduceOp op);

/// The reducing collectives, with NCCL's argument meanings.
enum class CommReduction { AllReduce, ReduceScatter, Reduce };
/// "AllReduce", "ReduceScatter", "Reduce".
const char *commReductionName(CommReduction kind);

/// A built-in collective, with NCCL's argument meanings.
enum class CommOp { AllGather, AlltoAll, Broadcast, Scatter, Gather };

/// How allToAllv lays out rows (schedules/all_to_allv_*.mlir).
enum class AlltoAllvLayout {
  /// One slot of `capacity` rows per peer in both buffers: slot p of the
  /// send buffer goes to rank p, slot r of the receive buffer comes from
  /// rank r (MoE dispatch into per-source regions).
  Slots,
  /// Rows packed by peer, as torch's all_to_all_single with split sizes:
  /// rank r's rows for rank p start at the sum of its counts before p,
  /// and the receiver's rows from r at the sum of what ranks before r
  /// sent it. Each count is at most `capacity`.
  Packed,
};
const char *commOpName(CommOp op);

class CommDevice;
class CommKernel;
class ScheduleCompiler;

class Communicator {
public:
  /// Joins the job as `rank` of `ranks`, sets up the device and maps every
  /// rank's heap. nullptr with `error` (a missing rank, a refused id, no
  /// GPU, a heap size that differs between ranks, ...).
  static std::unique_ptr<Communicator> create(const UniqueId &id, int rank,
                                              int ranks,
                                              const CommOptions &options,
                                              std::string &error);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  /// "cpu" or "cuda".
  std::string deviceName() const;
  /// The options after defaults and environment.
  const CommOptions &options() const { return options_; }
  Bootstrap &bootstrap() { return *bootstrap_; }

  /// Collective: `bytes` of this rank's symmetric heap (device memory),
  /// zeroed at the communicator's creation, 256-byte aligned. Every rank
  /// must ask for the same size in the same order (checked).
  bool memAlloc(size_t bytes, void *&ptr, std::string &error);
  /// Collective: returns memAlloc'd memory to the heap.
  bool memFree(void *ptr, std::string &error);
  /// Collective: makes [ptr, ptr + bytes) of this rank's memory usable as a
  /// symmetric buffer (its allocation is exported to every peer). Sizes may
  /// differ between ranks; launches check every peer's bounds. `handle`
  /// names the registration for deregisterMemory.
  bool registerMemory(void *ptr, size_t bytes, int &handle, std::string &error);
  /// Collective.
  bool deregisterMemory(int handle, std::string &error);

  /// NCCL's collectives: `count` elements of `type` per rank (AllGather and
  /// Gather: sent; Scatter: received; AlltoAll: per peer; Broadcast: the
  /// message). `stream` is a CUstream / cudaStream_t (nullptr: the legacy
  /// default stream); the CPU device runs the call before returning.
  bool collective(CommOp op, const void *send, void *recv, size_t count,
                  DataType type, int root, void *stream, std::string &error);

  /// NCCL's reductions of `count` elements of `type` with `op`: AllReduce
  /// (count: the message; in place when send == recv), ReduceScatter
  /// (count: received per rank; send holds ranks() * count; in place, as
  /// NCCL, when recv == send + rank() * count), Reduce (to `root`; recv matters
  /// on the root only). Float16 and Bfloat16 accumulate in fp32 and round once
  /// per step; integers wrap.
  bool reduce(CommReduction kind, const void *send, void *recv, size_t count,
              DataType type, ReduceOp op, int root, void *stream,
              std::string &error);

  /// All-to-allv with counts in device memory (MoE dispatch and combine):
  /// this rank sends sendCounts[p] rows of `rowBytes` bytes to rank p. The
  /// counts (`ranks()` int64 values in device memory) are read by the
  /// kernel only: no host synchronisation, CUDA-graph capturable. Both
  /// buffers hold ranks() * capacity rows (symmetric memory); recvCounts
  /// (device memory, may be null) receives the counts that arrived. A
  /// count above `capacity` (or negative) moves nothing for that peer and
  /// is reported by asyncError() with the ranks named.
  bool allToAllv(const void *send, const int64_t *sendCounts, void *recv,
                 int64_t *recvCounts, size_t capacity, size_t rowBytes,
                 AlltoAllvLayout layout, void *stream, std::string &error);

  /// A user schedule, compiled for this communicator's rank count.
  struct Schedule {
    std::string name;
    std::vector<Buffer> buffers; // each: name, chunks
    int instance = -1;
  };
  /// Collective: compiles `textOrPath` (schedule text, a .mlir file or a
  /// precompiled .hip program) for `ranks()` ranks. Every rank must load
  /// the same text (checked).
  bool loadSchedule(const std::string &textOrPath, Schedule &schedule,
                    std::string &error);
  /// One run of `schedule` with `buffers[b]` this rank's buffer b
  /// (symmetric) and chunks of `chunkBytes`.
  bool launch(const Schedule &schedule, const std::vector<void *> &buffers,
              size_t chunkBytes, void *stream, std::string &error);

  /// Writes every built-in program for `ranks` ranks (each root of the
  /// rooted ones) as <name>-<ranks>.hip into `directory`, and the program
  /// of each schedule file in `schedules` as <programName(path)>-<ranks>.hip
  /// (one load of the compiler library for all): what a runtime without
  /// the compiler library loads (CommOptions::programDirectory), the
  /// latter by loadSchedule of that path.
  static bool precompile(const std::string &directory, int ranks,
                         const std::vector<std::string> &schedules,
                         const CommOptions &options, std::string &error);
  /// The name of a schedule file's precompiled program: the file name
  /// without its directories and ".mlir" (/x/all_gather_ring.mlir:
  /// all_gather_ring).
  static std::string programName(const std::string &path);

  /// False with `error` once a launched kernel has failed (a wait that
  /// timed out: the rank that did not signal named). Reads host memory
  /// the kernel writes: no synchronisation. A failed communicator stays
  /// failed; later launches are refused.
  bool asyncError(std::string &error);

  struct Share;

private:
  struct Region {
    char *local = nullptr;
    size_t bytes = 0;
    std::vector<char *> peer;      // [rank]: the region's base there
    std::vector<size_t> peerBytes; // [rank]
    bool live = true;
  };
  struct Instance {
    LdstProgram program;
    std::unique_ptr<CommKernel> kernel;
    size_t flagsOffset = 0, syncOffset = 0, epochsOffset = 0, arriveOffset = 0,
           errorOffset = 0;
    /// Count tables of built-in all-to-allv: send then receive, ranks()
    /// int64 each (0: none).
    size_t countsOffset = 0;
    /// Per rank: the (rank, buffer) pairs its ops touch.
    std::vector<std::set<std::pair<int, int>>> touched;
    /// Per buffer: does a rank's op reach another rank's copy (then every
    /// rank's must be at the same place, checked with the call)? A buffer
    /// only its own rank touches may be anywhere, or null where unused
    /// (NCCL: a non-root's recvbuff of Reduce).
    std::vector<char> remote;
  };
  Communicator() = default;
  bool init(std::string &error);
  /// All-gathers every rank's `mine` and maps each peer's memory into
  /// `region` (`local` is this rank's); a failure on any rank fails all.
  bool exchangeShares(char *local, const Share &mine, const std::string &what,
                      Region &region, std::string &error);
  /// All-gathers `mine` (equal size everywhere) and fails on every rank if
  /// any rank's differs, with `describe(rank's blob)` in the message.
  bool agree(const std::string &mine, const std::string &what,
             std::string &error);
  /// The region and offset holding [ptr, ptr + bytes) here; false with
  /// `error` naming `what`.
  bool locate(const void *ptr, size_t bytes, const char *what, int &region,
              size_t &offset, std::string &error) const;
  /// The instance of built-in `schedule` for `root` (compiled or loaded on
  /// first use; its flags come from the control area).
  /// `arithmetic` (reductions): the element type and operator the kernel
  /// computes with, in place of the schedule's f32 and sum.
  struct Arithmetic {
    DataType type;
    ReduceOp op;
  };
  bool instanceFor(const std::string &schedule, int root, int &index,
                   std::string &error, const Arithmetic *arithmetic = nullptr);
  /// A symmetric staging buffer of at least `bytes` (in-place all-reduce).
  bool stageBuffer(size_t bytes, void *&stage, std::string &error);
  bool addInstance(LdstProgram program, int &index, std::string &error);
  /// Builds the table and launches; `buffers` are this rank's pointers.
  /// Rank r's copy of buffer b is at its region's offset plus
  /// r * stride[b] (0 where absent; in-place AllGather's input is rank r's
  /// slot of the output).
  /// `rowBytes`: sdma.copyv's row (SdmaTable::rowBytes; 0: a chunk).
  /// `counts`: SdmaTable::countsIn then countsOut (the kernel copies the
  /// caller's counts in and the receive counts out); empty: none.
  bool run(int instance, const std::vector<const void *> &buffers,
           size_t chunkBytes, void *stream, const std::string &signature,
           std::string &error, std::vector<size_t> stride = {},
           size_t rowBytes = 0, std::vector<const void *> counts = {});
  bool checkSignature(const std::string &signature, std::string &error);
  /// Fills `error` if a kernel has reported a failure.
  void readKernelError(std::string &error);
  /// The program of `text` for this rank count: compiled through the
  /// compiler library, else <name>-<ranks>.hip in the program directory.
  bool compileProgram(const std::string &text, const std::string &name,
                      LdstProgram &program, std::string &error);

  int rank_ = 0, ranks_ = 0;
  CommOptions options_;
  UniqueId id_{};
  std::unique_ptr<Bootstrap> bootstrap_;
  std::unique_ptr<CommDevice> device_;
  std::vector<Region> regions_; // 0: the heap
  size_t controlBytes_ = 0, controlUsed_ = 0;
  std::map<size_t, size_t> heapLive_; // offset -> bytes
  std::map<size_t, size_t> heapFree_; // offset -> bytes
  std::vector<Instance> instances_;
  std::map<std::string, int> instanceIndex_; // "schedule@root"
  std::set<std::string> checkedSignatures_;
  void *stage_ = nullptr;
  size_t stageBytes_ = 0;
  std::string failed_;
  std::unique_ptr<ScheduleCompiler> compiler_;
  std::string compilerError_;
  bool compilerTried_ = false;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_COMMUNICATOR_H
