//===- RingSimulator.cpp - ring writer kernels against simulated engines --===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// simulateRing (Ring.h): the ring writer kernel runs on host threads (one
// per wavefront, a block per queue); every queue has a simulated engine:
//   - fetch, in the writer's thread at the moment it rings the doorbell:
//     everything between the engine's fetch offset and the doorbell value
//     must be whole packets whose every dword was stored since the slot was
//     last fetched (a shadow bit per ring dword), none crossing the ring's
//     end, and the doorbell may not run ahead of the read pointer by more
//     than the ring. Fetched packets are copied out and their slots cleared;
//   - execute, on the engine's own thread: each fetched packet must be the
//     plan's next one (an ordering packet exactly; a data packet one of the
//     current batch not yet seen), then runs on the packet simulator's
//     machine (PacketMachine.h; one machine for all engines, serialised),
//     polls retrying until the timeout; then the read pointer advances.
// The first fault stops everything (the writers see it in their error
// record) and is what simulateRing reports.
//
//===----------------------------------------------------------------------===//

#include "host/HostKernel.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Ring.h"
#include "sim/PacketMachine.h"
#include "sim/RingCpu.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::packetsim;
using namespace sdma::rt::ringcpu;

namespace {

struct Fetched {
  std::chrono::steady_clock::time_point when; // fetched at
  uint64_t offset = 0;                        // write offset of its first byte
  std::vector<uint32_t> dwords;
  Packet packet;
};

/// What the plan has next on a queue: one ordering packet, or a batch of
/// data packets in any order.
struct Batch {
  bool data = false;
  std::vector<std::vector<uint32_t>> packets;
  std::vector<bool> seen;
  size_t left = 0;
};

struct SimQueue {
  const PacketQueue *queue = nullptr;
  std::vector<uint32_t> ring;
  std::unique_ptr<std::atomic<uint8_t>[]> written;
  unsigned long long rptr = 0, wptr = 0, doorbell = 0;
  std::mutex m;
  std::condition_variable cv;
  uint64_t fetched = 0; // write offset fetched up to
  std::deque<Fetched> pending;
  std::vector<Batch> expected;
  size_t batch = 0;
  std::string name() const {
    return "rank " + std::to_string(queue->rank) + " engine " +
           std::to_string(queue->engine);
  }
};

std::string at(uint64_t offset, uint64_t bytes) {
  return "ring byte " + std::to_string(offset % bytes) + " (write offset " +
         std::to_string(offset) + ")";
}

const char *kindName(Packet::Kind kind) {
  switch (kind) {
  case Packet::Kind::Nop:
    return "NOP";
  case Packet::Kind::CopyLinear:
    return "COPY_LINEAR";
  case Packet::Kind::CopyBroadcast:
    return "COPY_LINEAR broadcast";
  case Packet::Kind::CopySwap:
    return "COPY_LINEAR_SWAP";
  case Packet::Kind::Fence:
    return "FENCE";
  case Packet::Kind::AtomicAdd64:
    return "ATOMIC ADD64";
  case Packet::Kind::PollRegMem:
    return "POLL_REGMEM";
  case Packet::Kind::Timestamp:
    return "TIMESTAMP";
  case Packet::Kind::Trap:
    return "TRAP";
  }
  return "?";
}

class RingModel {
public:
  RingModel(const PacketPlan &plan, HostMemory &memory,
            const RingSimOptions &options)
      : plan(plan), options(options), machine(plan, memory),
        queues(plan.queues.size()) {}

  bool setUp(std::string &error);
  bool run(RunFn runFn, std::string &error, RingSimStats &stats);

  // Kernel hooks.
  void store(uint64_t q, unsigned index) {
    queues[q].written[index].store(1, std::memory_order_release);
  }
  void doorbell(uint64_t q, uint64_t value);

private:
  void fail(const std::string &what) {
    std::lock_guard<std::mutex> lock(faultMutex);
    if (fault.empty())
      fault = what;
    stop.store(true);
    // The writers give up at their next wait.
    __atomic_store_n(&errorRecord[0], 3ull, __ATOMIC_RELEASE);
    for (SimQueue &q : queues)
      q.cv.notify_all();
  }
  bool fetchOne(SimQueue &q, uint64_t value);
  void engine(SimQueue &q);
  bool matches(SimQueue &q, const Fetched &f);
  std::string describe(const std::vector<uint32_t> &dwords);

