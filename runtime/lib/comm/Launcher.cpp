//===- Launcher.cpp - one call of a schedule instance ---------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/Launcher.h"

#include "comm/GroupLaunch.h"

#include "compile/KernelCache.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Limits.h"

using namespace sdma::rt;

namespace {
/// The call's tag: its signature's hash, never 0 (0 is no tag).
uint64_t tagOf(const std::string &signature) {
  uint64_t h = hashBytes(signature);
  return h ? h : 1;
}
} // namespace

bool Launcher::healthy(Error &error) {
  std::lock_guard<std::mutex> lock(failedMutex_);
  if (failed_.empty())
    failed_ = kernelError();
  if (failed_.empty())
    return true;
  error = failed_;
  return false;
}

Error Launcher::kernelError() {
  Error error;
  // A run-time count out of range is the caller's (invalid usage); a wait
  // that timed out is a peer's (remote).
  auto usage = [&](std::string message) {
    error.fail(ErrorKind::InvalidUsage, std::move(message));
    return error;
  };
  auto remote = [&](std::string message) {
    error.fail(ErrorKind::Remote, std::move(message));
    return error;
  };
  const unsigned long long *records = device_.errorRecord();
  for (size_t i = 0; i < programs_.records(); ++i) {
    const unsigned long long *r = records + i * kRecordWords;
    const LdstProgram &program = programs_.recordOwner(i).program;
    if (uint64_t kind = *(volatile const unsigned long long *)(r + 5)) {
      // sdma.copyv's count error (SdmaTable::error words 5-7; kind + 4:
      // the rank's packed counts were all zeroed, see LdstCounts.hip).
      int64_t count = static_cast<int64_t>(r[7]);
      uint64_t what = kind & 3;
      return usage(
          "rank " + std::to_string(r[6] / sdma::kMaxRanks) + " (" +
          program.schedule + ") was to send " + std::to_string(count) +
          " rows to rank " + std::to_string(r[6] % sdma::kMaxRanks) + ", " +
          (what == 1   ? "more than the capacity"
           : what == 2 ? "past the end of its buffer (where a packed or "
                         "expert-major layout, or an offset the caller "
                         "gave, puts them)"
                       : "a negative count") +
          (kind & 4    ? ": it sent nothing in this call (its packed rows "
                         "are no longer where its counts say; every "
                         "receive count from it is 0)"
           : what == 2 ? ": nothing was sent for it"
                       : ": nothing was sent for it (its receive count "
                         "is 0)"));
    }
    uint64_t status = *(volatile const unsigned long long *)r;
    if (!status)
      continue;
    if (status == kAbortedStatus)
      return usage("the communicator was aborted (ncclCommAbort / "
                   "sdmaCommAbort); its calls in flight stopped");
    int programRank = static_cast<int>(r[1]);
    std::string where =
        "rank " + std::to_string(programRank) + " (" + program.schedule + ")";
    std::string after =
        " timed out after " + std::to_string(options_.timeoutMs) + " ms";
    int64_t slot = static_cast<int64_t>(r[2]);
    if (slot == -4)
      return usage(where + " and rank " + std::to_string(r[3]) +
                   " made different calls (the call or where a shared "
                   "buffer is differs; the host checks a call's signature "
                   "the first time only, the launch every time): refused on "
                   "every rank");
    if (slot == -2 || slot == -3 || slot == -5) {
      PeerWait wait = PeerWait::decode(r[3]);
      // A low-latency header's wait also saw the peer's header in the
      // other slot (LdstLowLatency.hip's sdma_ll_poll): a peer a call ahead
      // or behind this rank writes there.
      std::string seen = wait.lowLatency
                             ? "its low-latency flag here: " +
                                   std::to_string(r[4] & 0xffffffffu) +
                                   ", awaited " + std::to_string(wait.awaited) +
                                   (slot == -2 ? "; in the other slot: " +
                                                     std::to_string(r[4] >> 32)
                                               : std::string())
                             : "its arrivals here: " + std::to_string(r[4]) +
                                   " of " + std::to_string(wait.awaited);
      return remote(
          where + after + " waiting for rank " + std::to_string(wait.rank) +
          (slot == -5   ? "'s data (a low-latency call, no barrier; "
           : slot == -2 ? " to start the call ("
                        : " to finish the call (") +
          seen + "): it did not arrive, exited, or made a different call");
    }

    if (slot == kDmaStoppedSlot) {
      error.fail(ErrorKind::System,
                 where + ": its DMA engines' host threads did not start");
      return error;
    }
    if (slot == kDmaRingWriterSlot)
      return remote(where + "'s ring writer" + after + " waiting for " +
                    (r[4] == 1 ? "space in the ring of engine queue "
                               : "earlier packets to be committed to queue ") +
                    std::to_string(r[3]) +
                    " (its engine stopped: a wait "
                    "of its packets did not complete)");
    if (slot == kDmaPacketFaultSlot) {
      error.fail(ErrorKind::Internal,
                 where + "'s DMA engine of queue " + std::to_string(r[3]) +
                     " stopped at ring offset " + std::to_string(r[4]) +
                     ": a packet it cannot run (an address outside the "
                     "call's buffers and flags, or undecodable), or none "
                     "where the ring writer should have put one");
      return error;
    }
    std::shared_ptr<const DmaProgram> dma =
        slot <= kDmaFlagSlotBase ? programs_.dmaOf(i) : nullptr;
    if (dma) {
      int flag = int(kDmaFlagSlotBase - slot);
      std::string peers;
      for (int q : dma->notifiers(programRank, flag))
        peers += (peers.empty() ? "" : ", ") + std::to_string(q);
      return remote(where + "'s DMA path" + after + " waiting for rank " +
                    (peers.empty() ? "?" : peers) + " (flag " +
                    std::to_string(flag) + " reached " + std::to_string(r[4]) +
                    " of " + std::to_string(r[3]) +
                    "): it did not arrive, exited, or made a different call");
    }
    if (slot < 0)
      return remote(where +
                    ": its blocks did not all reach a rank barrier within " +
                    std::to_string(options_.timeoutMs) + " ms");
    std::string peers;
    for (int q : program.signalers(programRank, int(slot)))
      peers += (peers.empty() ? "" : ", ") + std::to_string(q);
    return remote(where + after + " waiting for rank " +
                  (peers.empty() ? "?" : peers) + " (flag slot " +
                  std::to_string(slot) + " reached " + std::to_string(r[4]) +
                  " of " + std::to_string(r[3]) +
                  "): it did not arrive, exited, or made a different call");
  }
  return error;
}

