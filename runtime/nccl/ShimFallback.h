//===- ShimFallback.h - the real NCCL for what sdma does not serve -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// With SDMA_NCCL_FALLBACK naming the real libnccl.so.2 (e.g. the one torch
// bundles), the drop-in loads it with RTLD_DEEPBIND (its calls to its own
// exported names stay inside it), makes a real communicator beside each of
// its own (rank 0's real unique id broadcast through sdma's communicator)
// for what sdma does not serve, grouped with the real ncclGroupStart/End
// (today nothing torch or nccl-tests calls: the collectives and
// point-to-point are sdma's). Without the variable nothing is forwarded: an
// unserved call is refused (so a test proves what sdma ran).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_NCCL_SHIMFALLBACK_H
#define SDMA_RUNTIME_NCCL_SHIMFALLBACK_H

#include "Shim.h"

namespace sdma::nccl {

/// The real library's entry points the drop-in forwards to.
struct RealNccl {
  ncclResult_t (*getUniqueId)(ncclUniqueId *) = nullptr;
  ncclResult_t (*commInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int,
                                     ncclConfig_t *) = nullptr;
  ncclResult_t (*commDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*commAbort)(ncclComm_t) = nullptr;
  ncclResult_t (*commGetAsyncError)(ncclComm_t, ncclResult_t *) = nullptr;
  ncclResult_t (*groupStart)() = nullptr;
  ncclResult_t (*groupEnd)() = nullptr;
  const char *(*getLastError)(ncclComm_t) = nullptr;
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t) = nullptr;
};

/// A job across nodes: the real NCCL's communicator over the whole job and
/// sdma's transport over it (ShimNodes.cpp).
struct NodeLink {
  const RealNccl *real = nullptr;
  ncclComm_t comm = nullptr;
  sdmaTransport_t transport{};
};

/// True in a copy of the drop-in loaded as another drop-in's fallback
/// (sdmaNcclAsFallback): it neither loads a fallback of its own nor spans
/// nodes (how a test stands a second sdma in for the real NCCL).
bool isFallback();

/// The real NCCL SDMA_NCCL_FALLBACK names, loaded once; null where the
/// variable is unset (or isFallback()). `error` says why a named library
/// cannot serve.
const RealNccl *realNccl(std::string &error);

/// The caller's config for the real library's init, made blocking in
/// `copy` (the drop-in's init finishes before it returns); null for null.
ncclConfig_t *blockingConfig(const ncclConfig_t *config, ncclConfig_t &copy);

/// Makes `comm`'s real communicator (collective over `comm`: rank 0's
/// real id is broadcast through sdma). A no-op without a fallback.
ncclResult_t attachReal(ncclComm_t comm, const ncclConfig_t *config);

} // namespace sdma::nccl

#endif // SDMA_RUNTIME_NCCL_SHIMFALLBACK_H
