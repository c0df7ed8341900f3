//===- HostLdstKernel.cpp - a load/store program on host threads ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/HostLdstKernel.h"
#include "sdma/runtime/LdstPrelude.h"

#include <cstring>

using namespace sdma::rt;

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
                                  long long **counts,
                                  unsigned long long callTag,
                                  unsigned long long **tags, char **ll,
                                  unsigned long long *llSeq,
                                  unsigned long long llPairBytes) {
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
  table.callTag = callTag;
  for (int r = 0; r < SDMA_RANKS; ++r)
    table.tags[r] = tags ? tags[r] : nullptr;
#if SDMA_LL
  for (int r = 0; r < SDMA_RANKS; ++r)
    table.ll[r] = ll ? ll[r] : nullptr;
  table.llSeq = llSeq;
  table.llPairBytes = llPairBytes;
#else
  (void)ll, (void)llSeq, (void)llPairBytes;
#endif
#if SDMA_LL
  if (table.ll[0])
    return sdma_host_launch(blocks, rankEnd - rankBegin, threads, [&] {
      sdma_ldst_ll(table, chunk, epoch, rankBegin);
    });
#endif
  return sdma_host_launch(blocks, rankEnd - rankBegin, threads,
                          [&] { sdma_ldst(table, chunk, epoch, rankBegin); });
}
extern "C" int sdma_cpu_run(char **bufs, unsigned long long **flags,
                            unsigned int **sync, unsigned long long *error,
                            unsigned long long timeoutNs,
                            unsigned long long chunk, unsigned long long epoch,
                            int blocks, int threads) {
  return sdma_cpu_run_ranks(bufs, flags, sync, error, timeoutNs, chunk, epoch,
                            nullptr, nullptr, blocks, threads, 0, SDMA_RANKS,
                            0, nullptr, 0, nullptr, nullptr, nullptr, 0);
}
)SDMA";

/// A run whose host threads could not all be started (none ran).
std::string threadError(int status) {
  return "cannot start the kernel's host threads: " +
         std::string(std::strerror(status)) +
         " (fewer blocks or threads per block, or a higher thread limit)";
}

} // namespace

std::unique_ptr<HostLdstKernel>
HostLdstKernel::build(const LdstProgram &program, const LdstCpuOptions &options,
                      std::string &error) {
  std::string text =
      std::string(options.stagedOps ? kStagedOpsDefine : "") +
      (options.stageCap > 0
           ? "#define SDMA_STAGE_CAP " + std::to_string(options.stageCap) + "\n"
           : std::string()) +
      program.source + kCpuEntry;
  std::unique_ptr<HostKernel> kernel =
      HostKernel::build(text, options.compiler, options.cacheDirectory,
                        "the kernel of " + program.schedule, error);
  if (!kernel)
    return nullptr;
  // sdma_cpu_run (every rank, no job) is sdma_cpu_run_ranks's shorthand.
  std::string why;
  RunFn run = kernel->entry<RunFn>("sdma_cpu_run_ranks", why);
  if (!run) {
    error = "loading the host kernel: " + why;
    return nullptr;
  }
  return std::unique_ptr<HostLdstKernel>(
      new HostLdstKernel(std::move(kernel), run));
}

bool HostLdstKernel::run(const RankPointers &pointers,
                         unsigned long long chunkBytes,
                         unsigned long long epoch, uint64_t timeoutNs,
                         int blocks, int threads, int begin, int end,
                         std::string &error) const {
  if (int status = run_(
          const_cast<char **>(pointers.buffers.data()),
          const_cast<unsigned long long **>(pointers.flags.data()),
          const_cast<unsigned int **>(pointers.sync.data()),
          pointers.errorRecord, timeoutNs, chunkBytes, epoch, pointers.epochs,
          pointers.arrive.empty()
              ? nullptr
              : const_cast<unsigned long long **>(pointers.arrive.data()),
          blocks, threads, begin, end, pointers.rowBytes,
          const_cast<long long **>(pointers.counts), pointers.callTag,
          pointers.tags.empty()
              ? nullptr
              : const_cast<unsigned long long **>(pointers.tags.data()),
          pointers.ll.empty() ? nullptr
                              : const_cast<char **>(pointers.ll.data()),
          pointers.llSeq, pointers.llPairBytes)) {
    error = threadError(status);
    return false;
  }
  return true;
}

bool HostLdstKernel::readErrorRecord(const unsigned long long record[5],
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