bool Launcher::table(const Instance &instance, const Call &call,
                     const std::vector<int> &region,
                     const std::vector<size_t> &offset,
                     const SharedCall &shared, bool dma, bool lowLatency,
                     uint64_t tag, std::vector<uint64_t> &t, Error &error) {
  // The DMA path keeps words of its own: the load/store kernel's flags
  // count its runs (a wait is for epoch x per-run + k), which a DMA call
  // must not advance.
  size_t flagsOffset = dma ? instance.dmaFlagsOffset : instance.flagsOffset;
  size_t epochsOffset = dma ? instance.dmaEpochsOffset : instance.epochsOffset;
  size_t arriveOffset = dma ? instance.dmaArriveOffset : instance.arriveOffset;
  const LdstProgram &program = instance.program;
  size_t B = program.buffers.size();
  t.assign(ranks_ * B, 0);
  for (const auto &[r, b] : instance.touched[rank_]) {
    // A low-latency call reaches its own rank's buffers only (peers'
    // bytes come through the inboxes below).
    if (lowLatency && r != rank_)
      continue;
    const std::string &name = program.buffers[b].name;
    size_t stride = size_t(b) < call.stride.size() ? call.stride[b] : 0;
    if (region[b] == kPrivateRegion) {
      // This rank's own memory, as the caller passed it (run() checked that
      // no other rank reaches it on this path): a peer's is never used.
      if (r == rank_)
        t[r * B + b] = reinterpret_cast<uint64_t>(
            static_cast<const char *>(call.buffers[b]) + size_t(r) * stride);
      continue;
    }
    if (region[b] < 0 && region[b] != kSharedRegion)
      return error.fail(ErrorKind::InvalidArgument,
                        program.schedule + " on rank " + std::to_string(rank_) +
                            " needs buffer '" + name + "' (null here)");
    const Region &at = region[b] == kSharedRegion ? shared.regions[b]
                                                  : heap_.region(region[b]);
    // A heap allocation has the same size everywhere (locate checked it);
    // a registration has each rank's own.
    uint64_t need = program.buffers[b].bytes(call.chunkBytes);
    uint64_t start = offset[b] + uint64_t(r) * stride;
    if ((region[b] != 0 || stride) && start + need > at.peerBytes[r])
      return error.fail(ErrorKind::InvalidArgument,
                        "rank " + std::to_string(r) + "'s buffer '" + name +
                            "' is too small: " + program.schedule + " needs " +
                            std::to_string(need) + " bytes at offset " +
                            std::to_string(offset[b]) +
                            " of its registration, which has " +
                            std::to_string(at.peerBytes[r]));
    t[r * B + b] = reinterpret_cast<uint64_t>(at.peer[r] + start);
  }
  const Region &heap = heap_.region(0);
  for (int q = 0; q < ranks_; ++q)
    t.push_back(reinterpret_cast<uint64_t>(heap.peer[q] + flagsOffset));
  for (int q = 0; q < ranks_; ++q)
    t.push_back(reinterpret_cast<uint64_t>(heap.peer[q] + instance.syncOffset));
  uint64_t record =
      device_.errorRecordDevice() + instance.record * kRecordWords * 8;
  bool mirrored = device_.errorMirrored();
  t.push_back(
      mirrored ? reinterpret_cast<uint64_t>(heap.local + instance.errorOffset)
               : record);
  t.push_back(options_.timeoutMs * 1000000ull);
  t.push_back(reinterpret_cast<uint64_t>(heap.local + epochsOffset));
  for (int q = 0; q < ranks_; ++q)
    t.push_back(reinterpret_cast<uint64_t>(heap.peer[q] + arriveOffset));
  t.push_back(mirrored ? record : 0);
  t.push_back(call.rowBytes);
  // SdmaTable::countsIn, countsOut: the kernel copies the send counts into
  // the count table before it starts and the receive counts out once every
  // peer has arrived.
  char *tables = heap.local + instance.countsOffset;
  bool counted = instance.countsOffset != 0;
  t.push_back(reinterpret_cast<uint64_t>(counted ? call.sendCounts : nullptr));
  t.push_back(reinterpret_cast<uint64_t>(counted ? tables : nullptr));
  uint64_t sendEntries =
      counted ? program.buffers[program.buffers.size() - 2].chunks : 0;
  t.push_back(reinterpret_cast<uint64_t>(
      counted && call.recvCounts ? tables + sendEntries * sizeof(int64_t)
                                 : nullptr));
  t.push_back(reinterpret_cast<uint64_t>(counted ? call.recvCounts : nullptr));
  // SdmaTable::callTag and tags: the launch checks on the device that
  // every rank makes this same call.
  t.push_back(tag);
  for (int q = 0; q < ranks_; ++q)
    t.push_back(reinterpret_cast<uint64_t>(heap.peer[q] + instance.tagsOffset));
  // SdmaTable::ll, llSeq, llPairBytes (a program with them): every rank's
  // inbox where this call is low-latency, else none.
  if (program.lowLatencyPairChunks >= 0) {
    LowLatencyArea area{ranks_, uint64_t(options_.lowLatencyBytes)};
    for (int q = 0; q < ranks_; ++q)
      t.push_back(lowLatency
                      ? reinterpret_cast<uint64_t>(
                            heap.peer[q] + lowLatencyOffset_ + area.inbox())
                      : 0);
    t.push_back(reinterpret_cast<uint64_t>(heap.local + lowLatencyOffset_ +
                                           area.counter()));
    t.push_back(area.pairBytes());
  }
  return true;
}

