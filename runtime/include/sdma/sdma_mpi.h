/*===- sdma_mpi.h - a communicator from an MPI communicator -----*- C -*-===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* Header only: the job's MPI library (any: OpenMPI, MPICH) is the caller's,  *|
|* not libsdma's.                                                             *|
|*                                                                            *|
|* sdmaCommInitMpi: one node's communicator. Rank 0 of `mpiComm` makes the    *|
|* unique id, MPI_Bcast hands it to the others (with rank 0's result, so a    *|
|* failure there fails every rank), and each rank joins with its MPI rank.    *|
|*                                                                            *|
|* sdmaMpiTransport: MPI as the transport between the nodes of a multi-node   *|
|* communicator (sdmaCommInitMultiNode). A group is MPI_Irecv/MPI_Isend of    *|
|* every op, the k-th message of a pair tagged k, then a wait bounded by the  *|
|* timeout that names the peers it still waits for. Host memory only (the     *|
|* CPU device's buffers; a GPU's are staged by sdma).                         *|
|*                                                                            *|
|*   sdmaMpiContext context = {MPI_COMM_WORLD, 30000, 0};                     *|
|*   sdmaTransport_t transport;                                               *|
|*   sdmaMpiTransport(&context, &transport);  (duplicates the communicator)   *|
|*   sdmaCommInitMultiNode(&comm, &transport, 0, NULL);                       *|
|*   ... sdmaCommDestroy(comm); MPI_Comm_free(&context.comm);                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SDMA_SDMA_MPI_H
#define SDMA_SDMA_MPI_H

#include <mpi.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdma/sdma.h"

static inline sdmaResult_t sdmaCommInitMpi(sdmaComm_t *comm, MPI_Comm mpiComm,
                                           sdmaConfig_t *config) {
  int rank = 0, nranks = 0;
  if (MPI_Comm_rank(mpiComm, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(mpiComm, &nranks) != MPI_SUCCESS)
    return sdmaInvalidArgument;
  struct {
    int result;
    sdmaUniqueId id;
  } message;
  message.result = rank == 0 ? (int)sdmaGetUniqueId(&message.id) : 0;
  if (MPI_Bcast(&message, (int)sizeof(message), MPI_BYTE, 0, mpiComm) !=
      MPI_SUCCESS)
    return sdmaSystemError;
  if (message.result != sdmaSuccess)
    return (sdmaResult_t)message.result;
  return sdmaCommInitRankConfig(comm, nranks, message.id, rank, config);
}

/* What sdmaMpiTransport's exchange needs; it must outlive the communicator.
 * sdmaMpiTransport replaces `comm` by a duplicate of it (MPI_Comm_dup), so
 * sdma's messages never match the job's own: free it with MPI_Comm_free
 * after sdmaCommDestroy. `epoch` is unused (kept so that existing
 * initialisers compile): messages carry no group number, see below. */
typedef struct {
  MPI_Comm comm;
  unsigned long long timeoutMs; /* 0: 30000 */
  unsigned epoch;
} sdmaMpiContext;

/* Withdraws what a failed group left posted: a receive must not land later
 * in memory its caller has let go of, nor match a later group's message. */
static inline void sdmaMpiWithdraw_(MPI_Request *requests, const int *done,
                                    int count) {
  int i;
  for (i = 0; i < count; ++i) {
    if (done[i] || requests[i] == MPI_REQUEST_NULL)
      continue;
    MPI_Cancel(&requests[i]);
    MPI_Request_free(&requests[i]);
  }
}

