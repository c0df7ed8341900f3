//===- Communicator.h - one rank of a job of processes ----------*- C++ -*-===//
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
#include "sdma/runtime/Error.h"
#include "sdma/runtime/LdstProgram.h"

#include <cstdint>
#include <functional>
#include <memory>
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
  /// Point-to-point: a sender's ring in each receiver's heap holds four
  /// chunks of this many bytes (rounded up to 16; 0: $SDMA_P2P_CHUNK_BYTES,
  /// else 256 KiB on a GPU and 16 KiB on the CPU device).
  size_t p2pChunkBytes = 0;
  /// The path a collective takes (docs/c-api.md, "Load/store or DMA"):
  /// "auto" (the CUDA device: the cost model per call; the CPU and HIP
  /// devices: load/store), "ldst" or "dma" (DMA wherever the collective
  /// has a DMA plan: not reductions or all-to-allv). "": $SDMA_PATH, else
  /// "auto".
  std::string path;
  /// The DMA plans' variant: pcpy, b2b, bcst or swap ("":
  /// $SDMA_DMA_VARIANT, else pcpy).
  std::string dmaVariant;
  /// Who submits the DMA path's commands: "host" (the driver's
  /// asynchronous copies, the sync kernel's waits) or "kernel" (AMD's
  /// GPU-initiated SDMA: a kernel writes the plan's SDMA packets into this
  /// rank's engine rings; on the CPU device the same writer on host
  /// threads, its rings read by host-thread engines; not on NVIDIA, whose
  /// copy engines take no user packets). "": $SDMA_DMA_SUBMIT, else
  /// "host".
  std::string dmaSubmit;
  /// With kernel submission: the SDMA target profile the packets are built
  /// for (gfx9, gfx942, gfx950). "": $SDMA_DMA_PACKET_TARGET, else the
  /// device's (its GPU's; gfx942 on the CPU device).
  std::string dmaPacketTarget;
  /// With path "dma": calls whose chunk (bytes per rank) is below this
  /// take the load/store kernel (0: $SDMA_DMA_MIN_BYTES, else none).
  size_t dmaMinBytes = 0;
  /// On a GPU's DMA path, copies a queue issues back to back (no wait or
  /// swap between, none touching another's bytes) go as one batch
  /// (cuMemcpyBatchAsync) where the stream is not being captured; false:
  /// one device copy each ($SDMA_DMA_BATCH=0).
  bool dmaBatch = true;
  /// A one-rank call's copy (the collective is its input) of fewer bytes
  /// than this runs as a copy kernel of the runtime's own, larger ones as
  /// the driver's device copy (cuMemcpyAsync), on devices that have both
  /// (CUDA); 0: always the driver's. -1: $SDMA_COPY_KERNEL_BYTES, else 32
  /// MiB (one H100: the kernel 7.3 us against 8.6 at 16 MiB, 51.9 against
  /// 47.7 at 64 MiB; bench/results/single-rank-kernel-h100.md).
  int64_t copyKernelBytes = -1;
  /// Calls of a schedule planned for it (one phase of copies: all-gather,
  /// all-to-all, broadcast, scatter, gather direct) whose bytes from one
  /// rank to another are at most this run without job barriers, the data
  /// carrying its own flags (docs/c-api.md, "Low-latency calls"); 0: never.
  /// -1: $SDMA_LL_BYTES, else 64 KiB (1 MiB / ranks past 16 ranks). Each
  /// rank's inbox takes 2 x ranks x (2 x this + 16) bytes of device memory.
  /// Every rank must have the same.
  int64_t lowLatencyBytes = -1;
  /// Any memory the device addresses may be a collective's buffer where
  /// the call's path lets no other rank reach it: every buffer of a
  /// low-latency call (peers reach only the communicator's inboxes), a
  /// buffer only its own rank touches, a one-rank call's. A call whose path
  /// needs a buffer that is not symmetric memory fails at once on this
  /// rank with ErrorKind::NotSymmetric (nothing enqueued, no rank asked),
  /// for the caller to stage it and call again (the NCCL drop-in). Off:
  /// every buffer is symmetric memory, else the call is refused on every
  /// rank.
  bool privateBuffers = false;
  /// A call whose arguments match one made before, while no allocation or
  /// registration has been made or gone since, starts that call's launch
  /// as it was (no planning, lookups or table per call); false plans every
  /// call afresh ($SDMA_REPLAY_CALLS=0).
  bool replayCalls = true;
  /// Ranks of one job that share this rank's GPU context (threads of one
  /// process on one GPU) hand each load/store launch to each other and
  /// start it as one launch (runtime/lib/comm/CoLaunch.h): 1 always, 0
  /// never (each rank's kernel alone: on CUDA and HIP they may wait for
  /// each other behind a shared hardware queue until the timeout), -1:
  /// $SDMA_COLAUNCH, else where the device needs it (CUDA, HIP).
  int coLaunch = -1;
  /// How co-launched ranks start their calls (CoLaunch.h): "together"
  /// (every call one launch, made by the last rank to come) or "ordered"
  /// (after a first call together, each rank launches its own kernel, not
  /// before every rank has launched its previous call). "":
  /// $SDMA_COLAUNCH_MODE, else "together". Every rank sharing the context must
  /// have the same.
  std::string coLaunchMode;
  /// A call on the barrier or DMA path one of whose buffers that peers
  /// reach is at least this many bytes exchanges, for this call, where
  /// every rank's such buffers are (one host exchange; each peer allocation
  /// mapped once), so they may be any memory the device can share (a
  /// cudaMalloc'd or caching-allocator block), not only symmetric memory
  /// (docs/c-api.md, "Shared buffers"). 0: never. -1: $SDMA_SHARED_BYTES,
  /// else 0. Every rank must have the same.
  int64_t sharedBytes = -1;
};