void Launcher::locateBuffers(const Instance &instance, const Call &call,
                             size_t user,
                             const std::vector<std::optional<uint64_t>> &sizes,
                             bool dma, bool lowLatency, bool share,
                             std::vector<int> &region,
                             std::vector<size_t> &offset, Error &problem) {
  const LdstProgram &program = instance.program;
  const size_t B = program.buffers.size();
  // A call that shares its buffers takes those only its own rank reaches
  // as they are, as private buffers are.
  const bool mayBePrivate = options_.privateBuffers || share;
  for (size_t b = 0; b < B && problem.empty(); ++b) {
    const std::optional<uint64_t> &bytes = sizes[b];
    if (share && b < user && instance.remote[b] && bytes) {
      region[b] = kSharedRegion; // found by the exchange below
    } else if (b >= user) {      // the count tables, side by side
      region[b] = 0;
      offset[b] =
          instance.countsOffset +
          (b > user ? program.buffers[user].chunks : 0) * sizeof(int64_t);
    } else if (!bytes) {
      problem.fail(ErrorKind::InvalidArgument,
                   "buffer '" + program.buffers[b].name + "' of " +
                       std::to_string(program.buffers[b].chunks) +
                       " chunks of " + std::to_string(call.chunkBytes) +
                       " bytes does not fit 64 bits");
    } else if (call.buffers[b] &&
               !(mayBePrivate &&
                 heap_.lookup(call.buffers[b], *bytes, region[b], offset[b]))) {
      // Memory no other rank reaches on this path may be any the device
      // addresses (CommOptions::privateBuffers: a low-latency call's peers
      // write only the communicator's inboxes), but never memory that
      // overlaps symmetric memory without lying in one allocation or
      // registration (the kernel would write past its end), nor memory
      // the kernel cannot address (pageable host memory on a GPU: a
      // fault): the caller stages those.
      std::string why;
      if (mayBePrivate && (lowLatency || (!dma && !instance.remote[b])) &&
          heap_.disjoint(call.buffers[b], *bytes) &&
          device_.addressable(call.buffers[b], why))
        region[b] = kPrivateRegion;
      else
        heap_.locate(call.buffers[b], *bytes,
                     "buffer '" + program.buffers[b].name + "'", region[b],
                     offset[b], problem);
      if (options_.privateBuffers && !problem.empty()) {
        // Nothing enqueued: the caller stages and calls again, as every
        // rank whose buffers are alike does. A call that shares says so
        // in its exchange first (run()), so that every rank makes it.
        problem.kind = ErrorKind::NotSymmetric;
        return;
      }
    }
  }
}

