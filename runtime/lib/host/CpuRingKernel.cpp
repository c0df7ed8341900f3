//===- CpuRingKernel.cpp - kernel-submitted DMA on the CPU device ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/CpuRingKernel.h"

#include "host/CpuCallSync.h"
#include "host/HostKernel.h"
#include "sdma/runtime/Ring.h"
#include "sim/PacketMachine.h"
#include "sim/RingCpu.h"

#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::packetsim;
using namespace sdma::rt::ringcpu;

namespace {

/// Writers (wavefronts) per engine queue.
constexpr int kWriters = 2;

/// The call's memory as this rank's engines see it: real addresses, each
/// access within one of the call's buffers or DMA flag arrays.
class CallMemory : public PacketExecutor {
public:
  CallMemory(const DmaProgram &P, const LaunchTable &T, size_t chunk) {
    const std::vector<Buffer> &buffers = P.packets->buffers;
    const size_t B = buffers.size();
    for (int r = 0; r < P.plan.ranks; ++r) {
      for (size_t b = 0; b < B; ++b)
        if (char *base = T.buffers[size_t(r) * B + b])
          regions_.push_back({reinterpret_cast<uint64_t>(base),
                              uint64_t(buffers[b].chunks) * chunk, -1});
      regions_.push_back({reinterpret_cast<uint64_t>(T.flags[r]),
                          uint64_t(P.packets->flags) * 8, r});
    }
  }

  uint8_t *translate(uint64_t addr, uint64_t len, std::string &error) override {
    for (const Region &m : regions_)
      if (addr >= m.base && len <= m.bytes && addr - m.base <= m.bytes - len)
        return reinterpret_cast<uint8_t *>(addr);
    error = "address " + hex(addr) + " (+" + std::to_string(len) +
            " bytes) is outside every buffer and DMA flag of the call";
    return nullptr;
  }
  std::string name(uint64_t addr) const override {
    int64_t slot;
    int rank = flagOf(addr, slot);
    return rank < 0 ? hex(addr)
                    : "flag@r" + std::to_string(rank) + "[" +
                          std::to_string(slot) + "]";
  }
  /// The rank whose DMA flag `addr` is (its slot in `slot`), or -1.
  int flagOf(uint64_t addr, int64_t &slot) const {
    for (const Region &m : regions_)
      if (m.flagsOf >= 0 && addr >= m.base && addr - m.base < m.bytes) {
        slot = int64_t((addr - m.base) / 8);
        return m.flagsOf;
      }
    return -1;
  }

private:
  struct Region {
    uint64_t base, bytes;
    int flagsOf; // the rank whose flags these are; -1: a buffer
  };
  std::vector<Region> regions_;
};

/// One engine queue's ring and the words the writer and the engine share.
struct Ring {
  std::vector<uint32_t> words;
  unsigned long long rptr = 0, wptr = 0, doorbell = 0;
};

class CpuRingKernel : public CommKernel {
public:
  /// A CPU launch runs before it returns: no stream queues it.
  bool queuesOnStream() const override { return false; }
  CpuRingKernel(std::shared_ptr<const DmaProgram> program, uint64_t ringBytes,
                std::unique_ptr<HostKernel> writer, RunFn run)
      : P_(std::move(program)), ringBytes_(ringBytes),
        writer_(std::move(writer)), run_(run),
        queues_(P_->packets->queues.size()),
        rings_(P_->packets->queues.size()) {
    for (size_t q : P_->packetQueues) {
      rings_[q] = std::make_unique<Ring>();
      rings_[q]->words.assign(ringBytes_ / 4, 0);
      queues_[q] = KernelQueue{rings_[q]->words.data(),
                               ringBytes_,
                               &rings_[q]->rptr,
                               &rings_[q]->wptr,
                               &rings_[q]->doorbell,
                               0,
                               0,
                               q,
                               0,
                               0};
    }
  }