/// One send or receive of a point-to-point group (Communicator::sendRecv).
struct PeerOp {
  bool send = false;
  int peer = 0;
  void *buffer = nullptr; // read by a send, written by a receive
  uint64_t bytes = 0;
};

/// Reduction operators, numbered as ncclRedOp_t.
/// Avg: the sum divided by the rank count once (NCCL's ncclAvg; integers
/// truncate toward zero). PreMulSum: the sum of every rank's input times
/// that rank's scalar (NCCL's ncclRedOpCreatePreMulSum); made by the C API
/// as an operator of its own, past NCCL's five.
enum class ReduceOp : int {
  Sum = 0,
  Prod = 1,
  Max = 2,
  Min = 3,
  Avg = 4,
  PreMulSum = 5
};
/// "sum", "prod", "max", "min", "avg", "premulsum"; nullptr outside the
/// enum.
const char *reduceOpName(ReduceOp op);

/// The type and operator a reduction computes in; for PreMulSum also this
/// rank's scalar: the bits of a value of `type` (the low 8, 16 or 32 bits
/// for the narrower types, the rest zero), or with `deviceScalar` the
/// address of one in device memory, read by the kernel when it runs.
struct Arithmetic {
  DataType type;
  ReduceOp op;
  uint64_t scalar = 0;
  bool deviceScalar = false;
  /// A node part of a hierarchical schedule (LdstProgram::setReduction's
  /// partOf): the job's ranks, avg's divisor; 0: the program is the job.
  int partOf = 0;
};
/// "f32 sum", "bf16 premulsum", "f16 premulsum_device", "i32 avg/6" (a
/// node part of a job of 6 ranks): what distinguishes
/// one reduction's kernel from another's (program names, call signatures;
/// not PreMulSum's scalar, which each launch passes).
std::string arithmeticName(const Arithmetic &arithmetic);
/// Its operator as LdstProgram::setReduction names it: reduceOpName's, or
/// "premulsum_device" for a PreMulSum whose scalar is in device memory
/// ("invalid-op" outside the enum).
std::string arithmeticOpName(const Arithmetic &arithmetic);

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

/// The value of each option left 0 or empty, from the environment
/// (SDMA_DEVICE, SDMA_TIMEOUT_MS, SDMA_HEAP_BYTES, SDMA_TWO_SHOT_BYTES,
/// SDMA_P2P_CHUNK_BYTES, SDMA_CHECK_CALLS, SDMA_PROGRAM_DIR,
/// SDMA_CACHE_DIR) or the default. A
/// variable set to a value it cannot take is an error naming it.
bool resolveOptions(CommOptions &options, Error &error);

class Communicator {
public:
  /// Joins the job `id` as `rank` of `ranks`: meets every rank, opens the
  /// device and shares the symmetric heap. Collective.
  static std::unique_ptr<Communicator> create(const UniqueId &id, int rank,
                                              int ranks,
                                              const CommOptions &options,
                                              Error &error);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int rank() const;
  int ranks() const;
  std::string deviceName() const;
  /// The options in force (the environment's and defaults filled in).
  const CommOptions &options() const;
  /// The options as create() was given them, before the environment and
  /// the defaults filled them in (what a communicator made from this one
  /// starts from).
  const CommOptions &requestedOptions() const;

