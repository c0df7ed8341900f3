//===- GpuDmaKernel.cpp - the DMA path on a GPU's streams -----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/GpuDmaKernel.h"

#include "exec/DmaQueueWalk.h"

#include <algorithm>
#include <cstring>

using namespace sdma::rt;

namespace {

class GpuDmaKernel : public CommKernel {
public:
  GpuDmaKernel(std::unique_ptr<GpuDmaOps> ops,
               std::shared_ptr<const DmaProgram> program, bool batch)
      : ops_(std::move(ops)), program_(std::move(program)), batch_(batch) {}

  ~GpuDmaKernel() override {
    std::string ignored;
    ops_->activate(ignored);
    for (void *s : streams_)
      ops_->destroyStream(s);
    for (void *e : events_)
      ops_->destroyEvent(e);
    for (char *stage : stages_)
      ops_->release(stage);
  }

  bool load(std::string &error) {
    const DmaProgram &P = *program_;
    if (P.plan.ranks > kDmaSyncMaxRanks || P.plan.flags > 0xffff) {
      error = "the DMA path runs at most " + std::to_string(kDmaSyncMaxRanks) +
              " ranks and 65535 flags";
      return false;
    }
    if (!ops_->activate(error))
      return false;
    // A stream per queue beyond the first (which runs on the caller's),
    // an event to fork and one per queue to join.
    size_t queues = P.queues.size();
    for (size_t i = 0; i < queues + 1; ++i) {
      void *event = nullptr;
      if (!ops_->createEvent(event, error))
        return false;
      events_.push_back(event);
    }
    for (size_t i = 1; i < queues; ++i) {
      void *stream = nullptr;
      if (!ops_->createStream(stream, error))
        return false;
      streams_.push_back(stream);
    }
    // The staging each queue's swaps need, in chunks.
    for (size_t q : P.queues) {
      int64_t chunks = 0;
      for (const Command &c : P.plan.streams[q].commands)
        if (c.kind == Command::Kind::Swap && !c.isNoOp())
          chunks = std::max(chunks, c.slices[0].count);
      stageChunks_.push_back(chunks);
    }
    perRun_.assign(P.plan.ranks, std::vector<int64_t>(P.plan.flags, 0));
    return true;
  }

  bool launch(const KernelLaunch &launch, std::string &error) override {
    const DmaProgram &P = *program_;
    if (!P.decode(launch, T_, error))
      return false;
    chunk_ = launch.chunkBytes;
    void *caller = launch.stream;
    pending_.clear(); // nothing of a call that stopped part way (a throw)
    if (!ops_->activate(error) || !ensureStage(error))
      return false;
    fillArgs();
    if (!ops_->sync(caller, args_, DmaSyncOp::Enter, 0, 0, error))
      return false;
    size_t queues = P.queues.size();
    if (queues > 1 && !ops_->record(events_[0], caller, error))
      return false;
    for (size_t i = 0; i < queues; ++i) {
      void *stream = i == 0 ? caller : streams_[i - 1];
      if (i > 0 && !ops_->waitEvent(stream, events_[0], error))
        return false;
      Sink sink{*this, stream, i, error};
      if (batch_ && !ops_->mayBatch(stream, sink.batching, error))
        return false;
      size_t q = P.queues[i];
      // Epoch 0 always: the flags are reset per call (DmaProgram.h).
      if (!walkCommands(P.plan, P.schedule, q, 0,
                        P.plan.streams[q].commands.size(), 0, perRun_, sink) ||
          !sink.flush())
        return false;
    }
    for (size_t i = 1; i < queues; ++i)
      if (!ops_->record(events_[i], streams_[i - 1], error) ||
          !ops_->waitEvent(caller, events_[i], error))
        return false;
    return ops_->sync(caller, args_, DmaSyncOp::Exit, 0, 0, error);
  }

private:
  /// The operations of one queue on `stream` (walkCommands' sink). With
  /// `batching`, copies wait in `pending` until one touches their bytes
  /// (by address: two buffers of a call may be one memory, as in place),
  /// or a swap, a notify, a poll or the queue's end comes.
  struct Sink {
    GpuDmaKernel &k;
    void *stream;
    size_t queue;
    std::string &error;
    bool batching = false;
    std::vector<DmaCopy> &pending = k.pending_;

