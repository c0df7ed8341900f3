//===- HostLdstKernel.h - a load/store program on host threads --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A load/store program (sdma-translate --sdma-to-hip) built as a HostKernel
// with its CPU entry, which fills the kernel's table (SdmaTable) from
// pointers and runs every thread of every block of the ranks asked for at
// once (ranks wait on each other). What the CPU executor (LdstCpuExecutor:
// every rank, over guarded copies of the caller's buffers) and the
// communicator's CPU device (its one rank, in place in shared memory) both
// run; the same program and options give the same text, so they share the
// host compiler's cached object.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_HOSTLDSTKERNEL_H
#define SDMA_RUNTIME_LIB_HOST_HOSTLDSTKERNEL_H

#include "host/HostKernel.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/LdstProgram.h"

#include <memory>
#include <string>
#include <vector>

namespace sdma::rt {

class HostLdstKernel {
public:
  /// Every rank's memory in this process's address space (for a job of
  /// several processes: each rank's shared-memory segment, mapped).
  struct RankPointers {
    std::vector<char *> buffers;             // [rank * buffers + buffer]
    std::vector<unsigned long long *> flags; // [rank]: flag slots
    std::vector<unsigned int *> sync;        // [rank]: two counters
    /// Null: the run is numbered by run()'s `epoch`. Else two counters per
    /// rank run, [2 * (rank - begin)]: the run number, which the kernel
    /// reads and advances itself (SdmaTable::epochs, as a communicator's
    /// launch).
    unsigned long long *epochs = nullptr;
    /// The kernel's error record (5 words: status, rank, flag slot, value
    /// awaited, value seen), which keeps a failure for the caller to read
    /// (readErrorRecord).
    unsigned long long *errorRecord = nullptr;
    /// Empty in-process; else per rank its job-barrier words
    /// (SdmaTable::arrive: a communicator's launch).
    std::vector<unsigned long long *> arrive;
    /// The bytes of a row, sdma.copyv's unit (SdmaTable::rowBytes); 0: a
    /// row is a chunk.
    unsigned long long rowBytes = 0;
    /// SdmaTable::countsIn then countsOut (sdmaAlltoAllv's); null: none.
    long long *counts[4] = {nullptr, nullptr, nullptr, nullptr};
    /// SdmaTable::callTag and tags (a communicator's); empty: unchecked.
    unsigned long long callTag = 0;
    std::vector<unsigned long long *> tags;
    /// SdmaTable::ll, llSeq, llPairBytes (a low-latency program's);
    /// empty: not a low-latency call.
    std::vector<char *> ll;
    unsigned long long *llSeq = nullptr;
    unsigned long long llPairBytes = 0;
  };

  /// Builds `program` (with SDMA_STAGED_OPS and SDMA_STAGE_CAP as
  /// `options` ask) with `options.compiler` through
  /// `options.cacheDirectory`. Null with `error` (the compiler's output
  /// included).
  static std::unique_ptr<HostLdstKernel> build(const LdstProgram &program,
                                               const LdstCpuOptions &options,
                                               std::string &error);

  /// Runs ranks [begin, end) of the kernel over `pointers`, `blocks` blocks
  /// of `threads` threads each per rank, as run `epoch`. False with `error`
  /// only if the host threads could not all be started (then none ran);
  /// what the kernel itself reports is in pointers.errorRecord.
  bool run(const RankPointers &pointers, unsigned long long chunkBytes,
           unsigned long long epoch, uint64_t timeoutNs, int blocks,
           int threads, int begin, int end, std::string &error) const;
  /// Runs one rank of each of `pointers` (rank ranks[i] over pointers[i]:
  /// communicators of one process, a group launch), all at once. As run().
  bool runGroup(const std::vector<const RankPointers *> &pointers,
                const std::vector<int> &ranks, unsigned long long chunkBytes,
                uint64_t timeoutNs, int blocks, int threads,
                std::string &error) const;
  /// The same for every HostLdstKernel of one text (the hash of what the
  /// host compiler built): either runs the other's launches.
  uint64_t textHash() const { return textHash_; }
  /// False with `error` if the kernel's error record holds a failure (a
  /// flag wait or a rank barrier that timed out).
  static bool readErrorRecord(const unsigned long long record[5],
                              std::string &error);

private:
  /// A launched rank's words, as the CPU entry takes them (the kernel's
  /// text gets this definition as a string: HostLdstKernel.cpp).
#define SDMA_CPU_RANK_STRUCT                                                   \
  struct SdmaCpuRank {                                                         \
    char **bufs;                                                               \
    unsigned long long **flags;                                                \
    unsigned int **sync;                                                       \
    unsigned long long *error;                                                 \
    unsigned long long *epochs;                                                \
    unsigned long long **arrive;                                               \
    unsigned long long rowBytes;                                               \
    long long **counts;                                                        \
    unsigned long long callTag;                                                \
    unsigned long long **tags;                                                 \
    char **ll;                                                                 \
    unsigned long long *llSeq;                                                 \
    unsigned long long llPairBytes;                                            \
    int rank;                                                                  \
  };
  SDMA_CPU_RANK_STRUCT
  static SdmaCpuRank cpuRank(const RankPointers &pointers, int rank);
  /// The entries: 0, or the error number of a host thread that could not
  /// be started (then no thread ran).
  using RunFn = int (*)(const SdmaCpuRank *, unsigned long long,
                        unsigned long long, unsigned long long, int, int, int,
                        int);
  using GroupFn = int (*)(const SdmaCpuRank *, int, unsigned long long,
                          unsigned long long, int, int);
  HostLdstKernel(std::unique_ptr<HostKernel> kernel, RunFn run, GroupFn group,
                 uint64_t textHash)
      : kernel_(std::move(kernel)), run_(run), runGroup_(group),
        textHash_(textHash) {}

  std::unique_ptr<HostKernel> kernel_;
  RunFn run_;
  GroupFn runGroup_;
  uint64_t textHash_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_HOSTLDSTKERNEL_H
