/*===- sdma_mpi.h - a communicator from an MPI communicator -----*- C -*-===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* Header only: the job's MPI library (any: OpenMPI, MPICH) is the caller's,  *|
|* not libsdma's. Rank 0 of `mpiComm` makes the unique id, MPI_Bcast hands it *|
|* to the others (with rank 0's result, so a failure there fails every rank), *|
|* and each rank joins with its MPI rank.                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SDMA_SDMA_MPI_H
#define SDMA_SDMA_MPI_H

#include <mpi.h>

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

#endif /* SDMA_SDMA_MPI_H */
