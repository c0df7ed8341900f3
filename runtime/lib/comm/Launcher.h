//===- Launcher.h - one call of a schedule instance -------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A launch is one kernel: the table of every rank's buffers, flags and
// barrier counters (the kernel's SdmaTable) is built here from the
// symmetric regions (a peer's copy of a local buffer is at the same offset
// of the same region), bounds-checked for every buffer the rank's ops
// touch, and passed by value; nothing else is enqueued, so a launch is
// CUDA-graph capturable. The first call with a given signature is compared
// across ranks (CommOptions::checkCalls). Kernels record a failure (a wait
// that timed out, a bad run-time count) in their error record; the
// launcher decodes it into a message naming the rank and what it waited
// for, and the communicator stays failed from then on.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_LAUNCHER_H
#define SDMA_RUNTIME_LIB_COMM_LAUNCHER_H

#include "comm/CoLaunch.h"
#include "comm/ProgramCache.h"
#include "comm/SharedBuffers.h"
#include "comm/SymmetricHeap.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace sdma::rt {

/// Where a communicator's low-latency calls keep their words
/// (LdstLowLatency.hip), at an offset of every rank's heap (region 0): the
/// rank's call counter and its blocks' count, then its inbox, two slots of
/// one region per sending rank, each a header packet and 2 x
/// CommOptions::lowLatencyBytes of packets. Empty where they are off.
struct LowLatencyArea {
  int ranks = 1;
  uint64_t bytesPerPeer = 0; // CommOptions::lowLatencyBytes
  /// A region: the header packet, then the packets (16-byte aligned, as a
  /// packet's one 16-byte store needs).
  uint64_t pairBytes() const { return 16 + (2 * bytesPerPeer + 15) / 16 * 16; }
  size_t counter() const { return 0; }
  size_t inbox() const { return 256; }
  size_t bytes() const {
    return bytesPerPeer ? inbox() + 2 * size_t(ranks) * pairBytes() : 0;
  }
  /// Whether a call of `pairChunks` chunks of `chunkBytes` from one rank to
  /// another fits (each chunk's packets start at a multiple of 16 bytes:
  /// its bytes rounded up to 8, 16 bytes of packet per 8). A program
  /// with no such pair (one rank) counts one: its copies in place are the
  /// low-latency call's 8-byte units, for small calls only.
  bool fits(int64_t pairChunks, uint64_t chunkBytes) const {
    uint64_t padded = (chunkBytes + 7) / 8 * 8;
    return bytesPerPeer && pairChunks >= 0 &&
           padded <= bytesPerPeer / uint64_t(std::max<int64_t>(pairChunks, 1));
  }
};

/// The region of a private buffer (CommOptions::privateBuffers): memory
/// outside the symmetric heap that only its own rank reaches on the call's
/// path, passed to the kernel as the caller gave it.
constexpr int kPrivateRegion = -2;

/// What one call passes to its instance's kernel.
struct Call {
  /// The schedule's buffers, in its order (null where this rank does not
  /// touch it); an all-to-allv's count tables are added by the launcher.
  std::vector<const void *> buffers;
  /// [buffer]: the offset of rank r's copy is r * stride (in place), 0: the
  /// same offset on every rank.
  std::vector<size_t> stride;
  size_t chunkBytes = 0;
  /// All-to-allv: a row's bytes, and the counts the kernel copies in
  /// (send) and out (receive, may be null) around the call.
  size_t rowBytes = 0;
  const int64_t *sendCounts = nullptr;
  int64_t *recvCounts = nullptr;
  /// The call as every rank must make it ("AllGather count 4 float32 ...").
  std::string signature;
};

/// A call's launch as run() built it (its table, tag included), kept to
/// be started again as it is (CallReplay): the same instance, buffers,
/// chunk and path, so the same signature, already agreed.
struct PreparedLaunch {
  int index = -1;
  std::vector<uint64_t> table;
  size_t chunkBytes = 0;
  bool dma = false, lowLatency = false;
  /// Its buffers were shared for this call (SharedBuffers.h): another
  /// call with the same arguments exchanges again (peers' buffers may
  /// differ), so it is never replayed.
  bool shared = false;
};

class Launcher {
public:
  Launcher(int rank, int ranks, const CommOptions &options, CommDevice &device,
           SymmetricHeap &heap, ProgramCache &programs, Agreement &agreement,
           size_t lowLatencyOffset)
      : rank_(rank), ranks_(ranks), options_(options), device_(device),
        heap_(heap), programs_(programs), agreement_(agreement),
        lowLatencyOffset_(lowLatencyOffset),
        board_(agreement, options.timeoutMs) {}

