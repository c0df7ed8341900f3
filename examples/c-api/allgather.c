/*===- allgather.c - a multi-process job on the sdma C API ----------------===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* Copy this. One process per rank, started by                                *|
|*   sdma-launch --nproc-per-node=4 ./sdma-example-c-allgather   (any host)   *|
|*   mpirun -np 4 ./sdma-example-c-allgather-mpi        (built with MPI)      *|
|* Each rank puts rank * 1000 + i into a symmetric buffer, all-gathers it and *|
|* all-to-alls it on its stream, and checks what came back. SDMA_DEVICE=cpu   *|
|* runs it without a GPU; built with -DSDMA_EXAMPLE_CUDA (nvcc or -lcudart)   *|
|* it runs on the GPU the rank's LOCAL_RANK picks.                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdma/sdma.h"
#ifdef SDMA_EXAMPLE_MPI
#include "sdma/sdma_mpi.h"
#endif
#ifdef SDMA_EXAMPLE_CUDA
#include <cuda_runtime.h>
#endif

#define CHECK(call)                                                            \
  do {                                                                         \
    sdmaResult_t r_ = (call);                                                  \
    if (r_ != sdmaSuccess) {                                                   \
      fprintf(stderr, "%s failed: %s: %s\n", #call, sdmaGetErrorString(r_),    \
              sdmaGetLastError(comm));                                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* Host <-> symmetric buffer (device memory on a GPU). */
static void put(void *dst, const void *src, size_t n) {
#ifdef SDMA_EXAMPLE_CUDA
  cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
#else
  memcpy(dst, src, n);
#endif
}
static void get(void *dst, const void *src, size_t n) {
#ifdef SDMA_EXAMPLE_CUDA
  cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
#else
  memcpy(dst, src, n);
#endif
}

int main(int argc, char **argv) {
  sdmaComm_t comm = NULL;
  int rank = 0, nranks = 0;
  sdmaStream_t stream = NULL;
#ifdef SDMA_EXAMPLE_CUDA
  const char *local = getenv("LOCAL_RANK");
  int devices = 1;
  cudaGetDeviceCount(&devices);
  cudaSetDevice(local ? atoi(local) % devices : 0);
  cudaStreamCreate((cudaStream_t *)&stream);
#endif
#ifdef SDMA_EXAMPLE_MPI
  MPI_Init(&argc, &argv);
  CHECK(sdmaCommInitMpi(&comm, MPI_COMM_WORLD, NULL));
  CHECK(sdmaCommUserRank(comm, &rank));
  CHECK(sdmaCommCount(comm, &nranks));
#else
  (void)argc;
  (void)argv;
  /* What sdma-launch (or your launcher) sets. */
  const char *r = getenv("RANK"), *n = getenv("WORLD_SIZE"),
             *id = getenv("SDMA_UNIQUE_ID");
  sdmaUniqueId uid;
  if (!r || !n || !id) {
    fprintf(stderr, "run me under sdma-launch (RANK, WORLD_SIZE, "
                    "SDMA_UNIQUE_ID)\n");
    return 2;
  }
  rank = atoi(r);
  nranks = atoi(n);
  CHECK(sdmaUniqueIdFromString(id, &uid));
  CHECK(sdmaCommInitRank(&comm, nranks, uid, rank));
#endif

  const size_t count = 1024; /* floats per rank */
  float *in = NULL, *out = NULL, *swapped = NULL;
  CHECK(sdmaMemAlloc(comm, (void **)&in, nranks * count * sizeof(float)));
  CHECK(sdmaMemAlloc(comm, (void **)&out, nranks * count * sizeof(float)));
  CHECK(sdmaMemAlloc(comm, (void **)&swapped, nranks * count * sizeof(float)));
  float *host = malloc(nranks * count * sizeof(float));
  for (size_t i = 0; i < nranks * count; ++i)
    host[i] = (float)(rank * 1000000 + i);
  put(in, host, nranks * count * sizeof(float));

  /* out[p * count + i] = rank p's in[i]. */
  CHECK(sdmaAllGather(in, out, count, sdmaFloat32, comm, stream));
  /* swapped[p * count + i] = rank p's in[rank * count + i]. */
  CHECK(sdmaAlltoAll(in, swapped, count, sdmaFloat32, comm, stream));
#ifdef SDMA_EXAMPLE_CUDA
  cudaStreamSynchronize((cudaStream_t)stream);
#endif
  sdmaResult_t async;
  CHECK(sdmaCommGetAsyncError(comm, &async));
  CHECK(async);

  int wrong = 0;
  get(host, out, nranks * count * sizeof(float));
  for (int p = 0; p < nranks; ++p)
    for (size_t i = 0; i < count; ++i)
      wrong += host[p * count + i] != (float)(p * 1000000 + i);
  get(host, swapped, nranks * count * sizeof(float));
  for (int p = 0; p < nranks; ++p)
    for (size_t i = 0; i < count; ++i)
      wrong += host[p * count + i] != (float)(p * 1000000 + rank * count + i);
  printf("rank %d of %d: all-gather and all-to-all %s\n", rank, nranks,
         wrong ? "WRONG" : "correct");

  free(host);
  CHECK(sdmaMemFree(comm, swapped));
  CHECK(sdmaMemFree(comm, out));
  CHECK(sdmaMemFree(comm, in));
  CHECK(sdmaCommDestroy(comm));
#ifdef SDMA_EXAMPLE_MPI
  MPI_Finalize();
#endif
  return wrong ? 1 : 0;
}
