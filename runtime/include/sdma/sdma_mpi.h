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
|*   sdmaMpiContext context = {MPI_COMM_WORLD, 30000};                        *|
|*   sdmaTransport_t transport;                                               *|
|*   sdmaMpiTransport(&context, &transport);                                  *|
|*   sdmaCommInitMultiNode(&comm, &transport, 0, NULL);                       *|
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
 * The internal fields are the exchange's own. */
typedef struct {
  MPI_Comm comm;
  unsigned long long timeoutMs; /* 0: 30000 */
} sdmaMpiContext;

static inline void sdmaMpiMessage_(char *message, size_t bytes,
                                   const char *what, int a, int b) {
  if (message && bytes)
    snprintf(message, bytes, what, a, b);
}

/* sdmaTransport_t::exchange over MPI (see above). */
static inline sdmaResult_t sdmaMpiExchange(void *context,
                                           const sdmaTransportOp *ops,
                                           int count, sdmaStream_t stream,
                                           char *message, size_t bytes) {
  sdmaMpiContext *mpi = (sdmaMpiContext *)context;
  int rank = 0, nranks = 0, i, j, finished = 0;
  MPI_Request *requests;
  int *done;
  double timeout, deadline;
  (void)stream; /* host memory: run now */
  if (count <= 0)
    return sdmaSuccess;
  MPI_Comm_rank(mpi->comm, &rank);
  MPI_Comm_size(mpi->comm, &nranks);
  requests = (MPI_Request *)calloc((size_t)count, sizeof(MPI_Request));
  done = (int *)calloc((size_t)count, sizeof(int));
  if (!requests || !done) {
    free(requests);
    free(done);
    sdmaMpiMessage_(message, bytes, "out of host memory%.0d%.0d", 0, 0);
    return sdmaSystemError;
  }
  /* Receives first, so that a peer's send finds its match posted. */
  for (int pass = 0; pass < 2; ++pass)
    for (i = 0; i < count; ++i) {
      const sdmaTransportOp *op = &ops[i];
      int tag = 0, rc;
      if ((op->send != 0) != (pass == 1))
        continue;
      if (op->peer < 0 || op->peer >= nranks || op->peer == rank ||
          op->bytes > (size_t)INT_MAX) {
        sdmaMpiMessage_(message, bytes,
                        "peer %d or a message of over %d bytes", op->peer,
                        INT_MAX);
        free(requests);
        free(done);
        return sdmaInvalidArgument;
      }
      for (j = 0; j < i; ++j) /* the k-th message of this pair: tag k */
        tag += ops[j].peer == op->peer && (ops[j].send != 0) == (op->send != 0);
      rc = op->send ? MPI_Isend(op->buffer, (int)op->bytes, MPI_BYTE, op->peer,
                                tag, mpi->comm, &requests[i])
                    : MPI_Irecv(op->buffer, (int)op->bytes, MPI_BYTE,
                                op->peer, tag, mpi->comm, &requests[i]);
      if (rc != MPI_SUCCESS) {
        sdmaMpiMessage_(message, bytes, "posting a message with rank %d%.0d",
                        op->peer, 0);
        free(requests);
        free(done);
        return sdmaSystemError;
      }
    }
  timeout = (mpi->timeoutMs ? (double)mpi->timeoutMs : 30000.0) / 1000.0;
  deadline = MPI_Wtime() + timeout;
  while (finished < count) {
    for (i = 0; i < count; ++i) {
      int flag = 0;
      if (done[i])
        continue;
      if (MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        sdmaMpiMessage_(message, bytes, "a message with rank %d failed%.0d",
                        ops[i].peer, 0);
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
      /* Name the first peer still owed something; the requests stay posted
       * (MPI cannot withdraw a send): the communicator has failed. */
      for (i = 0; i < count && done[i]; ++i)
        ;
      if (message && bytes)
        snprintf(message, bytes,
                 "rank %d: timed out after %llu ms; %s rank %d%s", rank,
                 mpi->timeoutMs ? mpi->timeoutMs : 30000ull,
                 ops[i].send ? "no receive posted by" : "nothing arrived from",
                 ops[i].peer,
                 count - finished > 1 ? " (and more messages)" : "");
      free(requests);
      free(done);
      return sdmaRemoteError;
    }
  }
  free(requests);
  free(done);
  return sdmaSuccess;
}

/* Fills `transport` with MPI over `context->comm` (its ranks node-major). */
static inline sdmaResult_t sdmaMpiTransport(sdmaMpiContext *context,
                                            sdmaTransport_t *transport) {
  if (!context || !transport)
    return sdmaInvalidArgument;
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