bool Launcher::run(int index, const Call &call, bool dma, bool lowLatency,
                   void *stream, Error &error, PreparedLaunch *keep,
                   const Error &refused) {
  if (!healthy(error)) {
    error.context("the communicator has failed");
    return false;
  }
  const Instance &instance = programs_.instance(index);
  const LdstProgram &program = instance.program;
  size_t B = program.buffers.size();
  // An all-to-allv's count tables follow the user's buffers.
  size_t user = instance.countsOffset ? B - 2 : B;
  if (call.buffers.size() != user || call.chunkBytes == 0)
    return error.fail(ErrorKind::InvalidArgument,
                      program.schedule + " takes " + std::to_string(user) +
                          " buffers and a chunk of at least one byte; got " +
                          std::to_string(call.buffers.size()) + " and " +
                          std::to_string(call.chunkBytes));
  // Where each buffer lives; the same offset of the same region on every
  // rank (symmetric memory).
  std::vector<int> region(B, -1);
  std::vector<size_t> offset(B, 0);
  std::vector<std::optional<uint64_t>> bytes(B);
  std::vector<uint64_t> sizes(B, 0);
  for (size_t b = 0; b < B; ++b) {
    bytes[b] = checkedMul(program.buffers[b].chunks,
                          program.buffers[b].counts ? 8 : call.chunkBytes);
    sizes[b] = bytes[b].value_or(~uint64_t(0));
  }
  // A large call may share buffers that are not symmetric memory for
  // itself (SharedBuffers.h): every rank decides alike.
  const bool share =
      sharesBuffers(options_, ranks_, instance, sizes, user, lowLatency);
  if (keep)
    keep->shared = share;
  // A call the caller already refused on this rank: at once, or, where
  // the call shares, through the exchange, which every rank makes.
  if (!refused.empty() && !share) {
    error = refused;
    return false;
  }
  Error problem = refused;
  if (problem.empty())
    locateBuffers(instance, call, user, bytes, dma, lowLatency, share, region,
                  offset, problem);
  if (!share && problem.kind == ErrorKind::NotSymmetric && !problem.empty()) {
    error = problem; // nothing asked of any rank
    return false;
  }
  // Where each buffer is, for the ranks to agree on: those another rank
  // reaches (a buffer only its own rank touches may differ, or be null).
  // A shared buffer is "shared" on every rank, even one whose refusal ended
  // the loop above early: the tag it sends in the exchange is every rank's.
  std::string signature = call.signature;
  for (size_t b = 0; b < B; ++b) {
    size_t stride = b < call.stride.size() ? call.stride[b] : 0;
    signature += !instance.remote[b] || lowLatency ? std::string(" local")
                 : share && b < user
                     ? " shared" + (stride ? "/" + std::to_string(stride) : "")
                     : " " + std::to_string(region[b]) + "+" +
                           std::to_string(region[b] < 0 ? 0 : offset[b]) +
                           (stride ? "/" + std::to_string(stride) : "");
  }
  if (dma)
    signature += " dma " + instance.dma->variant;
  if (lowLatency)
    signature += " low-latency";
  std::vector<uint64_t> words;
  SharedCall shared;
  if (share) {
    // Each shared buffer's bytes from the base the caller passed (an
    // in-place buffer's copies lie at rank x stride from it).
    std::vector<uint64_t> need(user, 0);
    for (size_t b = 0; b < user; ++b)
      need[b] = sizes[b] + (b < call.stride.size() ? call.stride[b] : 0) *
                               uint64_t(ranks_ - 1);
    // Every rank exchanges (a rank whose call is already wrong says so),
    // or fails alike: nothing to agree on after.
    if (!shareBuffers(device_, board_, heap_, instance, call.buffers, need,
                      user, tagOf(signature), options_.privateBuffers, problem,
                      sharedBlocks_, shared, error))
      return false;
  }
  if (problem.empty())
    // The call's tag: what every rank must pass alike (the signature with
    // the shared buffers' positions and the path). The host compares it
    // only the first time; the launch compares it every time
    // (LdstKernel.hip).
    table(instance, call, region, offset, shared, dma, lowLatency,
          tagOf(signature), words, problem);
  // The first call of a signature: every rank makes the same one, or every
  // rank refuses it (the refusing rank with its own reason).
  bool fresh = options_.checkCalls && !checked_.count(signature);
  if (fresh || (options_.checkCalls && !problem.empty() &&
                !checked_.count(call.signature))) {
    if (!agreement_.agreeUnless(problem, signature, "the call", error))
      return false;
    checked_.insert(signature);
    checked_.insert(call.signature);
  }
  if (!problem.empty()) {
    error = problem;
    return false;
  }
  PreparedLaunch prepared{index, std::move(words), call.chunkBytes,
                          dma,   lowLatency,       share};
  bool started = start(prepared, stream, error);
  if (keep)
    *keep = std::move(prepared);
  return started;
}

