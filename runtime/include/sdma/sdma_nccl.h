/*===- sdma_nccl.h - NCCL as a multi-node communicator's transport --*- C
-*-===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* Header only: the job's NCCL (or RCCL) is the caller's, not libsdma's. A   *|
|* network phase is one NCCL group of ncclSend/ncclRecv on the caller's      *|
|* stream: stream-ordered and graph-capturable, device memory taken as is    *|
|* (no host staging). Its waits are NCCL's: a peer that never sends shows    *|
|* up as a stalled stream and NCCL's own async error (ncclCommGetAsyncError,  *|
|* the watchdog of torch's process group), not as a timeout of sdma's. The    *|
|* job links CUDA's runtime (cudart) as any NCCL job does: sdma's few setup   *|
|* messages are host memory, staged through a device buffer here.             *|
|*                                                                            *|
|*   sdmaNcclContext context = {ncclComm};   (its ranks node-major)          *|
|*   sdmaTransport_t transport;                                               *|
|*   sdmaNcclTransport(&context, &transport);                                 *|
|*   sdmaCommInitMultiNode(&comm, &transport, 0, NULL);                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SDMA_SDMA_NCCL_H
#define SDMA_SDMA_NCCL_H

#include <nccl.h>

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdma/sdma.h"

/* What sdmaNcclTransport's exchange needs; it must outlive the
 * communicator. */
typedef struct {
  ncclComm_t comm;
} sdmaNcclContext;

/* Messages in host memory (`host` ops: sdma's setup messages, a few bytes
 * each) go through a device buffer, since NCCL moves device memory only: the
 * sends copied in, the group on the default stream, the receives copied out.
 * Where CUDA has no device (sdma's own NCCL drop-in on its CPU device, whose
 * "device memory" is host memory) the host buffers are handed over as
 * they are. */
static inline sdmaResult_t sdmaNcclGroup_(sdmaNcclContext *nccl,
                                          const sdmaTransportOp *ops, int count,
                                          void *const *buffers,
                                          cudaStream_t stream, char *message,
                                          size_t bytes) {
  ncclResult_t result = ncclGroupStart(), closed;
  int i;
  for (i = 0; i < count && result == ncclSuccess; ++i)
    result = ops[i].send ? ncclSend(buffers[i], ops[i].bytes, ncclUint8,
                                    ops[i].peer, nccl->comm, stream)
                         : ncclRecv(buffers[i], ops[i].bytes, ncclUint8,
                                    ops[i].peer, nccl->comm, stream);
  closed = ncclGroupEnd(); /* always: a group left open poisons the next */
  if (result == ncclSuccess)
    result = closed;
  if (result == ncclSuccess)
    return sdmaSuccess;
  if (message && bytes)
    snprintf(message, bytes, "%s: %s", ncclGetErrorString(result),
             ncclGetLastError(nccl->comm));
  return result == ncclInvalidArgument ? sdmaInvalidArgument
         : result == ncclInvalidUsage  ? sdmaInvalidUsage
         : result == ncclSystemError   ? sdmaSystemError
         : result == ncclRemoteError   ? sdmaRemoteError
                                       : sdmaUnhandledCudaError;
}

/* sdmaTransport_t::exchange over NCCL: one group on `stream`. */
static inline sdmaResult_t sdmaNcclExchange(void *context,
                                            const sdmaTransportOp *ops,
                                            int count, sdmaStream_t stream,
                                            char *message, size_t bytes) {
  sdmaNcclContext *nccl = (sdmaNcclContext *)context;
  void **buffers;
  char *staging = NULL;
  size_t hostBytes = 0, at = 0;
  int devices = 0, i;
  sdmaResult_t result;
  if (count <= 0)
    return sdmaSuccess;
  buffers = (void **)calloc((size_t)count, sizeof(void *));
  if (!buffers)
    return sdmaSystemError;
  for (i = 0; i < count; ++i) {
    buffers[i] = ops[i].buffer;
    if (ops[i].host)
      hostBytes += ops[i].bytes;
  }
  if (hostBytes && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    if (cudaMalloc((void **)&staging, hostBytes) != cudaSuccess) {
      free(buffers);
      if (message && bytes)
        snprintf(message, bytes, "cannot stage %zu bytes of setup messages",
                 hostBytes);
      return sdmaUnhandledCudaError;
    }
    for (i = 0; i < count; ++i) {
      if (!ops[i].host)
        continue;
      buffers[i] = staging + at;
      if (ops[i].send)
        cudaMemcpy(buffers[i], ops[i].buffer, ops[i].bytes,
                   cudaMemcpyHostToDevice);
      at += ops[i].bytes;
    }
    stream = NULL; /* the legacy default stream: ordered with the copies */
  }
  result = sdmaNcclGroup_(nccl, ops, count, buffers, (cudaStream_t)stream,
                          message, bytes);
  if (staging) {
    if (result == sdmaSuccess && cudaDeviceSynchronize() != cudaSuccess)
      result = sdmaUnhandledCudaError;
    for (i = 0; result == sdmaSuccess && i < count; ++i)
      if (ops[i].host && !ops[i].send)
        cudaMemcpy(ops[i].buffer, buffers[i], ops[i].bytes,
                   cudaMemcpyDeviceToHost);
    cudaFree(staging);
  }
  free(buffers);
  return result;
}

/* Fills `transport` with NCCL over `context->comm`. */
static inline sdmaResult_t sdmaNcclTransport(sdmaNcclContext *context,
                                             sdmaTransport_t *transport) {
  if (!context || !transport)
    return sdmaInvalidArgument;
  if (ncclCommUserRank(context->comm, &transport->rank) != ncclSuccess ||
      ncclCommCount(context->comm, &transport->nranks) != ncclSuccess)
    return sdmaInvalidArgument;
  transport->context = context;
  transport->deviceMemory = 1;
  transport->name = "nccl";
  transport->exchange = sdmaNcclExchange;
  return sdmaSuccess;
}

#endif /* SDMA_SDMA_NCCL_H */
