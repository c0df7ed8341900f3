//===- CommDevice.h - what a communicator needs of a device ---*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The memory and kernel services under a Communicator, one implementation
// per device kind:
//   - HostCommDevice: POSIX shared memory, the kernel on the CPU emulator
//     (LdstCpuExecutor), run before launch() returns;
//   - HipCommDevice: the same on HIP (compiled; no AMD GPU to run it);
//   - CudaCommDevice: cuMemAlloc'd memory shared by CUDA IPC handles (one
//     process opens each peer allocation once; ranks that are threads of one
//     process use the pointer itself), the kernel by NVRTC through the
//     kernel cache, launched on the caller's stream.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_COMMDEVICE_H
#define SDMA_RUNTIME_LIB_COMM_COMMDEVICE_H

#include "sdma/runtime/Bootstrap.h"
#include "sdma/runtime/Communicator.h"
#include "sdma/runtime/LdstProgram.h"

#include <memory>
#include <string>
#include <vector>

namespace sdma::rt {

struct DmaProgram;

/// Programs per communicator (their variants share one: ProgramCache.h),
/// and the words of each one's kernel error record (status, rank, flag
/// slot, value awaited, value seen).
constexpr int kMaxPrograms = 1024;
constexpr int kRecordWords = 8;
/// The records a device keeps: one per program, then the point-to-point
/// kernel's (PointToPoint.h).
constexpr int kP2pRecord = kMaxPrograms;
constexpr int kRecords = kMaxPrograms + 1;
/// A record's status once the communicator was aborted: every byte 0xAB
/// (what a device's byte fill writes into a polled word).
constexpr uint64_t kAbortedStatus = 0xABABABABABABABABull;
/// What a timed-out wait for a peer records as its value (slots -2 and -3,
/// a job barrier or a low-latency header; -5, a low-latency packet): the
/// rank awaited in bits 0-15, the count or flag awaited in bits 16-62 (an
/// arrival count is the run's epoch + 1), bit 63 set for a low-latency
/// call's wait. The kernels' sources (LdstKernel.hip, LdstLowLatency.hip,
/// DmaSyncKernel.h) write `r | awaited << 16 [| 1ull << 63]` alike.
struct PeerWait {
  uint64_t rank, awaited;
  bool lowLatency;
  static constexpr uint64_t encode(uint64_t rank, uint64_t awaited,
                                   bool lowLatency = false) {
    return rank | (awaited & ((1ull << 47) - 1)) << 16 |
           uint64_t(lowLatency) << 63;
  }
  static constexpr PeerWait decode(uint64_t value) {
    return {value & 0xffff, (value >> 16) & ((1ull << 47) - 1),
            (value >> 63) != 0};
  }
};

/// One launch of one rank's part of a program.
struct KernelLaunch {
  /// The SdmaTable, as 64-bit words: buf[R*B], flags[R], sync[R], error,
  /// timeoutNs, epochs, arrive[R], errorMirror, rowBytes, countsIn[2],
  /// countsOut[2], callTag, tags[R], then for a low-latency program
  /// ll[R], llSeq, llPairBytes (LaunchTable decodes it).
  std::vector<uint64_t> table;
  size_t chunkBytes = 0;
  /// The program rank this process runs.
  int programRank = 0;
  /// The point-to-point kernel: its operations, a block each.
  int blocks = 0;
  void *stream = nullptr;
  /// A low-latency call (SdmaTable::ll set): the program's sdma_ldst_ll
  /// entry, not its entry.
  bool lowLatency = false;
  /// A call that repeats an earlier one (CallReplay.h): the same table
  /// again, which a device may launch in a faster way it prepared
  /// (CUDA: a graph, CudaLaunchGraphs.h).
  bool replayed = false;
  /// A co-launched rank's mark of its stream's work so far, made by its own
  /// thread (CommKernel::markStream): a group launch waits for it instead
  /// of marking the stream itself. Null: none.
  void *before = nullptr;
};

class CommKernel {
public:
  virtual ~CommKernel() = default;
  /// Enqueues (GPU) or runs (CPU) one launch.
  virtual bool launch(const KernelLaunch &launch, std::string &error) = 0;
  /// Whether a launch queues on its stream (a GPU's: it starts when what
  /// the stream holds has ended); false where it runs before it returns
  /// (the CPU device's).
  virtual bool queuesOnStream() const { return true; }
  /// What its launches' stream handles belong to (a CUDA context): handles
  /// of different ones never name one stream (the legacy default stream's
  /// is the same value on every GPU). Null: unknown, compared with all.
  virtual const void *streamDomain() const { return nullptr; }
  /// Group launches (GroupLaunch.h): kernels of one process whose keys are
  /// equal and not empty run the same code on the same device, so one
  /// launchGroup of either runs the launches of both; at most groupLimit()
  /// ranks in one. Empty: never grouped.
  virtual std::string groupKey() const { return ""; }
  virtual int groupLimit() const { return 0; }
  /// Enqueues (GPU) or runs (CPU) `launches` (each a rank's, of kernels
  /// with this key; all low-latency or none) as one launch, after the
  /// work each launch's stream holds and before what comes after it.
  /// `started`: whether any of it was enqueued or ran (false: nothing did,
  /// and each launch may still start alone).
  virtual bool launchGroup(const std::vector<const KernelLaunch *> &launches,
                           bool &started, std::string &error) {
    (void)launches;
    started = false;
    error = "internal: a group launch of a kernel that has none";
    return false;
  }
  /// Ranks sharing a GPU context (CoLaunch.h) order their own streams
  /// around a group launch another thread makes, so that its thread does
  /// not do it for all of them: each marks its stream's work so far
  /// (markStream, into KernelLaunch::before), launchGroupMarked waits for
  /// those marks and returns its own end's (`after`; the other streams not
  /// yet ordered after it), and each orders its stream after that
  /// (waitMark) before it enqueues more. Null marks: nothing to order (a
  /// device whose launch runs before it returns); the defaults.
  virtual bool markStream(void *stream, void *&mark, std::string &error) {
    (void)stream;
    (void)error;
    mark = nullptr;
    return true;
  }
  virtual bool waitMark(void *stream, void *mark, std::string &error) {
    (void)stream;
    (void)mark;
    (void)error;
    return true;
  }
  virtual bool
  launchGroupMarked(const std::vector<const KernelLaunch *> &launches,
                    bool &started, void *&after, std::string &error) {
    after = nullptr;
    return launchGroup(launches, started, error);
  }
};

class CommDevice {
public:
  virtual ~CommDevice() = default;
  virtual std::string name() const = 0;
  /// Zeroed memory peers can map; freed with the device.
  virtual bool allocate(size_t bytes, char *&ptr, std::string &error) = 0;
  /// A blob a peer passes to importMemory to map the allocation that holds
  /// [ptr, ptr + bytes), and ptr's offset in it.
  virtual bool exportMemory(char *ptr, size_t bytes, std::string &blob,
                            std::string &error) = 0;
  /// Maps rank `peer`'s blob here: the address of its `ptr`.
  virtual bool importMemory(int peer, const std::string &blob, char *&ptr,
                            std::string &error) = 0;
  /// After every rank imported (a barrier): names can go.
  virtual void importsDone() {}
  /// Copies `bytes` from `src` to `dst` (any memory the device addresses)
  /// in `stream`'s order; the CPU device copies before it returns.
  virtual bool copy(void *dst, const void *src, size_t bytes, void *stream,
                    std::string &error) = 0;
  /// copy() of memory this device's kernels address (the caller checked
  /// it), where the device may pick how: `how`, where given, says what ran
  /// ("the device's copy" by default).
  virtual bool localCopy(void *dst, const void *src, size_t bytes, void *stream,
                         std::string *how, std::string &error) {
    if (how)
      *how = "the device's copy";
    return copy(dst, src, bytes, stream, error);
  }
  /// Waits until everything enqueued on `stream` has run (the CPU device
  /// runs everything before it returns: nothing to wait for).
  virtual bool synchronize(void *stream, std::string &error) {
    (void)stream;
    (void)error;
    return true;
  }
  /// The kernels' error records (kRecordWords each, kRecords), which the host
  /// reads without synchronising: the host address and the device's.
  virtual unsigned long long *errorRecord() = 0;
  virtual uint64_t errorRecordDevice() = 0;
  /// True where errorRecord() is host memory the kernel must not poll (a
  /// GPU's): the kernel polls a record in device memory and mirrors a
  /// failure to errorRecordDevice() (SdmaTable::errorMirror).
  virtual bool errorMirrored() const { return false; }
  /// The device's identity (host and bus id): ranks with the same one
  /// share it.
  virtual std::string identity() const = 0;
  /// How many ranks of the job share this device (their kernels must all
  /// be resident at once).
  virtual void setSharing(int ranksOnDevice) { (void)ranksOnDevice; }
  /// Makes the device current on the calling thread (a GPU's context).
  virtual void bindThread() {}
  virtual std::unique_ptr<CommKernel> load(const LdstProgram &program,
                                           std::string &error) = 0;
  /// Fills `bytes` bytes at `ptr` (this device's memory) with 0xAB now,
  /// while its kernels may be running (on a stream of its own that nothing
  /// orders): how an abort reaches the words a GPU's kernels poll. Devices
  /// whose kernels poll host memory (errorMirrored() false) never need it.
  virtual bool markAborted(char *ptr, size_t bytes, std::string &error) {
    (void)ptr;
    (void)bytes;
    error = "this device's kernels poll host memory";
    return false;
  }
  /// False, with why, where `ptr` is memory this device's kernels cannot
  /// address (pageable host memory on a GPU); true where it can, or where
  /// the device cannot tell.
  virtual bool addressable(const void *ptr, std::string &why) {
    (void)ptr;
    (void)why;
    return true;
  }
  /// True in `capturing` while `stream` is being captured into a graph
  /// (the CPU device has no graphs).
  virtual bool streamCapturing(void *stream, bool &capturing,
                               std::string &error) {
    (void)stream;
    (void)error;
    capturing = false;
    return true;
  }
  /// The point-to-point kernel (P2pKernel.hip): a launch's table is its
  /// SdmaP2pTable as words, `blocks` its operations.
  virtual std::unique_ptr<CommKernel> loadPointToPoint(std::string &error) = 0;
  /// The DMA path of a program (DmaProgram.h): a launch takes the same
  /// table as the load/store kernel's, with the program's DMA flags. Null,
  /// with why, on a device that has none.
  virtual std::unique_ptr<CommKernel>
  loadDma(std::shared_ptr<const DmaProgram> program, std::string &error) {
    (void)program;
    error = "the " + name() + " device has no DMA path";
    return nullptr;
  }
  /// Whether the kernels of ranks that share a context (threads of one
  /// process on this device) reach it through hardware queues two streams
  /// may share, so that a kernel waiting for its stream's previous one
  /// holds up a peer's behind it: their launches must start as one
  /// (CoLaunch.h). CUDA and HIP.
  virtual bool launchesShareQueues() const { return false; }
  virtual bool hasDmaPath() const { return false; }
  /// Kernel submission (CommOptions::dmaSubmit "kernel"): the SDMA target
  /// profile (gfx9, gfx942, gfx950) the DMA plans' packets are built for;
  /// "" with why where the device's engines take no packets from kernels.
  virtual std::string dmaPacketTarget(std::string &why) const {
    why = "the " + name() +
          " device's DMA engines take no SDMA packets from "
          "a kernel (DMA submission 'kernel' is AMD's)";
    return "";
  }
  /// Whether CommOptions::path "auto" may pick the DMA path here by the
  /// cost model; false with why where it may not (a DMA path that is
  /// there to test the protocol, or has not been measured).
  virtual bool dmaByCostModel(std::string &why) const {
    why = "the " + name() + " device's DMA path is not measured";
    return false;
  }
  /// Whether the DMA path carries a dependency between two queues of one
  /// rank as a flag wait too (a device without events between its
  /// engines), rather than as an event.
  virtual bool dmaValueWaits() const { return true; }
  /// How the DMA path issues a queue's copies that may run in any order,
  /// for the path's log line: "" one at a time, else how they are batched.
  virtual std::string dmaBatching() const { return ""; }
};

/// The device `options.device` names (BackendRegistry.cpp), or nullptr
/// with why not ("no GPU: ..." where there is none).
std::unique_ptr<CommDevice> createCommDevice(const UniqueId &id, int rank,
                                             const CommOptions &options,
                                             std::string &error);

/// The CPU device of `rank` in the job `id` (segment names derive from it).
std::unique_ptr<CommDevice> createCpuDevice(const UniqueId &id, int rank,
                                            const CommOptions &options,
                                            std::string &error);
/// The HIP (AMD) device, or nullptr with "no GPU: ..." where there is none
/// (or where the runtime was built without HIP).
std::unique_ptr<CommDevice> createHipDevice(const CommOptions &options,
                                            std::string &error);
/// The CUDA device, or nullptr with "no GPU: ..." where there is none.
std::unique_ptr<CommDevice> createCudaDevice(const CommOptions &options,
                                             std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_COMMDEVICE_H
