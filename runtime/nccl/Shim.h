//===- Shim.h - sdma's NCCL drop-in: the communicator behind ncclComm_t ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// libsdma-nccl.so (soname libnccl.so.2) implements NCCL's C API over
// sdma's (sdma.h): an ncclComm is an sdmaComm_t and the staging area its
// calls go through. Programs written for NCCL (PyTorch's ProcessGroupNCCL,
// nccl-tests) run on it unmodified, through LD_PRELOAD or by linking it
// as libnccl.so.2 (docs/nccl.md).
//
// Buffers: an NCCL program passes any device memory (a caching
// allocator's, cudaMalloc's, ncclMemAlloc's); sdma's collectives run on
// symmetric memory. Each call copies its input into the communicator's
// staging area (symmetric, grown collectively as calls need it), runs
// sdma's collective there and copies the result out, all in the caller's
// stream order (sdmaMemcpyAsync): any pointer works, at the cost of the
// two copies. Buffers in windows (ncclCommWindowRegister: sdma
// registrations) need neither: the call runs on them in place.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_NCCL_SHIM_H
#define SDMA_RUNTIME_NCCL_SHIM_H

#include "NcclAbi.h"
#include "sdma/sdma.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

/// The communicators one ncclCommInitAll made, torn down together once
/// every one of them has been destroyed (ShimComm.cpp's destroy).
struct ncclComm;
namespace sdma::nccl {
struct NodeLink;
} // namespace sdma::nccl
struct InitAllGroup {
  std::mutex mutex;
  int left = 0; // not destroyed yet
  /// Destroyed by the caller, not yet torn down (true: aborted).
  std::vector<std::pair<std::shared_ptr<ncclComm>, bool>> destroyed;
};

struct ncclComm {
  sdmaComm_t sdma = nullptr;
  /// Its ncclCommInitAll's group, or null.
  std::shared_ptr<InitAllGroup> initAll;
  int rank = 0, nranks = 0, device = 0;
  /// The staging area (sdmaMemAlloc'd) and its size.
  char *stage = nullptr;
  size_t stageBytes = 0;
  /// sdma's private buffers (SDMA_NCCL_PRIVATE, on by default): a call whose
  /// path lets no peer reach the caller's buffers runs on them unstaged.
  bool privateBuffers = false;
  /// Calls of one communicator from several threads run one at a time.
  std::mutex mutex;
  /// What its last failed call said (ncclGetLastError(comm)).
  std::string error;
  /// The real NCCL's communicator beside it (ShimFallback.h), or null.
  ncclComm_t real = nullptr;
  /// A job across nodes: the real communicator between them (`real` is
  /// its), which sdma's multi-node communicator uses as its transport
  /// (ShimNodes.cpp); torn down after sdma's. Null on one node.
  std::shared_ptr<sdma::nccl::NodeLink> nodes;
  /// Copies of sends whose buffer a receive of the same group overlaps
  /// (peerStage): every allocation, the last the largest, freed with the
  /// communicator (an earlier one may still be read by a send in flight).
  std::vector<std::pair<void *, size_t>> peerStages;
};

namespace sdma::nccl {

/// Whether the drop-in runs on sdma's CPU device (SDMA_DEVICE=cpu), where
/// NCCL's "device memory" is host memory.
bool deviceIsCpu();

/// The CUDA driver entry points the drop-in calls itself (dlopen'ed, as
/// the runtime does): ncclMemAlloc/Free and the device query; optionally
/// ncclCommInitAll's contexts, and the copies that stage setup messages
/// for the real NCCL between nodes (ShimNodes.cpp). Null without a driver
/// or without the first three.
struct Cuda {
  int (*memAlloc)(unsigned long long *, size_t) = nullptr;
  int (*memFree)(unsigned long long) = nullptr;
  int (*ctxGetDevice)(int *) = nullptr;
  int (*init)(unsigned) = nullptr;
  int (*primaryCtxRetain)(void **, int) = nullptr;
  int (*ctxSetCurrent)(void *) = nullptr;
  int (*memcpyHtoD)(unsigned long long, const void *, size_t) = nullptr;
  int (*memcpyDtoH)(void *, unsigned long long, size_t) = nullptr;
  int (*ctxSynchronize)() = nullptr;
  static const Cuda *get();
};

/// Device memory (host memory on the CPU device) of at least `bytes` for
/// copies of a group's sends; null when it cannot be had.
void *peerStage(ncclComm *comm, size_t bytes);
/// The thread's last error without a communicator (ncclGetLastError(NULL)).
void setThreadError(const std::string &message);
/// Fails with `result` and `message`, kept for ncclGetLastError(comm)
/// (comm may be null: the thread's).
ncclResult_t fail(ncclComm_t comm, ncclResult_t result,
                  const std::string &message);
/// An sdma result as NCCL's (the numbering is NCCL's), the message kept.
ncclResult_t fromSdma(ncclComm_t comm, sdmaResult_t result);
/// True where NCCL_DEBUG=INFO (or TRACE) or SDMA_NCCL_DEBUG is set.
bool logging();
/// Where logging(): says on stderr (once per op kind, path and process)
/// which path ran `op`.
void logPath(const char *op, const char *path);
/// A reference that keeps `comm` alive while a call uses it; null unless
/// it is a live communicator of this process.
std::shared_ptr<ncclComm> acquire(ncclComm_t comm);
/// Fails (ncclInvalidArgument, naming `call`) unless `comm` is a live
/// communicator of this process.
ncclResult_t checkComm(ncclComm_t comm, const char *call);
/// Makes `*out` rank `rank` of `nranks` of the job `id` (NCCL's
/// ncclCommInitRankConfig; `config` may be null).
ncclResult_t initRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank,
                      const ncclConfig_t *config);
/// Wraps `s` (this process's rank `rank` of `nranks`) as an NCCL
/// communicator: registered, with the real NCCL beside it where the job
/// falls back (ShimFallback.h), or `nodes`'s where it spans nodes. On
/// failure `s` is destroyed.
ncclResult_t adopt(ncclComm_t *out, sdmaComm_t s, int rank, int nranks,
                   const ncclConfig_t *config,
                   std::shared_ptr<NodeLink> nodes = nullptr);
/// ShimNodes.cpp: the ranks per node where the job's `nranks` span nodes
/// (SDMA_NCCL_LOCAL_RANKS, LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE),
/// else 0; the real NCCL's id packed into the second half of `id` (where
/// a fallback is loaded and its id fits); and the communicator of such a
/// job: sdma's multi-node one over the real NCCL's.
int localRanksOfJob(int nranks);
void packRealId(ncclUniqueId &id);
ncclResult_t initAcrossNodes(ncclComm_t *out, int nranks, ncclUniqueId id,
                             int rank, int local, const ncclConfig_t *config);
/// True inside ncclGroupStart/End on this thread.
bool inGroup();
/// At the end of the thread's outermost group: runs the sends and
/// receives it collected together (`run`), or drops them
/// (ncclGroupSimulateEnd).
ncclResult_t endGroupPeerOps(bool run);
/// The open group's collectives (ShimCollectives.cpp): run at its end
/// through sdma's group (every communicator's together), or dropped.
ncclResult_t endGroupCalls(bool run);

} // namespace sdma::nccl

#endif // SDMA_RUNTIME_NCCL_SHIM_H
