//===- LdstCpuExecutor.cpp - a load/store kernel on the CPU ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstCpuExecutor.h"
#include "host/HostLdstKernel.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Limits.h"

#include <algorithm>
#include <cstdint>

using namespace sdma::rt;

/// The most host threads one run may start.
static constexpr uint64_t kMaxHostThreads = 8192;

namespace {

/// The guard zone on each side of a buffer of `bytes` (a multiple of 16).
size_t guardBytes(uint64_t bytes) {
  size_t guard = std::min<uint64_t>(std::max<uint64_t>(bytes, 4096), 1 << 20);
  return (guard + 15) & ~size_t(15); // keep the buffer 16-byte aligned
}

} // namespace

bool LdstCpuExecutor::checkRun(const LdstProgram &program,
                               const LdstCpuOptions &options,
                               const HostMemory *memory, int blocks,
                               std::string &error) {
  if (options.threads < 1 || options.threads > 1024 || options.blocks < 1 ||
      options.blocks > 64 || blocks < 0 || blocks > 64) {
    error = "threads per block must be 1..1024 and blocks per rank 1..64";
    return false;
  }
  CheckedSize need;
  need.addProduct({uint64_t(program.ranks),
                   uint64_t(std::max(1, program.flagSlots)),
                   sizeof(unsigned long long)});
  if (!memory)
    return options.budget.admit(
        need.value(),
        "the flag slots of " + std::to_string(program.ranks) + " ranks", error);
  // One host thread per GPU thread, all at once (ranks wait on each other).
  uint64_t hostThreads = uint64_t(program.ranks) *
                         uint64_t(blocks ? blocks : options.blocks) *
                         uint64_t(options.threads);
  if (hostThreads > kMaxHostThreads) {
    error = std::to_string(hostThreads) +
            " host threads needed (ranks x blocks x threads), more than " +
            std::to_string(kMaxHostThreads) +
            ": use fewer blocks or threads per block";
    return false;
  }
  if (!memory->matches(program.layout(), error, /*withFlags=*/false))
    return false;
  need.add(memory->totalBytes());
  for (int r = 0; r < program.ranks; ++r)
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      uint64_t bytes = memory->bufferBytes(r, b);
      need.add(checkedAdd(bytes, 2 * guardBytes(bytes) + 16));
    }
  return options.budget.admit(need.value(),
                              "a run of " + program.schedule.substr(0, 64) +
                                  " on the CPU (host memory, its guarded "
                                  "copies and the flags)",
                              error);
}

std::unique_ptr<LdstCpuExecutor>
LdstCpuExecutor::create(const LdstProgram &program,
                        const LdstCpuOptions &options, std::string &error) {
  if (!checkRun(program, options, nullptr, 0, error))
    return nullptr;
  std::unique_ptr<HostLdstKernel> kernel =
      HostLdstKernel::build(program, options, error);
  if (!kernel)
    return nullptr;
  std::unique_ptr<LdstCpuExecutor> executor(
      new LdstCpuExecutor(program, options));
  executor->kernel_ = std::move(kernel);
  executor->flags_.assign(
      program.ranks,
      std::vector<unsigned long long>(std::max(1, program.flagSlots), 0));
  executor->sync_.assign(program.ranks, std::vector<unsigned int>(2, 0));
  return executor;
}

LdstCpuExecutor::LdstCpuExecutor(const LdstProgram &program,
                                 const LdstCpuOptions &options)
    : program_(program), options_(options) {}

LdstCpuExecutor::~LdstCpuExecutor() = default;

bool LdstCpuExecutor::run(HostMemory &memory, std::string &error, int blocks) {
  if (!checkRun(program_, options_, &memory, blocks, error))
    return false;
  size_t chunk = memory.chunkBytes();
  int ranks = program_.ranks;
  size_t B = program_.buffers.size();
  // Each buffer runs in a copy with guard zones on both sides, so that a
  // kernel writing past a buffer is reported, not a corrupted heap.
  constexpr uint8_t kGuard = 0xA5;
  std::vector<std::vector<uint8_t>> staged(ranks * B);
  std::vector<size_t> guards(ranks * B);
  HostLdstKernel::RankPointers pointers;
  for (int r = 0; r < ranks; ++r) {
    for (size_t b = 0; b < B; ++b) {
      // A count table's entries are 8 bytes, whatever the chunk.
      uint64_t want = program_.buffers[b].bytes(chunk);
      if (memory.bufferBytes(r, b) != want) {
        error = "rank " + std::to_string(r) + " buffer '" +
                program_.buffers[b].name + "' has " +
                std::to_string(memory.bufferBytes(r, b)) +
                " bytes; the program needs " + std::to_string(want);
        return false;
      }
      size_t guard = guardBytes(want);
      std::vector<uint8_t> &v = staged[r * B + b];
      v.assign(want + 2 * guard + 16, kGuard);
      // 16-byte alignment of the buffer itself, as cudaMalloc gives.
      size_t lead =
          guard +
          ((16 - reinterpret_cast<uintptr_t>(v.data() + guard) % 16) % 16);
      guards[r * B + b] = lead;
      std::copy(memory.buffer(r, b), memory.buffer(r, b) + want,
                v.begin() + lead);
      pointers.buffers.push_back(reinterpret_cast<char *>(v.data() + lead));
    }
    pointers.flags.push_back(flags_[r].data());
    pointers.sync.push_back(sync_[r].data());
  }
  // The kernel's whole record: status, rank, slot, awaited, seen, then
  // sdma.copyv's count error (kind, rank * kMaxRanks + peer, count).
  unsigned long long record[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  pointers.errorRecord = record;
  if (!kernel_->run(pointers, chunk, epoch_++, options_.timeoutNs,
                    blocks ? blocks : options_.blocks, options_.threads, 0,
                    ranks, error))
    return false;
  for (int r = 0; r < ranks; ++r)
    for (size_t b = 0; b < B; ++b) {
      const std::vector<uint8_t> &v = staged[r * B + b];
      size_t lead = guards[r * B + b], n = memory.bufferBytes(r, b);
      size_t before = 0, after = 0;
      for (size_t i = 0; i < lead; ++i)
        before += v[i] != kGuard;
      for (size_t i = lead + n; i < v.size(); ++i)
        after += v[i] != kGuard;
      if (before || after) {
        error = "the kernel wrote outside rank " + std::to_string(r) +
                " buffer '" + program_.buffers[b].name + "' (" +
                std::to_string(n) + " bytes): " + std::to_string(before) +
                " bytes before it, " + std::to_string(after) + " after it";
        return false;
      }
      std::copy(v.begin() + lead, v.begin() + lead + n, memory.buffer(r, b));
    }
  if (record[5]) {
    error = "rank " + std::to_string(record[6] / sdma::kMaxRanks) +
            " was to send " + std::to_string(int64_t(record[7])) +
            " rows to rank " + std::to_string(record[6] % sdma::kMaxRanks) +
            ": a count out of range (nothing was sent for it)";
    return false;
  }
  return HostLdstKernel::readErrorRecord(record, error);
}