  bool launch(const KernelLaunch &launch, std::string &error) override {
    const DmaProgram &P = *P_;
    LaunchTable T;
    if (!P.decode(launch, T, error))
      return false;
    if (std::string no =
            P.packetRefusal(launch.chunkBytes, commonAlignment(T.buffers));
        !no.empty()) {
      error = "internal: kernel-submitted DMA launched with a " + no;
      return false;
    }
    CpuCallSync sync(P.rank, P.plan.ranks, T);
    uint64_t epoch = CpuCallSync::load(T.epochs);
    if (!sync.barrier(0, epoch))
      return failed(error);
    if (!runQueues(sync, T, launch.chunkBytes, error)) {
      resync();
      return false;
    }
    if (sync.aborted() || !sync.barrier(1, epoch))
      return failed(error);
    // Every ATOMIC into this rank's flags ran on an engine whose rank's
    // completion count was full before it arrived at the exit barrier.
    sync.finish(P.packets->flags, epoch);
    return true;
  }

private:
  /// The writer and the engines of one call; false once the record says
  /// why (or `error` does).
  bool runQueues(CpuCallSync &sync, const LaunchTable &T, size_t chunk,
                 std::string &error) {
    const DmaProgram &P = *P_;
    const size_t R = size_t(P.plan.ranks), B = P.packets->buffers.size();
    std::vector<unsigned long long> buf(R * B), flags(R), ts(R, 0);
    for (size_t i = 0; i < R * B; ++i)
      buf[i] = reinterpret_cast<unsigned long long>(T.buffers[i]);
    for (size_t r = 0; r < R; ++r)
      flags[r] = reinterpret_cast<unsigned long long>(T.flags[r]);
    CallMemory memory(P, T, chunk);
    writerError_[0] = writerError_[1] = writerError_[2] = writerError_[3] = 0;
    writerDone_.store(false);
    std::vector<std::thread> engines;
    std::string cannot;
    for (size_t q : P.packetQueues) {
      try {
        engines.emplace_back([&, q] { engine(sync, memory, q); });
      } catch (const std::system_error &e) {
        cannot = e.what();
        stopWriters();
        break;
      }
    }
    int status = 0;
    if (cannot.empty() && !P.packetQueues.empty()) {
      KernelArgs args{buf.data(),     flags.data(), ts.data(),   chunk,
                      queues_.data(), writerError_, T.timeoutNs, P.rank};
      Hooks hooks{this, [](void *, unsigned long long, unsigned) {},
                  [](void *self, unsigned long long q, unsigned long long v) {
                    auto *k = static_cast<CpuRingKernel *>(self);
                    __atomic_store_n(&k->rings_[q]->doorbell, v,
                                     __ATOMIC_RELEASE);
                  }};
      status = run_(args, int(P.packetQueues.size()), kWriters, hooks);
      if (status)
        stopWriters();
    }
    writerDone_.store(true);
    for (std::thread &t : engines)
      t.join();
    if (!cannot.empty() || status) {
      sync.report(kDmaStoppedSlot, 0, 0);
      error = "cannot start the DMA path's host threads: " +
              (cannot.empty() ? std::string(std::strerror(status)) : cannot);
      return false;
    }
    if (uint64_t kind = __atomic_load_n(&writerError_[0], __ATOMIC_ACQUIRE);
        kind == 1 || kind == 2)
      sync.report(kDmaRingWriterSlot, writerError_[1], kind);
    if (sync.aborted())
      return failed(error);
    uint64_t done = CpuCallSync::load(T.flags[P.rank] + kDoneFlag);
    if (done != uint64_t(P.packets->done[size_t(P.rank)])) {
      sync.report(dmaFlagSlot(kDoneFlag), uint64_t(P.packets->done[P.rank]),
                  done);
      return failed(error);
    }
    return true;
  }