  /// Symmetric memory (collective: every rank calls them in the same
  /// order with the same sizes).
  bool memAlloc(size_t bytes, void *&ptr, Error &error);
  bool memFree(void *ptr, Error &error);
  bool registerMemory(void *ptr, size_t bytes, int &handle, Error &error);
  /// Whether [ptr, ptr + bytes) is symmetric memory on this rank: in one
  /// live heap allocation or registration (local; no exchange).
  bool isSymmetric(const void *ptr, size_t bytes) const;
  bool deregisterMemory(int handle, Error &error);
  /// Copies `bytes` on the device in `stream`'s order (any memory it
  /// addresses; not collective). The CPU device copies before it returns.
  bool copy(void *dst, const void *src, size_t bytes, void *stream,
            Error &error);
  /// Waits on the host until everything enqueued on `stream` has run (a
  /// GPU error there is returned; not while the stream is captured).
  bool synchronize(void *stream, Error &error);

  /// NCCL's collectives on symmetric buffers, enqueued on `stream` (a
  /// CUstream/hipStream_t; ignored on the CPU device).
  bool collective(CommOp op, const void *send, void *recv, size_t count,
                  DataType type, int root, void *stream, Error &error);
  bool reduce(CommReduction kind, const void *send, void *recv, size_t count,
              DataType type, ReduceOp op, int root, void *stream, Error &error);
  /// The same with the arithmetic whole (PreMulSum's scalar). PreMulSum
  /// runs where each element is reduced once (every built-in reduction);
  /// at one rank, where there is nothing to reduce, only with a scalar of
  /// 1 (a copy).
  bool reduce(CommReduction kind, const void *send, void *recv, size_t count,
              const Arithmetic &arithmetic, int root, void *stream,
              Error &error);
  /// Rows of `rowBytes` to every rank, counts (per destination) on the
  /// device: `capacity` rows per rank pair (slots) or in all (packed).
  bool allToAllv(const void *send, const int64_t *sendCounts, void *recv,
                 int64_t *recvCounts, size_t capacity, size_t rowBytes,
                 AlltoAllvLayout layout, void *stream, Error &error);
  /// MoE dispatch into expert-major rows (torch's all_to_all_vdev_2d),
  /// `experts` local experts per rank. `inSplits` (R*E int64, device
  /// memory, rank-major: rows for expert e of rank p at p*E + e) counts
  /// `send`'s rows, packed in that order. `recv` receives them
  /// expert-major: expert 0's rows from rank 0, 1, ..., then expert 1's;
  /// each expert's segment padded to a multiple of `majorAlign` rows and
  /// to at least `majorAlign`. `outSplitsOffsets` (2*E*R int64, device
  /// memory, may be null) receives the counts, expert-major (e*R + r),
  /// then the offset of each segment in `recv`. Both buffers hold
  /// R * capacity rows (symmetric memory); capacity bounds every count.
  /// A count out of range moves nothing for that segment and fails the
  /// communicator naming it; so does a segment past `recv`'s end.
  bool allToAllv2d(const void *send, const int64_t *inSplits, void *recv,
                   int64_t *outSplitsOffsets, int experts, size_t capacity,
                   size_t rowBytes, int majorAlign, void *stream, Error &error);
  /// Its inverse, the combine (torch's all_to_all_vdev_2d_offset):
  /// `inSplitsOffsets` (2*E*R int64) gives, expert-major, the rows of
  /// `send` that go back to each rank and where each run starts in `send`
  /// (the dispatch's outSplitsOffsets); `recv` receives them packed
  /// rank-major (rank 0's expert 0, expert 1, ..., rank 1's ...);
  /// `outSplitsOffsets` (2*R*E, may be null) the counts, rank-major, then
  /// their packed offsets.
  bool allToAllv2dOffset(const void *send, const int64_t *inSplitsOffsets,
                         void *recv, int64_t *outSplitsOffsets, int experts,
                         size_t capacity, size_t rowBytes, void *stream,
                         Error &error);

  /// Sends and receives between this rank and its peers (NCCL's
  /// ncclSend/ncclRecv, a group of them as ncclGroupStart/End makes): only
  /// the peers call, each with its half; a send and its receive must have
  /// the same size, and a pair's messages match in the order each side
  /// issues them. Every operation of `ops` runs at once, so a group that
  /// exchanges with several peers cannot deadlock; enqueued on `stream`
  /// (run before the call returns on the CPU device). Buffers are any
  /// memory of this rank's device: no registration. A bad peer, a null
  /// buffer or a receive overlapping another buffer of the group is
  /// refused with nothing sent.
  bool sendRecv(const std::vector<PeerOp> &ops, void *stream, Error &error);