    bool copy(const Slice &dst, const Slice &src) {
      DmaCopy c{k.address(dst), k.address(src), k.bytes(src)};
      if (!c.bytes || c.dst == c.src)
        return true;
      if (!batching)
        return k.ops_->copy(c.dst, c.src, c.bytes, stream, error);
      if (conflicts(c) && !flush())
        return false;
      pending.push_back(c);
      return true;
    }
    bool swap(const Slice &a, const Slice &b) {
      if (!flush())
        return false;
      char *stage = k.stage_ + k.stageOffset(queue);
      size_t n = k.bytes(a);
      return k.ops_->copy(stage, k.address(a), n, stream, error) &&
             k.ops_->copy(k.address(a), k.address(b), n, stream, error) &&
             k.ops_->copy(k.address(b), stage, n, stream, error);
    }
    bool notify(int rank, int flag, uint64_t value) {
      return flush() && k.ops_->sync(stream, k.args_, DmaSyncOp::Notify,
                                     (rank << 16) | flag, value, error);
    }
    bool poll(int flag, uint64_t value) {
      return flush() &&
             k.ops_->sync(stream, k.args_, DmaSyncOp::Poll, flag, value, error);
    }
    /// Issues the pending copies: one as a plain copy, more as a batch.
    bool flush() {
      bool ok =
          pending.size() != 1
              ? pending.empty() || k.ops_->copyBatch(pending, stream, error)
              : k.ops_->copy(pending[0].dst, pending[0].src, pending[0].bytes,
                             stream, error);
      pending.clear();
      return ok;
    }
    /// Whether `c` writes a byte a pending copy reads or writes, or reads
    /// one it writes.
    bool conflicts(const DmaCopy &c) const {
      // As integers: the pointers may be into different allocations.
      auto overlap = [](const char *p, size_t n, const char *q, size_t m) {
        uintptr_t a = reinterpret_cast<uintptr_t>(p),
                  b = reinterpret_cast<uintptr_t>(q);
        return a < b + m && b < a + n;
      };
      for (const DmaCopy &p : pending)
        if (overlap(c.dst, c.bytes, p.dst, p.bytes) ||
            overlap(c.dst, c.bytes, p.src, p.bytes) ||
            overlap(c.src, c.bytes, p.dst, p.bytes))
          return true;
      return false;
    }
  };

  void fillArgs() { args_ = dmaSyncArgs(*program_, T_); }

  char *address(const Slice &s) const {
    char *base =
        T_.buffers[size_t(s.rank) * program_->plan.buffers.size() + s.buffer];
    return base + uint64_t(s.offset) * chunk_;
  }
  size_t bytes(const Slice &s) const { return uint64_t(s.count) * chunk_; }
  size_t stageOffset(size_t queue) const {
    size_t offset = 0;
    for (size_t i = 0; i < queue; ++i)
      offset += (stageChunks_[i] * chunk_ + 255) / 256 * 256;
    return offset;
  }

  /// The swaps' staging at this call's chunk: grown (doubling) on the
  /// call that first needs more (a call in a graph capture must not be
  /// that one). Outgrown stages stay allocated until the kernel goes: an
  /// earlier call still on a stream may use one.
  bool ensureStage(std::string &error) {
    size_t need = stageOffset(stageChunks_.size());
    if (need <= stageBytes_)
      return true;
    size_t want = std::max(need, 2 * stageBytes_);
    char *grown = nullptr;
    if (!ops_->allocate(want, grown, error))
      return false;
    stages_.push_back(grown);
    stage_ = grown;
    stageBytes_ = want;
    return true;
  }

  std::unique_ptr<GpuDmaOps> ops_;
  std::shared_ptr<const DmaProgram> program_;
  bool batch_;
  std::vector<DmaCopy> pending_; // a queue's batch (Sink), kept for its room
  std::vector<void *> streams_, events_;
  std::vector<int64_t> stageChunks_;
  std::vector<char *> stages_;
  char *stage_ = nullptr;
  size_t stageBytes_ = 0;
  LaunchTable T_;
  size_t chunk_ = 0;
  DmaSyncArgs args_;
  std::vector<std::vector<int64_t>> perRun_;
};

} // namespace

DmaSyncArgs sdma::rt::dmaSyncArgs(const DmaProgram &P, const LaunchTable &T) {
  DmaSyncArgs args;
  std::memset(&args, 0, sizeof(args));
  for (int r = 0; r < P.plan.ranks; ++r)
    args.arrive[r] = T.arrive[r];
  args.flags = T.flags[P.rank];
  args.epochs = T.epochs;
  args.error = T.error;
  args.errorMirror = T.errorMirror;
  args.timeoutNs = T.timeoutNs;
  args.rank = P.rank;
  args.ranks = P.plan.ranks;
  args.flagCount = P.flagSlots();
  args.callTag = T.callTag;
  for (int r = 0; r < P.plan.ranks && r < int(T.tags.size()); ++r)
    args.tags[r] = T.tags[r];
  for (int r = 0; r < P.plan.ranks; ++r)
    args.peerFlags[r] = T.flags[r];
  return args;
}

std::unique_ptr<CommKernel>
sdma::rt::createGpuDmaKernel(std::unique_ptr<GpuDmaOps> ops,
                             std::shared_ptr<const DmaProgram> program,
                             bool batch, std::string &error) {
  auto kernel =
      std::make_unique<GpuDmaKernel>(std::move(ops), std::move(program), batch);
  if (!kernel->load(error))
    return nullptr;
  return kernel;
}