  const PacketPlan &plan;
  const RingSimOptions &options;
  uint64_t ringBytes = 0;
  Machine machine;
  std::mutex machineMutex;
  uint64_t clock = 0;
  std::vector<SimQueue> queues;
  std::vector<KernelQueue> kernelQueues;
  std::mutex faultMutex;
  std::string fault;
  std::atomic<bool> stop{false}, writersDone{false};
  unsigned long long errorRecord[4] = {0, 0, 0, 0};
  std::atomic<uint64_t> packets{0}, nops{0}, wraps{0}, doorbells{0},
      bytesMoved{0};
  PacketSimStats machineStats;
};

bool RingModel::setUp(std::string &error) {
  const uint64_t chunk = machine.memory.chunkBytes();
  size_t largest = 0;
  for (size_t i = 0; i < queues.size(); ++i) {
    SimQueue &q = queues[i];
    q.queue = &plan.queues[i];
    std::vector<uint32_t> image;
    std::vector<Packet> decoded;
    if (!patchQueue(plan, *q.queue, chunk, image, error) ||
        !decodePackets(image, decoded, error)) {
      error = q.name() + ": " + error;
      return false;
    }
    std::vector<size_t> batch = ringBatches(*q.queue, decoded);
    for (size_t k = 0; k < decoded.size(); ++k) {
      const Packet &p = decoded[k];
      largest = std::max(largest, p.size);
      if (!k || batch[k] != batch[k - 1])
        q.expected.push_back(Batch{});
      Batch &b = q.expected.back();
      b.data = p.kind == Packet::Kind::CopyLinear ||
               p.kind == Packet::Kind::CopyBroadcast ||
               p.kind == Packet::Kind::CopySwap;
      b.packets.emplace_back(image.begin() + p.dword,
                             image.begin() + p.dword + p.size);
      b.seen.push_back(false);
      ++b.left;
    }
  }
  // 0: the smallest ring the plan takes.
  ringBytes = options.ringBytes;
  if (!ringBytes)
    for (ringBytes = 64; ringBytes < 8 * largest;)
      ringBytes *= 2;
  if (!checkRingBytes(ringBytes, largest, error))
    return false;
  for (SimQueue &q : queues) {
    q.ring.assign(ringBytes / 4, 0);
    q.written = std::make_unique<std::atomic<uint8_t>[]>(ringBytes / 4);
  }
  return true;
}

bool RingModel::fetchOne(SimQueue &q, uint64_t value) {
  const uint64_t bytes = ringBytes, offset = q.fetched;
  const size_t i = (offset % bytes) / 4;
  auto bad = [&](const std::string &what) {
    fail(q.name() + ", " + at(offset, bytes) + ": " + what);
    return false;
  };
  if (!q.written[i].load(std::memory_order_acquire))
    return bad("the doorbell rang with write pointer " + std::to_string(value) +
               " but no packet was written here since the engine last read "
               "it");
  std::string why;
  size_t size = packetDwords(q.ring[i], why);
  if (!size)
    return bad("not a packet: " + why);
  if (i + size > bytes / 4)
    return bad("a " + std::to_string(size) +
               "-dword packet crosses the ring's end (" +
               std::to_string(bytes) +
               " bytes): the writer must fill the tail with NOPs and wrap");
  if (offset + 4 * size > value)
    return bad("the doorbell (write pointer " + std::to_string(value) +
               ") ends inside this " + std::to_string(size) + "-dword packet");
  // A NOP's extra dwords are skipped, never read: only its header counts.
  const bool nop = (q.ring[i] & 0xff) == 0;
  for (size_t k = 0; k < (nop ? 1 : size); ++k)
    if (!q.written[i + k].load(std::memory_order_acquire))
      return bad("the doorbell rang with write pointer " +
                 std::to_string(value) + " before dword " + std::to_string(k) +
                 " of this " + std::to_string(size) +
                 "-dword packet was written: a packet must be visible before "
                 "the doorbell");
  Fetched f;
  f.when = std::chrono::steady_clock::now();
  f.offset = offset;
  for (size_t k = 0; k < size; ++k) {
    f.dwords.push_back(__atomic_load_n(&q.ring[i + k], __ATOMIC_RELAXED));
    q.written[i + k].store(0, std::memory_order_relaxed);
  }
  std::vector<Packet> decoded;
  if (!decodePackets(f.dwords, decoded, why))
    return bad(why);
  f.packet = decoded[0];
  if (f.packet.kind == Packet::Kind::Nop && f.packet.extra &&
      !plan.target.nopCount)
    return bad("a NOP with a count of " + std::to_string(f.packet.extra) +
               " extra dwords, which target " + plan.target.name +
               " does not take (pad with single-dword NOPs)");
  if ((offset + 4 * size) % bytes == 0) // the next packet starts at 0
    ++wraps;
  q.fetched = offset + 4 * size;
  q.pending.push_back(std::move(f));
  return true;
}

void RingModel::doorbell(uint64_t id, uint64_t value) {
  SimQueue &q = queues[id];
  std::lock_guard<std::mutex> lock(q.m);
  ++doorbells;
  uint64_t read = __atomic_load_n(&q.rptr, __ATOMIC_ACQUIRE);
  if (value % 4 || value < q.fetched)
    return fail(q.name() + ": doorbell " + std::to_string(value) +
                " is not a dword offset at or past the engine's fetch offset " +
                std::to_string(q.fetched));
  if (value - read > ringBytes)
    return fail(q.name() + ": doorbell " + std::to_string(value) +
                " runs more than the ring's " + std::to_string(ringBytes) +
                " bytes ahead of the read pointer " + std::to_string(read) +
                ": the writer overwrote packets the engine had not read");
  while (q.fetched < value && !stop.load())
    if (!fetchOne(q, value))
      return;
  q.cv.notify_all();
}

std::string RingModel::describe(const std::vector<uint32_t> &dwords) {
  std::vector<Packet> decoded;
  std::string why;
  if (!decodePackets(dwords, decoded, why) || decoded.size() != 1)
    return "an undecodable packet";
  const Packet &p = decoded[0];
  std::string text = kindName(p.kind);
  for (int k = 0; k < p.numAddrs; ++k)
    text += std::string(k ? ", " : " ") + machine.name(p.addr[k]);
  if (p.bytes)
    text += " (" + std::to_string(p.bytes) + " bytes)";
  return text;
}

bool RingModel::matches(SimQueue &q, const Fetched &f) {
  auto bad = [&](const std::string &expected) {
    fail(q.name() + ", " + at(f.offset, ringBytes) + ": " + describe(f.dwords) +
         " is not what the plan has next: " + expected);
    return false;
  };
  if (q.batch == q.expected.size())
    return bad("the queue's packets are all done (a packet written twice?)");
  Batch &b = q.expected[q.batch];
  for (size_t k = 0; k < b.packets.size(); ++k)
    if (!b.seen[k] && b.packets[k] == f.dwords) {
      b.seen[k] = true;
      if (--b.left == 0)
        ++q.batch;
      return true;
    }
  size_t k = 0;
  while (b.seen[k])
    ++k;
  return bad(std::string(b.data ? "one of the " + std::to_string(b.left) +
                                      " data packets left in batch "
                                : "batch ") +
             std::to_string(q.batch) + ", e.g. " + describe(b.packets[k]) +
             " (a packet lost, duplicated or written out of order)");
}

void RingModel::engine(SimQueue &q) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::nanoseconds(options.timeoutNs);
  for (;;) {
    Fetched f;
    {
      std::unique_lock<std::mutex> lock(q.m);
      auto ready = [&] {
        return stop.load() || !q.pending.empty() || writersDone.load();
      };
      // Done with its packets, the engine waits for the writers to finish
      // (they time out themselves); otherwise for at most the timeout.
      if (q.batch == q.expected.size())
        q.cv.wait(lock, ready);
      else
        q.cv.wait_until(lock, deadline, ready);
      if (stop.load())
        return;
      if (q.pending.empty()) {
        if (q.batch == q.expected.size()) {
          if (writersDone.load())
            return;
          continue;
        }
        if (writersDone.load() || Clock::now() >= deadline)
          return fail(q.name() + ": " +
                      std::to_string(q.expected[q.batch].left) +
                      " packets of batch " + std::to_string(q.batch) + " of " +
                      std::to_string(q.expected.size()) +
                      " never reached the engine, e.g. " +
                      describe(q.expected[q.batch].packets[0]));
        continue;
      }
      f = q.pending.front();
      q.pending.pop_front();
    }
    // A lagging engine: nothing runs until a writer of this queue has
    // found its ring full (or all writers are done), so every queue that
    // outgrows its ring back-pressures, however the threads are scheduled.
    if (options.lagUntilFull)
      while (!__atomic_load_n(&kernelQueues[&q - queues.data()].fullWaits,
                              __ATOMIC_ACQUIRE) &&
             !writersDone.load() && !stop.load())
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    // A slow engine: each packet runs no sooner than the latency after
    // the doorbell that fetched it, so writers find the ring full.
    if (options.engineLatencyNs)
      std::this_thread::sleep_until(
          f.when + std::chrono::nanoseconds(options.engineLatencyNs));
    if (f.packet.kind == Packet::Kind::Nop) {
      ++nops;
    } else {
      if (!matches(q, f))
        return;
      for (;;) {
        std::string what;
        Machine::Step step;
        {
          std::lock_guard<std::mutex> lock(machineMutex);
          step = machine.execute(f.packet, ++clock, machineStats, what);
          if (step == Machine::Step::Blocked && Clock::now() >= deadline)
            what = "a wait never completes: " + machine.pollState(f.packet);
        }
        if (step == Machine::Step::Done)
          break;
        if (step == Machine::Step::Fault || !what.empty())
          return fail(q.name() + ", " + at(f.offset, ringBytes) + ": " + what);
        if (stop.load())
          return;
        std::this_thread::yield();
      }
      ++packets;
    }
    __atomic_store_n(&q.rptr, f.offset + 4 * f.dwords.size(), __ATOMIC_RELEASE);
    deadline = Clock::now() + std::chrono::nanoseconds(options.timeoutNs);
  }
}