bool Launcher::replay(const PreparedLaunch &prepared, void *stream,
                      Error &error) {
  if (!healthy(error)) {
    error.context("the communicator has failed");
    return false;
  }
  return start(prepared, stream, error, true);
}

bool Launcher::start(const PreparedLaunch &prepared, void *stream, Error &error,
                     bool replayed) {
  const Instance &instance = programs_.instance(prepared.index);
  const bool dma = prepared.dma;
  KernelLaunch launch;
  launch.table = prepared.table;
  launch.chunkBytes = prepared.chunkBytes;
  launch.programRank = rank_;
  launch.stream = stream;
  launch.lowLatency = prepared.lowLatency;
  launch.replayed = replayed;
  std::string why;
  CommKernel &kernel = dma ? *instance.dmaKernel : *instance.kernel;
  // In a group over several communicators: started with the group's.
  if (GroupLaunch *group = GroupLaunch::current()) {
    group->hold(*this, kernel, std::move(launch), dma);
    return true;
  }
  // Ranks sharing this GPU context: their load/store launches start as one
  // (a kernel behind another in a hardware queue would wait for it). Not
  // into a stream being captured: each rank's graph holds its own kernel
  // (one launch cannot join streams captured into different graphs).
  bool capturing = false;
  if (coLaunch_ && !dma && !device_.streamCapturing(stream, capturing, why)) {
    startFailed(why, dma, error);
    return false;
  }
  if (coLaunch_ && !dma && !capturing) {
    std::vector<CoLaunch::Hand> hands(1);
    hands[0].kernel = &kernel;
    hands[0].launch = std::move(launch);
    std::vector<Error> errors;
    // An abort (or a failure) while waiting for the other ranks: at once.
    auto stop = [this](Error &why) {
      if (healthy(why))
        return false;
      why.context("the communicator has failed");
      return true;
    };
    if (coLaunch_->launch(std::move(hands), options_.timeoutMs, errors, stop))
      return true;
    coLaunchFailed(errors[0], error);
    return false;
  }
  if (kernel.launch(launch, why))
    return true;
  startFailed(why, dma, error);
  return false;
}

void Launcher::coLaunchFailed(const Error &handed, Error &error) {
  if (handed.kind == ErrorKind::Device)
    startFailed(handed.message, false, error);
  else
    error = handed;
}

void Launcher::startFailed(const std::string &why, bool dma, Error &error) {
  // A CPU run reports a timeout itself; the record names the missing rank.
  std::lock_guard<std::mutex> lock(failedMutex_);
  failed_ = kernelError();
  if (!failed_.empty()) {
    error = failed_;
    return;
  }
  error.fail(options_.device == "cpu" ? ErrorKind::System : ErrorKind::Device,
             why);
  // A DMA launch that failed part way may have enqueued its entry barrier
  // and not its exit: the barrier words are out of step with the run
  // counter, so no later call may run (the communicator has failed).
  if (dma)
    failed_ = error;
}
