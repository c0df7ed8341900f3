/*===- sdma_nccl.h - NCCL as a multi-node communicator's transport --*- C -*-===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* Header only: the job's NCCL (or RCCL) is the caller's, not libsdma's. A   *|
|* network phase is one NCCL group of ncclSend/ncclRecv on the caller's      *|
|* stream: stream-ordered and graph-capturable, device memory taken as is    *|
|* (no host staging). Its waits are NCCL's: a peer that never sends shows    *|
|* up as a stalled stream and NCCL's own async error (ncclCommGetAsyncError,  *|
|* the watchdog of torch's process group), not as a timeout of sdma's.        *|
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

#include <stdio.h>

#include "sdma/sdma.h"

/* What sdmaNcclTransport's exchange needs; it must outlive the
 * communicator. */
typedef struct {
  ncclComm_t comm;
} sdmaNcclContext;

/* sdmaTransport_t::exchange over NCCL: one group on `stream`. */
static inline sdmaResult_t sdmaNcclExchange(void *context,
                                            const sdmaTransportOp *ops,
                                            int count, sdmaStream_t stream,
                                            char *message, size_t bytes) {
  sdmaNcclContext *nccl = (sdmaNcclContext *)context;
  ncclResult_t result = ncclGroupStart(), closed;
  int i;
  for (i = 0; i < count && result == ncclSuccess; ++i)
    result = ops[i].send
                 ? ncclSend(ops[i].buffer, ops[i].bytes, ncclUint8,
                            ops[i].peer, nccl->comm, (cudaStream_t)stream)
                 : ncclRecv(ops[i].buffer, ops[i].bytes, ncclUint8,
                            ops[i].peer, nccl->comm, (cudaStream_t)stream);
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
