/*===- multinode.c - a job across nodes on the sdma C API -----------------===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* Copy this. One process per rank under mpirun, on any number of hosts:     *|
|*   mpirun -np 8 --map-by ppr:4:node ./sdma-example-c-multinode              *|
|* sdma moves bytes within each node; MPI carries what crosses nodes          *|
|* (sdmaMpiTransport). The ranks per node come from the launcher             *|
|* (OMPI_COMM_WORLD_LOCAL_SIZE), or from SDMA_EXAMPLE_LOCAL_RANKS, which is   *|
|* how one machine simulates several nodes:                                   *|
|*   SDMA_DEVICE=cpu SDMA_EXAMPLE_LOCAL_RANKS=2 mpirun -np 6 ./...multinode   *|
|* Built with -DSDMA_EXAMPLE_NCCL, NCCL is the transport instead (sdma_nccl.h;*|
|* MPI then only hands out NCCL's unique id): a GPU job's usual choice. CI    *|
|* runs that build against sdma's own NCCL drop-in on the CPU device.         *|
|* Each rank all-gathers, all-to-alls, all-reduces, reduce-scatters,          *|
|* all-to-allvs (MoE capacity slots, counts per peer), broadcasts, reduces,   *|
|* scatters, gathers and sends/receives (within and across nodes), and       *|
|* checks every element; then calls the                                      *|
|* multi-node communicator does not serve (a packed all-to-allv) or cannot   *|
|* take are refused and the communicator still works. CPU device only (a     *|
|* GPU's buffers need cudaMemcpy around the checks, as allgather.c does).     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdio.h>
#include <stdlib.h>

#include "sdma/sdma.h"
#include "sdma/sdma_mpi.h"
#ifdef SDMA_EXAMPLE_NCCL
#include "sdma/sdma_nccl.h"
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

/* Small integers: every sum is exact in float32. */
static float value(int rank, size_t i) {
  return (float)((int)((rank * 7 + i * 3) % 17) - 8);
}