bool RingModel::run(RunFn runFn, std::string &error, RingSimStats &stats) {
  const int R = plan.ranks;
  const size_t B = plan.buffers.size();
  std::vector<unsigned long long> buf(R * B), flags(R), ts(R);
  for (int r = 0; r < R; ++r) {
    for (size_t b = 0; b < B; ++b)
      buf[r * B + b] = dataAddress(plan, r, static_cast<int>(b));
    flags[r] = flagAddress(r, 0);
    ts[r] = timestampAddress(r, 0);
    std::fill(machine.memory.flags(r).begin(), machine.memory.flags(r).end(),
              0);
    machine.memory.flags(r)[kLaunchFlag] = 1;
  }
  kernelQueues.resize(queues.size());
  for (size_t i = 0; i < queues.size(); ++i) {
    // Rings persist across collectives: this one starts where the last
    // left off, `startBeforeEnd` bytes before the ring's end.
    uint64_t start =
        (ringBytes - options.startBeforeEnd % ringBytes) % ringBytes;
    SimQueue &q = queues[i];
    q.rptr = q.wptr = q.doorbell = q.fetched = start;
    kernelQueues[i] =
        KernelQueue{q.ring.data(), ringBytes, &q.rptr, &q.wptr, &q.doorbell,
                    start,         start,     i,       0,       0};
  }
  KernelArgs args{buf.data(),          flags.data(),
                  ts.data(),           machine.memory.chunkBytes(),
                  kernelQueues.data(), errorRecord,
                  options.timeoutNs,   -1};
  Hooks hooks{this,
              [](void *self, unsigned long long q, unsigned i) {
                static_cast<RingModel *>(self)->store(q, i);
              },
              [](void *self, unsigned long long q, unsigned long long v) {
                static_cast<RingModel *>(self)->doorbell(q, v);
              }};
  std::vector<std::thread> engines;
  for (SimQueue &q : queues)
    engines.emplace_back([this, &q] { engine(q); });
  if (int status =
          runFn(args, static_cast<int>(queues.size()), options.writers, hooks))
    fail("cannot start the kernel's " +
         std::to_string(queues.size() * options.writers) +
         " writer threads on the host: " + std::strerror(status));
  writersDone.store(true);
  for (SimQueue &q : queues) {
    std::lock_guard<std::mutex> lock(q.m);
    q.cv.notify_all();
  }
  for (std::thread &t : engines)
    t.join();
  stats.ringBytes = ringBytes;
  for (const PacketQueue &q : plan.queues)
    stats.longestQueueBytes =
        std::max<uint64_t>(stats.longestQueueBytes, 4 * q.image.size());
  stats.packets = packets;
  stats.nops = nops;
  stats.wraps = wraps;
  stats.doorbells = doorbells;
  stats.bytesMoved = machineStats.bytesMoved;
  for (const KernelQueue &q : kernelQueues)
    stats.fullWaits += q.fullWaits;
  if (!fault.empty()) {
    error = fault;
    return false;
  }
  if (errorRecord[0]) {
    const SimQueue &q = queues[errorRecord[1]];
    error =
        q.name() + ": the ring writer waited too long for " +
        (errorRecord[0] == 1
             ? "ring space (read pointer " + std::to_string(errorRecord[3]) +
                   ", needed " + std::to_string(errorRecord[2]) + ")"
             : "the packets reserved before its own to "
               "be committed (committed " +
                   std::to_string(errorRecord[3]) + ", its reservation at " +
                   std::to_string(errorRecord[2]) + ")");
    return false;
  }
  for (int r = 0; r < R; ++r) {
    uint64_t got = machine.memory.flags(r)[kDoneFlag];
    if (got != uint64_t(plan.done[r])) {
      error = "rank " + std::to_string(r) + ": completion flag ended at " +
              std::to_string(got) + ", expected " +
              std::to_string(plan.done[r]);
      return false;
    }
  }
  return true;
}
} // namespace

