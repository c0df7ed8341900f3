//===- LdstCpuExecutor.cpp - a load/store kernel on the CPU ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstCpuExecutor.h"
#include "host/HostCompile.h"
#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sys/file.h>
#include <unistd.h>

using namespace sdma::rt;

/// The most host threads one run may start.
static constexpr uint64_t kMaxHostThreads = 8192;

namespace {

// Builds the kernel's table and runs every thread of every block of every
// rank at once (ranks wait on each other).
const char *kCpuEntry = R"SDMA(
extern "C" int sdma_cpu_run_ranks(char **bufs, unsigned long long **flags,
                                  unsigned int **sync,
                                  unsigned long long *error,
                                  unsigned long long timeoutNs,
                                  unsigned long long chunk,
                                  unsigned long long epoch,
                                  unsigned long long *epochs,
                                  unsigned long long **arrive, int blocks,
                                  int threads, int rankBegin, int rankEnd,
                                  unsigned long long rowBytes,
                                  long long **counts) {
  SdmaTable table;
  for (int i = 0; i < SDMA_RANKS * SDMA_BUFFERS; ++i)
    table.buf[i] = bufs[i];
  for (int r = 0; r < SDMA_RANKS; ++r) {
    table.flags[r] = flags[r];
    table.sync[r] = sync[r];
  }
  table.error = error;
  table.timeoutNs = timeoutNs;
  table.epochs = epochs;
  for (int r = 0; r < SDMA_RANKS; ++r)
    table.arrive[r] = arrive ? arrive[r] : nullptr;
  table.errorMirror = nullptr; // `error` is host memory here
  table.rowBytes = rowBytes;
  for (int i = 0; i < 2; ++i) {
    table.countsIn[i] = counts ? counts[i] : nullptr;
    table.countsOut[i] = counts ? counts[2 + i] : nullptr;
  }
  sdma_ntid = threads;
  sdma_nbid = blocks;
  return sdma_host_launch(
      (rankEnd - rankBegin) * blocks, threads, [&](int group, int thread) {
        sdma_tid = thread;
        sdma_bid = group % blocks;
        sdma_bid_y = group / blocks;
        sdma_ldst(table, chunk, epoch, rankBegin);
      });
}
extern "C" int sdma_cpu_run(char **bufs, unsigned long long **flags,
                            unsigned int **sync, unsigned long long *error,
                            unsigned long long timeoutNs,
                            unsigned long long chunk, unsigned long long epoch,
                            int blocks, int threads) {
  return sdma_cpu_run_ranks(bufs, flags, sync, error, timeoutNs, chunk, epoch,
                            nullptr, nullptr, blocks, threads, 0, SDMA_RANKS,
                            0, nullptr);
}
)SDMA";

/// The guard zone on each side of a buffer of `bytes` (a multiple of 16).
size_t guardBytes(uint64_t bytes) {
  size_t guard = std::min<uint64_t>(std::max<uint64_t>(bytes, 4096), 1 << 20);
  return (guard + 15) & ~size_t(15); // keep the buffer 16-byte aligned
}

/// A run whose host threads could not all be started (none ran).
std::string threadError(int status) {
  return "cannot start the kernel's host threads: " +
         std::string(std::strerror(status)) +
         " (fewer blocks or threads per block, or a higher thread limit)";
}

} // namespace

/// The kernel's error record (flag wait or rank barrier timed out) in words;
/// false if it holds one.
static bool readErrorRecord(const unsigned long long record[5],
                            std::string &error) {
  if (!record[0])
    return true;
  error = "rank " + std::to_string(record[1]) +
          (static_cast<int64_t>(record[2]) < 0
               ? ": its blocks did not all reach a rank barrier within the "
                 "timeout"
               : " waited too long for flag slot " + std::to_string(record[2]) +
                     " to reach " + std::to_string(record[3]) +
                     "; it stayed at " + std::to_string(record[4]));
  return false;
}

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
  std::string text =
      std::string(kHostPrelude) + (options.stagedOps ? kStagedOpsDefine : "") +
      (options.stageCap > 0
           ? "#define SDMA_STAGE_CAP " + std::to_string(options.stageCap) + "\n"
           : std::string()) +
      program.source + kCpuEntry;
  void *handle =
      compileHostObject(text, options.compiler, options.cacheDirectory,
                        "the kernel of " + program.schedule, error);
  return handle ? load(program, options, handle, error) : nullptr;
}