int main(int argc, char **argv) {
  sdmaComm_t comm = NULL;
  int rank = 0, nranks = 0;
  MPI_Init(&argc, &argv);
  sdmaTransport_t transport;
#ifdef SDMA_EXAMPLE_NCCL
  ncclUniqueId id;
  int world = 0, me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (me == 0 && ncclGetUniqueId(&id) != ncclSuccess)
    return 1;
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  sdmaNcclContext context;
  if (ncclCommInitRank(&context.comm, world, id, me) != ncclSuccess) {
    fprintf(stderr, "ncclCommInitRank failed\n");
    return 1;
  }
  CHECK(sdmaNcclTransport(&context, &transport));
#else
  sdmaMpiContext context = {MPI_COMM_WORLD, 10000, 0};
  CHECK(sdmaMpiTransport(&context, &transport)); /* duplicates the comm */
#endif
  const char *local = getenv("SDMA_EXAMPLE_LOCAL_RANKS");
  CHECK(
      sdmaCommInitMultiNode(&comm, &transport, local ? atoi(local) : 0, NULL));
  CHECK(sdmaCommUserRank(comm, &rank));
  CHECK(sdmaCommCount(comm, &nranks));

  const size_t count = 96; /* floats per rank and peer */
  size_t total = (size_t)nranks * count;
  float *in = NULL, *out = NULL;
  CHECK(sdmaMemAlloc(comm, (void **)&in, total * sizeof(float)));
  CHECK(sdmaMemAlloc(comm, (void **)&out, total * sizeof(float)));
  int wrong = 0;

  /* out[p * count + i] = rank p's in[i]. */
  for (size_t i = 0; i < total; ++i)
    in[i] = value(rank, i);
  CHECK(sdmaAllGather(in, out, count, sdmaFloat32, comm, NULL));
  for (int p = 0; p < nranks; ++p)
    for (size_t i = 0; i < count; ++i)
      wrong += out[p * count + i] != value(p, i);
  /* out[p * count + i] = rank p's in[rank * count + i]. */
  CHECK(sdmaAlltoAll(in, out, count, sdmaFloat32, comm, NULL));
  for (int p = 0; p < nranks; ++p)
    for (size_t i = 0; i < count; ++i)
      wrong += out[p * count + i] != value(p, rank * count + i);
  /* out[i] = sum over p of rank p's in[i]. */
  CHECK(sdmaAllReduce(in, out, total, sdmaFloat32, sdmaSum, comm, NULL));
  for (size_t i = 0; i < total; ++i) {
    float sum = 0;
    for (int p = 0; p < nranks; ++p)
      sum += value(p, i);
    wrong += out[i] != sum;
  }
  /* out[i] = sum over p of rank p's in[rank * count + i]. */
  CHECK(sdmaReduceScatter(in, out, count, sdmaFloat32, sdmaSum, comm, NULL));
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int p = 0; p < nranks; ++p)
      sum += value(p, rank * count + i);
    wrong += out[i] != sum;
  }

  /* All-to-allv, capacity slots: rank p's slot of out holds the
   * sendcounts[rank] rows of 8 floats rank p sent from its slot `rank`;
   * past them the slot is untouched. */
  const size_t row = 8, capacity = count / row;
  int64_t *sendcounts = malloc(nranks * sizeof(int64_t));
  int64_t *recvcounts = malloc(nranks * sizeof(int64_t));
  for (int p = 0; p < nranks; ++p)
    sendcounts[p] = (rank + 2 * p) % (int64_t)(capacity + 1);
  for (size_t i = 0; i < total; ++i)
    out[i] = 1e9f;
  CHECK(sdmaAlltoAllv(in, sendcounts, out, recvcounts, capacity, row,
                      sdmaFloat32, sdmaAlltoAllvSlots, comm, NULL));
  for (int p = 0; p < nranks; ++p) {
    size_t n = (size_t)((p + 2 * rank) % (int)(capacity + 1));
    wrong += recvcounts[p] != (int64_t)n;
    for (size_t i = 0; i < count; ++i)
      wrong += out[p * count + i] !=
               (i < n * row ? value(p, rank * count + i) : 1e9f);
  }
  if (sdmaAlltoAllv(in, sendcounts, out, recvcounts, capacity, row, sdmaFloat32,
                    sdmaAlltoAllvPacked, comm, NULL) != sdmaInvalidUsage) {
    fprintf(stderr, "rank %d: a packed all-to-allv was not refused\n", rank);
    wrong++;
  } else if (rank == 0) {
    printf("refused: %s\n", sdmaGetLastError(comm));
  }
  free(sendcounts);
  free(recvcounts);

  /* Rooted: a broadcast from the last rank, a reduce to rank 1 (another
   * node's where there are two ranks per node). */
  int root = nranks - 1, dst = 1 % nranks;
  CHECK(sdmaBroadcast(in, out, count, sdmaFloat32, root, comm, NULL));
  for (size_t i = 0; i < count; ++i)
    wrong += out[i] != value(root, i);
  for (size_t i = 0; i < count; ++i)
    out[i] = -1000.0f;
  /* The output matters on the root only: NULL elsewhere. */
  CHECK(sdmaReduce(in, rank == dst ? out : NULL, count, sdmaFloat32, sdmaSum,
                   dst, comm, NULL));
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int p = 0; p < nranks; ++p)
      sum += value(p, i);
    wrong += out[i] != (rank == dst ? sum : -1000.0f);
  }

  /* Scatter from rank 0: out = block `rank` of rank 0's in; gather to the
   * last rank: its out holds every rank's first block. */
  CHECK(sdmaScatter(in, out, count, sdmaFloat32, 0, comm, NULL));
  for (size_t i = 0; i < count; ++i)
    wrong += out[i] != value(0, rank * count + i);
  CHECK(sdmaGather(in, out, count, sdmaFloat32, root, comm, NULL));
  for (int p = 0; rank == root && p < nranks; ++p)
    for (size_t i = 0; i < count; ++i)
      wrong += out[p * count + i] != value(p, i);
  /* Point-to-point, only the peers calling: in one group each rank sends
   * a block to the next rank and one to the rank halfway round (on this
   * node or another), receiving from the ranks that send to it; then rank
   * 0 alone sends to the last rank. */
  int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  int far = (rank + nranks / 2) % nranks;
  int from = (rank + nranks - nranks / 2) % nranks;
  CHECK(sdmaGroupStart());
  CHECK(sdmaSend(in, count, sdmaFloat32, next, comm, NULL));
  CHECK(sdmaRecv(out, count, sdmaFloat32, prev, comm, NULL));
  CHECK(sdmaSend(in + count, count, sdmaFloat32, far, comm, NULL));
  CHECK(sdmaRecv(out + count, count, sdmaFloat32, from, comm, NULL));
  CHECK(sdmaGroupEnd());
  for (size_t i = 0; i < count; ++i)
    wrong +=
        out[i] != value(prev, i) || out[count + i] != value(from, count + i);
  if (rank == 0)
    CHECK(sdmaSend(in, count, sdmaFloat32, nranks - 1, comm, NULL));
  if (rank == nranks - 1) {
    CHECK(sdmaRecv(out, count, sdmaFloat32, 0, comm, NULL));
    for (size_t i = 0; i < count; ++i)
      wrong += out[i] != value(0, i);
  }
  /* In place all-to-all, and memory that is not the node's symmetric
   * memory: refused on every rank before anything moves. */
  float *plain = malloc(total * sizeof(float));
  if (sdmaAlltoAll(in, in, count, sdmaFloat32, comm, NULL) !=
          sdmaInvalidArgument ||
      sdmaAllGather(plain, out, count, sdmaFloat32, comm, NULL) !=
          sdmaInvalidArgument) {
    fprintf(stderr, "rank %d: a bad all-to-all or all-gather was not refused\n",
            rank);
    wrong++;
  } else if (rank == 0) {
    printf("refused: %s\n", sdmaGetLastError(comm));
  }
  free(plain);
  CHECK(sdmaAllGather(in, out, count, sdmaFloat32, comm, NULL));
  for (int p = 0; p < nranks; ++p)
    for (size_t i = 0; i < count; ++i)
      wrong += out[p * count + i] != value(p, i);

  sdmaResult_t async;
  CHECK(sdmaCommGetAsyncError(comm, &async));
  CHECK(async);
  printf("rank %d of %d (%s transport): all-gather, all-to-all, all-reduce, "
         "reduce-scatter, all-to-allv, broadcast, reduce, scatter, gather, "
         "send/recv %s\n",
         rank, nranks, transport.name, wrong ? "WRONG" : "correct");
  CHECK(sdmaMemFree(comm, out));
  CHECK(sdmaMemFree(comm, in));
  CHECK(sdmaCommDestroy(comm));
#ifdef SDMA_EXAMPLE_NCCL
  ncclCommDestroy(context.comm);
#else
  MPI_Comm_free(&context.comm);
#endif
  MPI_Finalize();
  return wrong ? 1 : 0;
}