/* sdmaTransport_t::exchange over MPI (see above). */
static inline sdmaResult_t sdmaMpiExchange(void *context,
                                           const sdmaTransportOp *ops,
                                           int count, sdmaStream_t stream,
                                           char *message, size_t bytes) {
  sdmaMpiContext *mpi = (sdmaMpiContext *)context;
  int rank = 0, nranks = 0, i, j, finished = 0, pass;
  MPI_Request *requests;
  int *done;
  double deadline;
  (void)stream; /* host memory: run now */
  if (count <= 0)
    return sdmaSuccess;
  MPI_Comm_rank(mpi->comm, &rank);
  MPI_Comm_size(mpi->comm, &nranks);
  /* Everything checked before anything is posted. */
  for (i = 0; i < count; ++i)
    if (ops[i].peer < 0 || ops[i].peer >= nranks || ops[i].peer == rank ||
        ops[i].bytes > (size_t)INT_MAX || count > 4096) {
      if (message && bytes)
        snprintf(message, bytes,
                 "peer %d of %d ranks, a message of %zu bytes (at most %d) "
                 "or over 4096 messages in a group",
                 ops[i].peer, nranks, ops[i].bytes, INT_MAX);
      return sdmaInvalidArgument;
    }
  requests = (MPI_Request *)calloc((size_t)count, sizeof(MPI_Request));
  done = (int *)calloc((size_t)count, sizeof(int));
  if (!requests || !done) {
    free(requests);
    free(done);
    return sdmaSystemError;
  }
  for (i = 0; i < count; ++i)
    requests[i] = MPI_REQUEST_NULL;
  /* Receives first, so that a peer's send finds its match posted. The k-th
   * message of a pair in this group, each way, is tagged k: MPI matches a
   * pair's messages of one tag in order, and both ranks of a pair run the
   * groups between them in the same order, so a group's messages never
   * match another's. (A group number would have to count only the groups
   * of the pair: point-to-point groups involve two ranks, not all.) */
  for (pass = 0; pass < 2; ++pass)
    for (i = 0; i < count; ++i) {
      const sdmaTransportOp *op = &ops[i];
      int tag = 0, rc;
      if ((op->send != 0) != (pass == 1))
        continue;
      for (j = 0; j < i; ++j)
        tag += ops[j].peer == op->peer && (ops[j].send != 0) == (op->send != 0);
      rc = op->send ? MPI_Isend(op->buffer, (int)op->bytes, MPI_BYTE, op->peer,
                                tag, mpi->comm, &requests[i])
                    : MPI_Irecv(op->buffer, (int)op->bytes, MPI_BYTE, op->peer,
                                tag, mpi->comm, &requests[i]);
      if (rc != MPI_SUCCESS) {
        if (message && bytes)
          snprintf(message, bytes, "posting a message with rank %d", op->peer);
        sdmaMpiWithdraw_(requests, done, count);
        free(requests);
        free(done);
        return sdmaSystemError;
      }
    }
  deadline = MPI_Wtime() +
             (mpi->timeoutMs ? (double)mpi->timeoutMs : 30000.0) / 1000.0;
  while (finished < count) {
    for (i = 0; i < count; ++i) {
      int flag = 0, got = 0;
      MPI_Status status;
      if (done[i])
        continue;
      if (MPI_Test(&requests[i], &flag, &status) != MPI_SUCCESS ||
          (flag && !ops[i].send &&
           (MPI_Get_count(&status, MPI_BYTE, &got) != MPI_SUCCESS ||
            (size_t)got != ops[i].bytes))) {
        done[i] = 1; /* completed (or failed): nothing left to withdraw */
        if (message && bytes)
          snprintf(message, bytes,
                   "rank %d: a message with rank %d failed or had %d bytes "
                   "where %zu were expected",
                   rank, ops[i].peer, got, ops[i].bytes);
        sdmaMpiWithdraw_(requests, done, count);
        free(requests);
        free(done);
        return sdmaRemoteError;
      }
      if (flag) {
        done[i] = 1;
        ++finished;
      }
    }
    if (finished < count && MPI_Wtime() > deadline) {
      /* Name the first peer still owed something. */
      for (i = 0; i < count && done[i]; ++i)
        ;
      if (message && bytes)
        snprintf(
            message, bytes, "rank %d: timed out after %llu ms; %s rank %d%s",
            rank, mpi->timeoutMs ? mpi->timeoutMs : 30000ull,
            ops[i].send ? "no receive posted by" : "nothing arrived from",
            ops[i].peer, count - finished > 1 ? " (and more messages)" : "");
      sdmaMpiWithdraw_(requests, done, count);
      free(requests);
      free(done);
      return sdmaRemoteError;
    }
  }
  free(requests);
  free(done);
  return sdmaSuccess;
}

/* Fills `transport` with MPI over a duplicate of `context->comm` (its ranks
 * node-major), which replaces it in the context. Collective over it. */
static inline sdmaResult_t sdmaMpiTransport(sdmaMpiContext *context,
                                            sdmaTransport_t *transport) {
  MPI_Comm dup;
  if (!context || !transport)
    return sdmaInvalidArgument;
  if (MPI_Comm_dup(context->comm, &dup) != MPI_SUCCESS)
    return sdmaSystemError;
  context->comm = dup;
  context->epoch = 0;
  if (MPI_Comm_rank(context->comm, &transport->rank) != MPI_SUCCESS ||
      MPI_Comm_size(context->comm, &transport->nranks) != MPI_SUCCESS)
    return sdmaInvalidArgument;
  transport->context = context;
  transport->deviceMemory = 0;
  transport->name = "mpi";
  transport->exchange = sdmaMpiExchange;
  return sdmaSuccess;
}

#endif /* SDMA_SDMA_MPI_H */