std::unique_ptr<LdstCpuExecutor>
LdstCpuExecutor::load(const LdstProgram &program, const LdstCpuOptions &options,
                      void *handle, std::string &error) {
  std::unique_ptr<LdstCpuExecutor> executor(
      new LdstCpuExecutor(program, options));
  executor->handle_ = handle;
  executor->run_ =
      reinterpret_cast<RunFn>(dlsym(executor->handle_, "sdma_cpu_run"));
  executor->runRanks_ = reinterpret_cast<RunRanksFn>(
      dlsym(executor->handle_, "sdma_cpu_run_ranks"));
  if (!executor->run_ || !executor->runRanks_) {
    const char *why = dlerror();
    error = std::string("loading the host kernel: ") + (why ? why : "?");
    return nullptr;
  }
  executor->flags_.assign(
      program.ranks,
      std::vector<unsigned long long>(std::max(1, program.flagSlots), 0));
  executor->sync_.assign(program.ranks, std::vector<unsigned int>(2, 0));
  return executor;
}

LdstCpuExecutor::~LdstCpuExecutor() {
  if (handle_)
    dlclose(handle_);
}

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
  std::vector<char *> buffers;
  std::vector<unsigned long long *> flags;
  std::vector<unsigned int *> sync;
  for (int r = 0; r < ranks; ++r) {
    for (size_t b = 0; b < B; ++b) {
      uint64_t want = uint64_t(program_.buffers[b].chunks) * chunk;
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
      buffers.push_back(reinterpret_cast<char *>(v.data() + lead));
    }
    flags.push_back(flags_[r].data());
    sync.push_back(sync_[r].data());
  }
  unsigned long long record[5] = {0, 0, 0, 0, 0};
  if (int status = run_(buffers.data(), flags.data(), sync.data(), record,
                        options_.timeoutNs, chunk, epoch_++,
                        blocks ? blocks : options_.blocks, options_.threads)) {
    error = threadError(status);
    return false;
  }
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
  return readErrorRecord(record, error);
}

bool LdstCpuExecutor::runRanks(const RankPointers &pointers, size_t chunkBytes,
                               int begin, int end, std::string &error,
                               int blocks) {
  int ranks = program_.ranks;
  size_t B = program_.buffers.size();
  if (begin < 0 || end > ranks || begin >= end ||
      pointers.buffers.size() != ranks * B ||
      pointers.flags.size() != size_t(ranks) ||
      pointers.sync.size() != size_t(ranks)) {
    error = "runRanks: ranks [" + std::to_string(begin) + ", " +
            std::to_string(end) + ") or the pointer tables do not fit the " +
            std::to_string(ranks) + "-rank program";
    return false;
  }
  unsigned long long own[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  unsigned long long *record =
      pointers.errorRecord ? pointers.errorRecord : own;
  if (int status = runRanks_(
          const_cast<char **>(pointers.buffers.data()),
          const_cast<unsigned long long **>(pointers.flags.data()),
          const_cast<unsigned int **>(pointers.sync.data()), record,
          options_.timeoutNs, chunkBytes, epoch_++, pointers.epochs,
          pointers.arrive.empty()
              ? nullptr
              : const_cast<unsigned long long **>(pointers.arrive.data()),
          blocks ? blocks : options_.blocks, options_.threads, begin, end,
          pointers.rowBytes, const_cast<long long **>(pointers.counts))) {
    error = threadError(status);
    return false;
  }
  return readErrorRecord(record, error);
}