bool sdma::rt::simulateRing(const PacketPlan &plan, HostMemory &memory,
                            const RingSimOptions &options, std::string &error,
                            RingSimStats *stats) {
  RingSimStats local;
  RingSimStats &s = stats ? *stats : local;
  s = RingSimStats();
  const uint64_t chunk = memory.chunkBytes();
  if (!checkChunk(plan, chunk, error) || !checkLayout(plan, chunk, error) ||
      !memory.matches(plan.layout(), error))
    return false;
  if (options.startBeforeEnd % 4) {
    error = "a ring start " + std::to_string(options.startBeforeEnd) +
            " bytes before the end is not a whole number of dwords";
    return false;
  }
  if (options.writers < 1 || options.writers > 64) {
    error = "writers per queue must be 1..64";
    return false;
  }
  CheckedSize need;
  need.add(memory.totalBytes());
  need.addProduct(
      {plan.queues.size(), std::max<uint64_t>(options.ringBytes, 4096), 2});
  for (const PacketQueue &queue : plan.queues)
    need.addProduct(
        {queue.image.size(), 2 * sizeof(uint32_t) + sizeof(Packet)});
  if (!options.budget.admit(need.value(),
                            "the ring simulation of " +
                                plan.program.substr(0, 64) +
                                " (host memory, rings, expected packets)",
                            error))
    return false;
  if (plan.queues.size() * options.writers > 8192) {
    error = std::to_string(plan.queues.size() * options.writers) +
            " writer threads (queues x writers) exceed 8192: use fewer "
            "writers";
    return false;
  }
  std::optional<std::string> writer =
      emitRingWriter(plan, options.fault, error);
  if (!writer)
    return false;
  std::unique_ptr<HostKernel> kernel = HostKernel::build(
      std::string(kRingCpuPrelude) + *writer + kRingCpuEntry, options.compiler,
      options.cacheDirectory, "the ring writer of " + plan.program, error);
  if (!kernel)
    return false;
  std::string why;
  auto runFn = kernel->entry<RunFn>("sdma_ring_cpu_run", why);
  if (!runFn) {
    error = "the compiled ring writer has no sdma_ring_cpu_run";
    return false;
  }
  RingModel model(plan, memory, options);
  return model.setUp(error) && model.run(runFn, error, s);
}
