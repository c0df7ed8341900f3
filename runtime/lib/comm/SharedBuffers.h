//===- SharedBuffers.h - a call's buffers shared for that call --*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Memory the caller allocated itself (a torch caching-allocator block, a
// cudaMalloc'd buffer) that peers must reach, without a prior collective
// registration: a large call on the barrier or DMA path
// (CommOptions::sharedBytes) exchanges, for this call, where every rank's
// buffers are. Each rank exports the allocation that holds its buffer (a
// CUDA IPC handle; on the CPU device a named segment), all ranks all-gather
// the handles (one host exchange per call, ExchangeBoard.h), and each rank
// maps the peers' blocks it needs, once per block (IpcImports keeps them), so a
// block's first use costs the map and later calls the exchange only.
//
//   rank 0: cudaMalloc -> A (not symmetric)    rank 1: cudaMalloc -> B
//   call: exchange {A's handle, offset}, {B's handle, offset}
//   rank 0's table: [A, B mapped here]         rank 1's: [A mapped, B]
//
// The rule is the same on every rank (the call's size and path), so every
// rank exchanges or none does; what a rank could not share (memory the
// device cannot export, a buffer a peer needs passed as null) fails the
// call on every rank alike, naming the rank and the buffer.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_SHAREDBUFFERS_H
#define SDMA_RUNTIME_LIB_COMM_SHAREDBUFFERS_H

#include "comm/CommDevice.h"
#include "comm/ExchangeBoard.h"
#include "comm/ProgramCache.h"
#include "comm/SymmetricHeap.h"

#include <set>
#include <string>
#include <vector>

namespace sdma::rt {

/// The region of a buffer shared for one call: SharedCall::regions[b].
constexpr int kSharedRegion = -3;

/// At most this many buffers of a call are shared (one exchange carries
/// their handles); a call with more is not shared.
constexpr size_t kMaxSharedBuffers = 2;

/// A call's buffers as the exchange found them.
struct SharedCall {
  /// [buffer]: every rank's copy, mapped here (peer[r] null where rank r
  /// passed none), and each copy's bytes from its base.
  std::vector<Region> regions;
};

/// What a communicator's shared calls keep: the blocks this rank has
/// posted (a block's first post makes every rank confirm its mapping).
struct SharedBlocks {
  std::set<std::string> posted;
};

/// Whether the call shares its buffers: every rank decides alike from the
/// program, the chunk and the path. `bytes[b]` is buffer b's size.
bool sharesBuffers(const CommOptions &options, int ranks,
                   const Instance &instance, const std::vector<uint64_t> &bytes,
                   size_t userBuffers, bool lowLatency);

/// Exchanges where every rank's shared buffers are (buffer b shared where
/// `instance.remote[b]`, b < userBuffers; `need[b]` bytes from its base):
/// a buffer in symmetric memory as its place there, any other as the
/// device's handle of its allocation, which peers map. And maps the peers'
/// blocks this rank reaches (each block once). `tag` is the call's (ranks
/// making different calls fail). A buffer some rank cannot share fails the
/// call on every rank: NotSymmetric with `privateBuffers` (the caller
/// stages), else InvalidArgument. A rank whose call is already refused
/// (`refused`) takes part with its reason and fails with it.
bool shareBuffers(CommDevice &device, ExchangeBoard &board,
                  const SymmetricHeap &heap, const Instance &instance,
                  const std::vector<const void *> &buffers,
                  const std::vector<uint64_t> &need, size_t userBuffers,
                  uint64_t tag, bool privateBuffers, const Error &refused,
                  SharedBlocks &blocks, SharedCall &shared, Error &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_SHAREDBUFFERS_H