  /// Runs `call` on instance `index` on `stream`: its load/store kernel,
  /// or with `dma` its DMA path (ProgramCache::addDma added it); with
  /// `lowLatency` the kernel's low-latency call (PathChooser checked that
  /// the program has one and the call fits the inbox). The path
  /// is part of the signature the ranks agree on.
  /// `refused`: this rank's own reason to refuse the call, found by the
  /// caller (it still takes part in a shared call's exchange).
  bool run(int index, const Call &call, bool dma, bool lowLatency, void *stream,
           Error &error, PreparedLaunch *keep = nullptr,
           const Error &refused = Error());
  /// The job's id (its unique id's hash): group launches run ranks of one
  /// job only (GroupLaunch.h).
  void setJob(uint64_t job) { job_ = job; }
  uint64_t job() const { return job_; }
  /// The ranks of this job that share this rank's GPU context (threads of
  /// this process on its GPU): each load/store launch is handed to them
  /// and starts with theirs as one (CoLaunch.h). Null: alone.
  void setCoLaunch(std::shared_ptr<CoLaunch> coLaunch) {
    coLaunch_ = std::move(coLaunch);
  }
  CoLaunch *coLaunch() const { return coLaunch_.get(); }
  /// The communicator was aborted (from any thread): a peer waiting in a
  /// shared call's buffer exchange on this rank fails at once, naming it.
  void abandonExchanges() { board_.abandon(); }
  /// The communicator is being destroyed: a peer waiting for this rank in
  /// a shared call's buffer exchange fails at once, naming it.
  void leaveExchanges() { board_.leave(); }
  /// How long a wait for another rank may take (CommOptions::timeoutMs).
  uint64_t timeoutMs() const { return options_.timeoutMs; }
  /// Starts a launch run() prepared (and ran) before, on `stream`.
  bool replay(const PreparedLaunch &prepared, void *stream, Error &error);
  /// False, with the first failure a kernel of this communicator
  /// recorded, once one has.
  bool healthy(Error &error);
  /// A launch of this communicator's that failed to start (`why`, from
  /// the device; `dma`: its DMA path's): `error` says why, from the
  /// kernel's record where it has one; the communicator fails as the
  /// cause says (start(), or a group's launch: GroupLaunch.h).
  void startFailed(const std::string &why, bool dma, Error &error);
  /// A load/store launch handed to the co-launch that did not start
  /// (`handed`, CoLaunch::launch's error): a launch the device refused
  /// fails as startFailed says, another rank's absence or a stop as it is.
  void coLaunchFailed(const Error &handed, Error &error);

private:
  /// Builds the SdmaTable words of `call` with its tag: with `dma`, the DMA
  /// path's own flags, run counter and barrier words (Instance::dma*Offset);
  /// with `lowLatency`, every rank's inbox.
  bool table(const Instance &instance, const Call &call,
             const std::vector<int> &region, const std::vector<size_t> &offset,
             const SharedCall &shared, bool dma, bool lowLatency, uint64_t tag,
             std::vector<uint64_t> &words, Error &error);
  /// Where each of `call`'s buffers is: its region and offset, the same on
  /// every rank (symmetric memory), kPrivateRegion (memory only this rank
  /// reaches) or kSharedRegion (found by the call's exchange); the first
  /// problem (NotSymmetric where the caller may stage) in `problem`.
  /// `bytes`: each buffer's size at the call's chunk (none: past 64 bits).
  void locateBuffers(const Instance &instance, const Call &call, size_t user,
                     const std::vector<std::optional<uint64_t>> &bytes,
                     bool dma, bool lowLatency, bool share,
                     std::vector<int> &region, std::vector<size_t> &offset,
                     Error &problem);
  /// The failure any kernel recorded, decoded; empty if none.
  Error kernelError();
  /// Starts `prepared` on its instance's kernel (its DMA path's where it
  /// is a DMA launch) on `stream`; a launch that failed fails the
  /// communicator as its cause says. `replayed`: it repeats an earlier
  /// call (KernelLaunch::replayed).
  bool start(const PreparedLaunch &prepared, void *stream, Error &error,
             bool replayed = false);

  int rank_, ranks_;
  const CommOptions &options_;
  CommDevice &device_;
  SymmetricHeap &heap_;
  ProgramCache &programs_;
  Agreement &agreement_;
  size_t lowLatencyOffset_;
  uint64_t job_ = 0;
  std::shared_ptr<CoLaunch> coLaunch_;
  std::set<std::string> checked_;
  /// Where shared calls exchange their buffers' places, and what they
  /// keep between calls.
  ExchangeBoard board_;
  SharedBlocks sharedBlocks_;
  /// The first failure, once seen (the watchdog's thread reads it too).
  std::mutex failedMutex_;
  Error failed_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_LAUNCHER_H