  /// A schedule of the user's, loaded from its text or path (or a
  /// precompiled program's text) and run on buffers it names.
  struct Schedule {
    std::string name;
    std::vector<Buffer> buffers; // each: name, chunks
    int instance = -1;
    /// Loaded to reduce with premulsum: launch()'s `rowBytes` is this
    /// rank's scalar (each rank its own), not part of the call every rank
    /// must make alike.
    bool rowIsScalar = false;
  };
  /// With `arithmetic`, a schedule that reduces computes in its type and
  /// operator (one written for f32 sums, as the hierarchical schedules'
  /// node parts; avg and premulsum are refused where elements are reduced
  /// in steps, but where Arithmetic::partOf vouches); a schedule that does
  /// not reduce loads as it is.
  bool loadSchedule(const std::string &textOrPath, Schedule &schedule,
                    Error &error, const Arithmetic *arithmetic = nullptr);
  /// A schedule with count tables (sdma.copyv; 8-byte entries, buffers
  /// like the others) counts rows of `rowBytes` (0: a row is a chunk).
  bool launch(const Schedule &schedule, const std::vector<void *> &buffers,
              size_t chunkBytes, void *stream, Error &error,
              size_t rowBytes = 0);

  /// Compiles the built-ins and `schedules` for `ranks` into `directory`,
  /// for jobs without the compiler library (SDMA_PROGRAM_DIR); the MoE
  /// all-to-allvs for each of `experts` per rank (dispatch at `majorAlign`).
  static bool precompile(const std::string &directory, int ranks,
                         const std::vector<std::string> &schedules,
                         const CommOptions &options, Error &error,
                         const std::vector<int> &experts = {},
                         int majorAlign = 1);
  /// The name a schedule's precompiled program has: the file's stem.
  static std::string programName(const std::string &path);

  /// False, with the error, once a kernel of this communicator failed (a
  /// wait timed out, a count was out of range) or it was aborted: it stays
  /// failed.
  bool asyncError(Error &error);
  /// The path the last collective call of this rank took and why: "ldst
  /// (...)" or "dma VARIANT (...)" (CommOptions::path); "" before any.
  std::string lastPath() const;
  /// Makes every wait of this communicator's kernels fail now, those in
  /// flight included (their calls return "aborted"), and the communicator
  /// failed for good. From any thread, while another is inside a call of
  /// it (NCCL's ncclCommAbort, before it frees). False with why where the
  /// device could not be reached (a GPU error).
  bool abort(Error &error);
  /// Hands `bytes` (at most 240) at `data` from rank `root` to every rank
  /// of `members` (sorted; root and this rank among them) through a
  /// mailbox in root's symmetric memory, with no other rank taking part:
  /// they need not call, and may be dead, and this communicator may have
  /// failed or been aborted (what a shrink needs to meet again). Root
  /// writes and returns; the others wait for it, bounded by the timeout.
  bool shareAmong(int root, const std::vector<int> &members, void *data,
                  size_t bytes, Error &error);
  /// Makes the calling thread's current device this communicator's (a
  /// thread that makes calls for another: runGroup).
  void bindThread();

  class Impl;

private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// A call of a group (runGroup): `run` makes it on `comm`.
struct GroupCall {
  Communicator *comm = nullptr;
  std::function<bool(Error &)> run;
  /// Its failure, after runGroup: empty where it was enqueued.
  Error error;
  /// Its launches held and started with the group's (false: started as
  /// made, for calls that wait on their streams: a multi-node
  /// communicator's).
  bool hold = true;
  /// It is a collective, reduction or all-to-allv of this communicator
  /// (its CallPath defers where probed: GroupLaunch::probing): made first
  /// on the group's thread, where it starts as made before.
  bool probe = false;
};

/// Runs `calls`, made on communicators of this process (ranks of one job or
/// of several; NCCL's group over the communicators of ncclCommInitAll), as
/// one group: each communicator's calls in their order, the communicators
/// side by side (a call that meets every rank on the host waits for the
/// others'), and what they enqueue started once all have run, the launches
/// of ranks sharing a GPU as one launch where they run the same program at
/// the same size (comm/GroupLaunch.h). A failed call stops its
/// communicator's later calls. False where any call failed (its `error`).
bool runGroup(std::vector<GroupCall> &calls);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_COMMUNICATOR_H