  /// Plan queue `q`'s engine: runs the packets the doorbell has made
  /// visible, in ring order, until the queue's packets are all done.
  void engine(CpuCallSync &sync, CallMemory &memory, size_t q) {
    Ring &ring = *rings_[q];
    const std::vector<Packet> &plan = P_->decodedPackets[q];
    size_t left = 0;
    for (const Packet &p : plan)
      left += p.kind != Packet::Kind::Nop;
    PacketSimStats stats;
    uint64_t since = CpuCallSync::nowNs();
    std::string why;
    auto fault = [&](int64_t slot, uint64_t value, uint64_t seen) {
      sync.report(slot, value, seen);
      stopWriters();
    };
    while (left) {
      if (sync.aborted() || stopped())
        return stopWriters();
      const uint64_t at = ring.rptr;
      if (__atomic_load_n(&ring.doorbell, __ATOMIC_ACQUIRE) == at) {
        // The writers are done only after their last doorbell: look again
        // once they are, before calling a packet missing.
        bool missing = writerDone_.load() &&
                       __atomic_load_n(&ring.doorbell, __ATOMIC_ACQUIRE) == at;
        if (missing && stopped()) // a writer gave up: it reports why
          return;
        if (missing || CpuCallSync::nowNs() - since > sync.timeoutNs())
          return fault(kDmaPacketFaultSlot, q, at);
        sched_yield();
        continue;
      }
      const size_t i = (at % ringBytes_) / 4;
      std::vector<uint32_t> dwords;
      size_t size =
          packetDwords(__atomic_load_n(&ring.words[i], __ATOMIC_RELAXED), why);
      std::vector<Packet> decoded;
      if (size && i + size <= ringBytes_ / 4)
        for (size_t k = 0; k < size; ++k)
          dwords.push_back(
              __atomic_load_n(&ring.words[i + k], __ATOMIC_RELAXED));
      if (dwords.empty() || !decodePackets(dwords, decoded, why) ||
          decoded.size() != 1)
        return fault(kDmaPacketFaultSlot, q, at);
      const Packet &p = decoded[0];
      for (bool ran = p.kind == Packet::Kind::Nop; !ran;) {
        switch (memory.execute(p, 0, stats, why)) {
        case PacketExecutor::Step::Done:
          ran = true;
          --left;
          break;
        case PacketExecutor::Step::Fault:
          return fault(kDmaPacketFaultSlot, q, at);
        case PacketExecutor::Step::Blocked:
          if (sync.aborted() || stopped())
            return stopWriters();
          if (CpuCallSync::nowNs() - since > sync.timeoutNs()) {
            int64_t slot = -1;
            if (memory.flagOf(p.addr[0], slot) < 0) // attachPackets refuses
              return fault(kDmaPacketFaultSlot, q, at);
            uint32_t seen =
                __atomic_load_n(reinterpret_cast<const uint32_t *>(p.addr[0]),
                                __ATOMIC_ACQUIRE);
            return fault(dmaFlagSlot(int(slot)), p.value, seen);
          }
          sched_yield();
        }
      }
      __atomic_store_n(&ring.rptr, at + 4 * size, __ATOMIC_RELEASE);
      since = CpuCallSync::nowNs();
    }
  }

  /// The writers give up at their next wait (their own error record).
  void stopWriters() {
    unsigned long long zero = 0;
    __atomic_compare_exchange_n(&writerError_[0], &zero, 3ull, false,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  }
  bool stopped() const {
    return __atomic_load_n(&writerError_[0], __ATOMIC_ACQUIRE) != 0;
  }
  /// After a failed call: the rings restart empty at the furthest
  /// reservation (what was written and not run is dropped).
  void resync() {
    for (size_t q : P_->packetQueues) {
      KernelQueue &k = queues_[q];
      unsigned long long end = std::max(k.reserve, k.committed);
      k.reserve = k.committed = end;
      rings_[q]->rptr = rings_[q]->wptr = rings_[q]->doorbell = end;
    }
  }
  static bool failed(std::string &error) {
    error = "a wait of the DMA path failed (its error record says which)";
    return false;
  }

  std::shared_ptr<const DmaProgram> P_;
  const uint64_t ringBytes_;
  std::unique_ptr<HostKernel> writer_;
  RunFn run_;
  std::vector<KernelQueue> queues_;
  std::vector<std::unique_ptr<Ring>> rings_;
  unsigned long long writerError_[4] = {0, 0, 0, 0};
  std::atomic<bool> writerDone_{false};
};

} // namespace

std::unique_ptr<CommKernel>
sdma::rt::createCpuRingKernel(std::shared_ptr<const DmaProgram> program,
                              uint64_t ringBytes, const std::string &compiler,
                              const std::string &cacheDirectory,
                              std::string &error) {
  if (!program || !program->packets) {
    error = "internal: kernel-submitted DMA without packets";
    return nullptr;
  }
  size_t largest = 0;
  for (const std::vector<Packet> &queue : program->decodedPackets)
    for (const Packet &p : queue)
      largest = std::max(largest, p.size);
  if (!checkRingBytes(ringBytes, largest, error))
    return nullptr;
  std::optional<std::string> writer =
      emitRingWriter(*program->packets, RingFault::None, error);
  if (!writer)
    return nullptr;
  std::unique_ptr<HostKernel> kernel = HostKernel::build(
      std::string(kRingCpuPrelude) + *writer + kRingCpuEntry, compiler,
      cacheDirectory, "the ring writer of " + program->packets->program, error);
  if (!kernel)
    return nullptr;
  auto run = kernel->entry<RunFn>("sdma_ring_cpu_run", error);
  if (!run)
    return nullptr;
  return std::make_unique<CpuRingKernel>(std::move(program), ringBytes,
                                         std::move(kernel), run);
}
