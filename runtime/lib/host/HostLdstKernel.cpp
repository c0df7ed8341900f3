//===- HostLdstKernel.cpp - a load/store program on host threads ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/HostLdstKernel.h"

#include "compile/KernelCache.h"
#include "sdma/runtime/LdstPrelude.h"

#include <cstring>

using namespace sdma::rt;

namespace {

// Builds the kernel's table and runs every thread of every block of every
// rank at once (ranks wait on each other).
#define SDMA_STRING(...) #__VA_ARGS__
#define SDMA_EXPANDED_STRING(...) SDMA_STRING(__VA_ARGS__)
// One launched rank's table words: HostLdstKernel::SdmaCpuRank's text.
const std::string kCpuRank =
    std::string(SDMA_EXPANDED_STRING(SDMA_CPU_RANK_STRUCT)) + "\n";

const char *kCpuEntry = R"SDMA(
static void sdma_cpu_table(const SdmaCpuRank &a, unsigned long long timeoutNs,
                           SdmaTable &table) {
  for (int i = 0; i < SDMA_RANKS * SDMA_BUFFERS; ++i)
    table.buf[i] = a.bufs[i];
  for (int r = 0; r < SDMA_RANKS; ++r) {
    table.flags[r] = a.flags[r];
    table.sync[r] = a.sync[r];
  }
  table.error = a.error;
  table.timeoutNs = timeoutNs;
  table.epochs = a.epochs;
  for (int r = 0; r < SDMA_RANKS; ++r)
    table.arrive[r] = a.arrive ? a.arrive[r] : nullptr;
  table.errorMirror = nullptr; // `error` is host memory here
  table.rowBytes = a.rowBytes;
  for (int i = 0; i < 2; ++i) {
    table.countsIn[i] = a.counts ? a.counts[i] : nullptr;
    table.countsOut[i] = a.counts ? a.counts[2 + i] : nullptr;
  }
  table.callTag = a.callTag;
  for (int r = 0; r < SDMA_RANKS; ++r)
    table.tags[r] = a.tags ? a.tags[r] : nullptr;
#if SDMA_LL
  for (int r = 0; r < SDMA_RANKS; ++r)
    table.ll[r] = a.ll ? a.ll[r] : nullptr;
  table.llSeq = a.llSeq;
  table.llPairBytes = a.llPairBytes;
#endif
}
// Ranks [rankBegin, rankEnd) with one table (`a.rank` unused): every
// thread of every block of every rank at once (ranks wait on each other).
extern "C" int sdma_cpu_run_ranks(const SdmaCpuRank *a,
                                  unsigned long long timeoutNs,
                                  unsigned long long chunk,
                                  unsigned long long epoch, int blocks,
                                  int threads, int rankBegin, int rankEnd) {
  SdmaTable table;
  sdma_cpu_table(*a, timeoutNs, table);
#if SDMA_LL
  if (table.ll[0])
    return sdma_host_launch(blocks, rankEnd - rankBegin, threads, [&] {
      sdma_ldst_ll(table, chunk, epoch, rankBegin);
    });
#endif
  return sdma_host_launch(blocks, rankEnd - rankBegin, threads,
                          [&] { sdma_ldst(table, chunk, epoch, rankBegin); });
}
// `count` ranks, each with its own table (the group launch, SDMA_GROUP on
// a GPU): launched rank y is a[y].rank; every one a low-latency call or
// none.
extern "C" int sdma_cpu_run_group(const SdmaCpuRank *a, int count,
                                  unsigned long long timeoutNs,
                                  unsigned long long chunk, int blocks,
                                  int threads) {
  SdmaTable *tables = new SdmaTable[count];
  for (int y = 0; y < count; ++y)
    sdma_cpu_table(a[y], timeoutNs, tables[y]);
  int status = sdma_host_launch(blocks, count, threads, [&] {
    const SdmaTable *T = &tables[SDMA_BID_Y];
    const int rank = a[SDMA_BID_Y].rank;
#if SDMA_LL
    if (T->ll[0]) {
      sdma_ll_call(T, rank, chunk);
      return;
    }
#endif
    sdma_ldst_rank(T, rank, T->epochs, chunk, 0);
  });
  delete[] tables;
  return status;
}
extern "C" int sdma_cpu_run(char **bufs, unsigned long long **flags,
                            unsigned int **sync, unsigned long long *error,
                            unsigned long long timeoutNs,
                            unsigned long long chunk, unsigned long long epoch,
                            int blocks, int threads) {
  SdmaCpuRank a = {bufs,    flags,   sync,    error,   nullptr,
                   nullptr, 0,       nullptr, 0,       nullptr,
                   nullptr, nullptr, 0,       0};
  return sdma_cpu_run_ranks(&a, timeoutNs, chunk, epoch, blocks, threads, 0,
                            SDMA_RANKS);
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
      program.source + kCpuRank + kCpuEntry;
  std::unique_ptr<HostKernel> kernel =
      HostKernel::build(text, options.compiler, options.cacheDirectory,
                        "the kernel of " + program.schedule, error);
  if (!kernel)
    return nullptr;
  // sdma_cpu_run (every rank, no job) is sdma_cpu_run_ranks's shorthand.
  std::string why;
  RunFn run = kernel->entry<RunFn>("sdma_cpu_run_ranks", why);
  GroupFn group =
      run ? kernel->entry<GroupFn>("sdma_cpu_run_group", why) : nullptr;
  if (!run || !group) {
    error = "loading the host kernel: " + why;
    return nullptr;
  }
  return std::unique_ptr<HostLdstKernel>(
      new HostLdstKernel(std::move(kernel), run, group, hashBytes(text)));
}

HostLdstKernel::SdmaCpuRank HostLdstKernel::cpuRank(const RankPointers &p,
                                                    int rank) {
  SdmaCpuRank a;
  a.bufs = const_cast<char **>(p.buffers.data());
  a.flags = const_cast<unsigned long long **>(p.flags.data());
  a.sync = const_cast<unsigned int **>(p.sync.data());
  a.error = p.errorRecord;
  a.epochs = p.epochs;
  a.arrive = p.arrive.empty()
                 ? nullptr
                 : const_cast<unsigned long long **>(p.arrive.data());
  a.rowBytes = p.rowBytes;
  a.counts = const_cast<long long **>(p.counts);
  a.callTag = p.callTag;
  a.tags = p.tags.empty() ? nullptr
                          : const_cast<unsigned long long **>(p.tags.data());
  a.ll = p.ll.empty() ? nullptr : const_cast<char **>(p.ll.data());
  a.llSeq = p.llSeq;
  a.llPairBytes = p.llPairBytes;
  a.rank = rank;
  return a;
}

bool HostLdstKernel::run(const RankPointers &pointers,
                         unsigned long long chunkBytes,
                         unsigned long long epoch, uint64_t timeoutNs,
                         int blocks, int threads, int begin, int end,
                         std::string &error) const {
  SdmaCpuRank a = cpuRank(pointers, begin);
  if (int status =
          run_(&a, timeoutNs, chunkBytes, epoch, blocks, threads, begin, end)) {
    error = threadError(status);
    return false;
  }
  return true;
}

bool HostLdstKernel::runGroup(const std::vector<const RankPointers *> &pointers,
                              const std::vector<int> &ranks,
                              unsigned long long chunkBytes, uint64_t timeoutNs,
                              int blocks, int threads,
                              std::string &error) const {
  std::vector<SdmaCpuRank> a;
  for (size_t i = 0; i < pointers.size(); ++i)
    a.push_back(cpuRank(*pointers[i], ranks[i]));
  if (int status = runGroup_(a.data(), int(a.size()), timeoutNs, chunkBytes,
                             blocks, threads)) {
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
