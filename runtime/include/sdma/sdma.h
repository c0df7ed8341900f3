/*===- sdma.h - the sdma C API ----------------------------------*- C -*-===*\
|*                                                                            *|
|* Part of sdma, a compiler for GPU collective-communication schedules.       *|
|*                                                                            *|
|* NCCL's conventions: one communicator per rank (one process per GPU),       *|
|* made from a unique id that one rank creates and the job hands to all;      *|
|* collectives take (sendbuff, recvbuff, count, datatype, [root,] comm,       *|
|* stream), enqueue on the caller's stream and return at once. Every call     *|
|* returns an sdmaResult_t; sdmaGetLastError(comm) says what went wrong.      *|
|*                                                                            *|
|* Buffers are symmetric: allocated with sdmaMemAlloc or registered with      *|
|* sdmaMemRegister, both collective (every rank, same order), and passed at   *|
|* the same offset of the same allocation on every rank.                      *|
|*                                                                            *|
|*   sdmaUniqueId id;                                                         *|
|*   if (rank == 0) sdmaGetUniqueId(&id);                                     *|
|*   MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);                  *|
|*   sdmaComm_t comm;                                                         *|
|*   sdmaCommInitRank(&comm, nranks, id, rank);                               *|
|*   float *in, *out;                                                         *|
|*   sdmaMemAlloc(comm, (void **)&in, n * sizeof(float));                     *|
|*   sdmaMemAlloc(comm, (void **)&out, nranks * n * sizeof(float));           *|
|*   sdmaAllGather(in, out, n, sdmaFloat32, comm, stream);                    *|
|*   cudaStreamSynchronize(stream);                                           *|
|*   sdmaCommDestroy(comm);                                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SDMA_SDMA_H
#define SDMA_SDMA_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SDMA_API __attribute__((visibility("default")))
#else
#define SDMA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SDMA_MAJOR 0
#define SDMA_MINOR 3
#define SDMA_PATCH 0
#define SDMA_VERSION_CODE (SDMA_MAJOR * 10000 + SDMA_MINOR * 100 + SDMA_PATCH)
/* "MAJOR.MINOR.PATCH": what every tool, the library and the Python package
 * (sdma.__version__) report. */
#define SDMA_STRINGIFY_(x) #x
#define SDMA_STRINGIFY(x) SDMA_STRINGIFY_(x)
#define SDMA_VERSION_STRING                                                    \
  SDMA_STRINGIFY(SDMA_MAJOR)                                                   \
  "." SDMA_STRINGIFY(SDMA_MINOR) "." SDMA_STRINGIFY(SDMA_PATCH)

typedef struct sdmaComm *sdmaComm_t;
typedef struct sdmaSchedule *sdmaSchedule_t;
/* A cudaStream_t / CUstream (or hipStream_t); NULL is the legacy default
 * stream. The CPU device runs each call before it returns. */
typedef void *sdmaStream_t;

#define SDMA_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[SDMA_UNIQUE_ID_BYTES];
} sdmaUniqueId;

/* Numbered as ncclResult_t. */
typedef enum {
  sdmaSuccess = 0,
  sdmaUnhandledCudaError = 1,
  sdmaSystemError = 2,
  sdmaInternalError = 3,
  sdmaInvalidArgument = 4,
  sdmaInvalidUsage = 5,
  sdmaRemoteError = 6,
  sdmaInProgress = 7,
  /* sdma's own (no NCCL result has it): with sdmaConfig_t.privateBuffers,
   * a call whose path lets another rank reach a buffer that is not
   * symmetric memory; nothing was enqueued and no rank was asked (a call
   * that shares its buffers, sharedBytes: every rank was, and every rank
   * gets this alike). */
  sdmaNotSymmetric = 8,
  sdmaNumResults = 9
} sdmaResult_t;

/* Numbered as ncclDataType_t. */
typedef enum {
  sdmaInt8 = 0,
  sdmaChar = 0,
  sdmaUint8 = 1,
  sdmaInt32 = 2,
  sdmaInt = 2,
  sdmaUint32 = 3,
  sdmaInt64 = 4,
  sdmaUint64 = 5,
  sdmaFloat16 = 6,
  sdmaHalf = 6,
  sdmaFloat32 = 7,
  sdmaFloat = 7,
  sdmaFloat64 = 8,
  sdmaDouble = 8,
  sdmaBfloat16 = 9,
  sdmaNumTypes = 10
} sdmaDataType_t;

/* Reduction operators, numbered as ncclRedOp_t. */
typedef enum {
  sdmaSum = 0,
  sdmaProd = 1,
  sdmaMax = 2,
  sdmaMin = 3,
  sdmaAvg = 4,    /* the sum divided by the rank count (integers truncate) */
  sdmaNumOps = 5, /* sdmaRedOpCreatePreMulSum's operators come after */
  sdmaMaxRedOp = 0x7fffffff /* (as NCCL's: the enum is an int) */
} sdmaRedOp_t;

/* Where a PreMulSum scalar is (as ncclScalarResidence_t). */
typedef enum {
  sdmaScalarDevice = 0,       /* device memory, read by the kernel */
  sdmaScalarHostImmediate = 1 /* host memory, read by the call */
} sdmaScalarResidence_t;

/* Communicator options (sdmaCommInitRankConfig). Initialise with
 * SDMA_CONFIG_INITIALIZER; a field left at its initial value takes the
 * environment's setting, else the default. */
typedef struct {
  size_t size;          /* sizeof(sdmaConfig_t) */
  unsigned int magic;   /* SDMA_CONFIG_MAGIC */
  unsigned int version; /* SDMA_VERSION_CODE */
  /* "cpu", "cuda" or "hip" (NULL: $SDMA_DEVICE, else "cuda"). */
  const char *device;
  /* The CUDA device (-1: the calling thread's current device). */
  int deviceOrdinal;
  /* Bytes of each rank's symmetric heap (0: $SDMA_HEAP_BYTES, else 256 MiB
   * on a GPU, 16 MiB on the CPU device). */
  size_t heapBytes;
  /* Setup exchanges and every wait in a kernel (0: $SDMA_TIMEOUT_MS, else
   * 30000). */
  unsigned long long timeoutMs;
  /* Compare each new call signature across ranks once (1, the default; 0
   * skips; -1: $SDMA_CHECK_CALLS). */
  int checkCalls;
  /* Kernel/schedule cache, compiler library, precompiled programs (NULL:
   * the defaults). */
  const char *cacheDirectory;
  const char *compilerLibrary;
  const char *programDirectory;
  /* Load/store or DMA: "auto", "ldst" or "dma" (NULL: $SDMA_PATH, else
   * "auto"); the DMA plans' variant: "pcpy", "b2b", "bcst" or "swap" (NULL:
   * $SDMA_DMA_VARIANT, else "pcpy"). Added after 0.3.0: a config of the
   * earlier size (without them) is still accepted. */
  const char *path;
  const char *dmaVariant;
  /* 1: any memory the device addresses may be a collective's buffer where
   * the call's path lets no other rank reach it (a low-latency call's
   * buffers, which peers reach through the communicator's inboxes only; a
   * one-rank call's); a call whose path needs a buffer that is not
   * symmetric memory then fails at once on this rank with sdmaNotSymmetric
   * (nothing enqueued, no rank asked), so the caller can stage it
   * (sdmaMemcpyAsync) and call again, as the NCCL drop-in does. Every rank
   * must stage alike. 0 (the default): every buffer a collective touches is
   * symmetric memory. Added after `path`: configs of the two earlier sizes
   * are still accepted. */
  int privateBuffers;
  /* A call on the barrier path (not low-latency) one of whose buffers that
   * peers reach is at least this many bytes shares its buffers for this
   * call: every rank's are exchanged (one host exchange per such call;
   * each peer allocation mapped once), so they may be any memory the
   * device can share (cudaMalloc'd, a caching allocator's block), not only
   * symmetric memory. Memory some rank cannot share fails the call on
   * every rank (sdmaNotSymmetric with privateBuffers). 0: never; -1 (the
   * initialiser): $SDMA_SHARED_BYTES, else 0. Every rank alike. Added after
   * `privateBuffers`: configs of the earlier sizes are still accepted. */
  long long sharedBytes;
  /* Who submits the DMA path's commands: "host" (the driver's copies) or
   * "kernel" (AMD's GPU-initiated SDMA: a kernel writes the plan's packets
   * into the rank's engine rings; the CPU device runs the same writer on
   * host threads; refused on NVIDIA). NULL: $SDMA_DMA_SUBMIT, else "host".
   * Every rank alike. Added after `sharedBytes`: configs of the earlier
   * sizes are still accepted. */
  const char *dmaSubmit;
} sdmaConfig_t;

#define SDMA_CONFIG_MAGIC 0x53444d41u
#define SDMA_CONFIG_INITIALIZER                                                \
  {                                                                            \
    sizeof(sdmaConfig_t), SDMA_CONFIG_MAGIC, SDMA_VERSION_CODE, NULL, -1, 0,   \
        0, -1, NULL, NULL, NULL, NULL, NULL, 0, -1, NULL                       \
  }

/* Version and errors. */
SDMA_API sdmaResult_t sdmaGetVersion(int *version);
SDMA_API const char *sdmaGetErrorString(sdmaResult_t result);
/* What the last failed call on `comm` (NULL: the last failed call of this
 * thread without a communicator, e.g. sdmaCommInitRank) said. */
SDMA_API const char *sdmaGetLastError(sdmaComm_t comm);

/* Making a communicator. sdmaGetUniqueId starts the job's meeting point in
 * this process: keep the process alive until every rank has joined. */
SDMA_API sdmaResult_t sdmaGetUniqueId(sdmaUniqueId *uniqueId);
/* The id as 256 hexadecimal digits (buffer of at least 257 bytes), and
 * back: for environment variables and key-value stores. */
SDMA_API sdmaResult_t sdmaUniqueIdToString(const sdmaUniqueId *uniqueId,
                                           char *text, size_t bytes);
SDMA_API sdmaResult_t sdmaUniqueIdFromString(const char *text,
                                             sdmaUniqueId *uniqueId);
SDMA_API sdmaResult_t sdmaCommInitRank(sdmaComm_t *comm, int nranks,
                                       sdmaUniqueId commId, int rank);
SDMA_API sdmaResult_t sdmaCommInitRankConfig(sdmaComm_t *comm, int nranks,
                                             sdmaUniqueId commId, int rank,
                                             sdmaConfig_t *config);
/* Multi-node (docs/multi-node.md): a job of N nodes of G ranks, numbered
 * node-major (rank r is local rank r % G of node r / G). sdma moves bytes
 * within a node; between nodes, the job's own network library does, seen
 * as a transport: one group of sends and receives at a time. sdma_mpi.h
 * makes one from an MPI communicator. */
typedef struct {
  int send;     /* 1: send `bytes` at `buffer` to `peer`; 0: receive */
  int peer;     /* a rank of the transport */
  void *buffer; /* device memory where deviceMemory is 1, unless `host` */
  size_t bytes;
  int host; /* 1: `buffer` is host memory (setup messages, staged phases):
               a device-memory transport must stage it itself */
} sdmaTransportOp;

typedef struct {
  void *context; /* handed back to exchange; outlives the communicator */
  int rank, nranks;
  int deviceMemory; /* 1: exchange takes device memory (CUDA-aware) */
  const char *name; /* "mpi", for messages */
  /* Runs `count` ops as one group, ordered after the work enqueued on
   * `stream`: a pair's messages match in the order each side lists them.
   * sdmaSuccess, or a result with why in `message` (NUL-terminated, at most
   * `messageBytes`). A wait that never completes must time out. */
  sdmaResult_t (*exchange)(void *context, const sdmaTransportOp *ops, int count,
                           sdmaStream_t stream, char *message,
                           size_t messageBytes);
} sdmaTransport_t;

/* Joins a multi-node job: `localRanks` per node (0: the launcher's,
 * $LOCAL_WORLD_SIZE or $OMPI_COMM_WORLD_LOCAL_SIZE), the node's ranks
 * sharing memory as one communicator, `transport` between nodes (copied;
 * its context must outlive the communicator). Collective over the job.
 * On the result: sdmaCommCount/UserRank are the job's, sdmaMemAlloc the
 * node's symmetric memory; sdmaAllGather, sdmaAlltoAll, sdmaBroadcast,
 * sdmaScatter, sdmaGather, sdmaAllReduce, sdmaReduceScatter, sdmaReduce
 * (every type; sum, prod, max, min) and sdmaAlltoAllv (sdmaAlltoAllvSlots)
 * run the hierarchical schedules, and sdmaScheduleLoad/Launch take a
 * hierarchical schedule (sdma.local_ranks); memory registration,
 * sdmaMemcpyAsync, sdmaMemQuery and sdmaCommAbort act on the node's
 * communicator; the other calls (avg and PreMulSum, packed all-to-allv,
 * the MoE pair, point-to-point) are refused with sdmaInvalidUsage. */
SDMA_API sdmaResult_t sdmaCommInitMultiNode(sdmaComm_t *comm,
                                            const sdmaTransport_t *transport,
                                            int localRanks,
                                            sdmaConfig_t *config);
/* Waits for the device, meets the other ranks (bounded) and frees. */
SDMA_API sdmaResult_t sdmaCommDestroy(sdmaComm_t comm);
/* Makes every wait of the communicator's kernels fail now, those in flight
 * included (their calls return sdmaInvalidUsage, "aborted"), and the
 * communicator failed for good; from any thread, while another is inside
 * a call of it. It stays allocated: sdmaCommDestroy it once its calls have
 * returned (ncclCommAbort is the two together). */
SDMA_API sdmaResult_t sdmaCommAbort(sdmaComm_t comm);
/* NCCL's ncclCommShrink: the ranks of `comm` not in `excludeRanks` (which
 * do not call: they may have died) make a new communicator, renumbered in
 * their order, without a meeting point of their own: the lowest of them
 * makes the new job's id and hands it to the others through its symmetric
 * memory (bounded by the timeout), so it works on a communicator that has
 * failed. SDMA_SHRINK_ABORT first aborts `comm`'s calls in flight (as
 * sdmaCommAbort); `comm` still needs sdmaCommDestroy. A rank in
 * excludeRanks, a rank out of range or twice, or excluding everyone is
 * refused with sdmaInvalidArgument; single-node communicators only. */
#define SDMA_SHRINK_DEFAULT 0
#define SDMA_SHRINK_ABORT 1
SDMA_API sdmaResult_t sdmaCommShrink(sdmaComm_t comm, const int *excludeRanks,
                                     int excludeCount, sdmaComm_t *newcomm,
                                     int flags);
SDMA_API sdmaResult_t sdmaCommCount(const sdmaComm_t comm, int *count);
SDMA_API sdmaResult_t sdmaCommUserRank(const sdmaComm_t comm, int *rank);
/* sdmaSuccess in *asyncError while every kernel has been fine; else the
 * failure (sdmaRemoteError: a wait timed out; sdmaGetLastError names the
 * rank that did not signal). Reads host memory: no synchronisation. */
SDMA_API sdmaResult_t sdmaCommGetAsyncError(sdmaComm_t comm,
                                            sdmaResult_t *asyncError);
/* The path this rank's last collective on `comm` took, and why: "ldst
 * (...)" or "dma VARIANT (...)" ("" before the first). Valid until the next
 * call of this function on `comm`. */
SDMA_API sdmaResult_t sdmaCommGetLastPath(sdmaComm_t comm, const char **path);

/* Symmetric memory; all collective. */
SDMA_API sdmaResult_t sdmaMemAlloc(sdmaComm_t comm, void **ptr, size_t size);
SDMA_API sdmaResult_t sdmaMemFree(sdmaComm_t comm, void *ptr);
/* Makes [buff, buff + size) (memory the caller allocated; on the CPU device
 * only heap memory) usable in collectives. */
SDMA_API sdmaResult_t sdmaMemRegister(sdmaComm_t comm, void *buff, size_t size,
                                      void **handle);
SDMA_API sdmaResult_t sdmaMemDeregister(sdmaComm_t comm, void *handle);
/* *symmetric = 1 where [ptr, ptr + size) lies in one live sdmaMemAlloc
 * allocation or sdmaMemRegister registration of this rank, else 0 (local:
 * no other rank is asked). */
SDMA_API sdmaResult_t sdmaMemQuery(sdmaComm_t comm, const void *ptr,
                                   size_t size, int *symmetric);
/* Copies `bytes` from `src` to `dst` on the communicator's device in
 * `stream`'s order (any memory the device addresses, symmetric or not; not
 * collective). The CPU device copies before it returns. Overlapping or
 * null ranges are refused. Inside a group, on a single-node communicator,
 * it runs at the group's end, in order with the communicator's other calls
 * (sdmaGroupStart). */
SDMA_API sdmaResult_t sdmaMemcpyAsync(sdmaComm_t comm, void *dst,
                                      const void *src, size_t bytes,
                                      sdmaStream_t stream);

/* Collectives (NCCL's argument order and meanings). */
SDMA_API sdmaResult_t sdmaAllGather(const void *sendbuff, void *recvbuff,
                                    size_t sendcount, sdmaDataType_t datatype,
                                    sdmaComm_t comm, sdmaStream_t stream);
/* `count` elements to and from each peer; in place when sendbuff equals
 * recvbuff. */
SDMA_API sdmaResult_t sdmaAlltoAll(const void *sendbuff, void *recvbuff,
                                   size_t count, sdmaDataType_t datatype,
                                   sdmaComm_t comm, sdmaStream_t stream);
SDMA_API sdmaResult_t sdmaBroadcast(const void *sendbuff, void *recvbuff,
                                    size_t count, sdmaDataType_t datatype,
                                    int root, sdmaComm_t comm,
                                    sdmaStream_t stream);
/* Root's sendbuff holds nranks * recvcount elements. */
SDMA_API sdmaResult_t sdmaScatter(const void *sendbuff, void *recvbuff,
                                  size_t recvcount, sdmaDataType_t datatype,
                                  int root, sdmaComm_t comm,
                                  sdmaStream_t stream);
/* Root's recvbuff receives nranks * sendcount elements. */
SDMA_API sdmaResult_t sdmaGather(const void *sendbuff, void *recvbuff,
                                 size_t sendcount, sdmaDataType_t datatype,
                                 int root, sdmaComm_t comm,
                                 sdmaStream_t stream);

/* Reductions (NCCL's argument order and meanings). Every element type;
 * float16 and bfloat16 accumulate in fp32 and round once per step,
 * integers wrap. In place when sendbuff == recvbuff. */
SDMA_API sdmaResult_t sdmaAllReduce(const void *sendbuff, void *recvbuff,
                                    size_t count, sdmaDataType_t datatype,
                                    sdmaRedOp_t op, sdmaComm_t comm,
                                    sdmaStream_t stream);
/* sendbuff holds nranks * recvcount elements; in place when recvbuff ==
 * sendbuff + rank * recvcount. */
SDMA_API sdmaResult_t sdmaReduceScatter(const void *sendbuff, void *recvbuff,
                                        size_t recvcount,
                                        sdmaDataType_t datatype, sdmaRedOp_t op,
                                        sdmaComm_t comm, sdmaStream_t stream);
/* recvbuff matters on the root only (may be NULL elsewhere). */
SDMA_API sdmaResult_t sdmaReduce(const void *sendbuff, void *recvbuff,
                                 size_t count, sdmaDataType_t datatype,
                                 sdmaRedOp_t op, int root, sdmaComm_t comm,
                                 sdmaStream_t stream);
/* An operator for the reductions above that sums every rank's input times
 * a scalar (NCCL's ncclRedOpCreatePreMulSum; torch's PREMUL_SUM, FSDP's
 * gradient pre-division): `*scalar` is a value of `datatype`, read now
 * (sdmaScalarHostImmediate), or in device memory (sdmaScalarDevice), read
 * by each call's kernel when it runs (it must stay valid while the
 * operator is used). The operator belongs to `comm` and reduces
 * `datatype` only. Each rank passes its own scalar (they may differ, as in
 * NCCL): each input element is multiplied by its rank's scalar as it is
 * summed (integers wrap; float16 and bfloat16 multiply and sum in fp32 and
 * round once), each product rounded on its own. Every rank uses the same
 * residence (a mix is a different call, refused). At one rank only a host
 * scalar of 1 is served; a multi-node communicator refuses it. */
SDMA_API sdmaResult_t sdmaRedOpCreatePreMulSum(sdmaRedOp_t *op, void *scalar,
                                               sdmaDataType_t datatype,
                                               sdmaScalarResidence_t residence,
                                               sdmaComm_t comm);
SDMA_API sdmaResult_t sdmaRedOpDestroy(sdmaRedOp_t op, sdmaComm_t comm);

/* All-to-allv with counts in device memory (MoE dispatch and combine; no
 * host synchronisation, CUDA-graph capturable). Each rank sends
 * sendcounts[p] rows of `rowcount` elements to rank p; `sendcounts` is
 * nranks int64 values in device memory, read by the kernel only.
 * `recvcounts` (device memory, nranks int64, may be NULL) receives the
 * counts that arrived. sendbuff and recvbuff hold nranks * capacity rows
 * (symmetric memory: sdmaMemAlloc or sdmaMemRegister):
 *   sdmaAlltoAllvSlots:  slot p (capacity rows) of sendbuff goes to rank p,
 *                        slot r of recvbuff comes from rank r;
 *   sdmaAlltoAllvPacked: rows packed by peer in both (torch's
 *                        all_to_all_single with split sizes): offsets are
 *                        exclusive prefix sums of the counts.
 * A count above `capacity`, or negative, moves nothing for that peer and
 * makes the communicator fail (sdmaCommGetAsyncError names the ranks). */
typedef enum {
  sdmaAlltoAllvSlots = 0,
  sdmaAlltoAllvPacked = 1,
} sdmaAlltoAllvLayout_t;
SDMA_API sdmaResult_t sdmaAlltoAllv(const void *sendbuff,
                                    const int64_t *sendcounts, void *recvbuff,
                                    int64_t *recvcounts, size_t capacity,
                                    size_t rowcount, sdmaDataType_t datatype,
                                    sdmaAlltoAllvLayout_t layout,
                                    sdmaComm_t comm, sdmaStream_t stream);

/* MoE dispatch into expert-major rows (torch's all_to_all_vdev_2d), with
 * `experts` local experts per rank; counts in device memory, read and
 * written by the kernel only (no host synchronisation, CUDA-graph
 * capturable). `insplits` holds nranks * experts int64, rank-major:
 * insplits[p * experts + e] rows of sendbuff (packed in that order) go to
 * expert e of rank p. recvbuff receives them expert-major: expert 0's rows
 * from rank 0, 1, ..., then expert 1's, ...; each expert's segment padded
 * to a multiple of `majoralign` rows and to at least `majoralign` (an
 * empty expert still gets one aligned block: grouped-GEMM kernels reject
 * empty groups). `outsplitsoffsets` (2 * experts * nranks int64, may be
 * NULL) receives the counts that arrived, expert-major (e * nranks + r),
 * then the offset of each segment in recvbuff. Both buffers hold
 * nranks * capacity rows of `rowcount` elements (symmetric memory);
 * `capacity` bounds every count. A count above it or negative, or a
 * segment that would end past recvbuff, moves nothing for that segment
 * and makes the communicator fail naming the ranks. */
SDMA_API sdmaResult_t sdmaAlltoAllv2d(const void *sendbuff,
                                      const int64_t *insplits, void *recvbuff,
                                      int64_t *outsplitsoffsets, int experts,
                                      size_t capacity, size_t majoralign,
                                      size_t rowcount, sdmaDataType_t datatype,
                                      sdmaComm_t comm, sdmaStream_t stream);
/* Its inverse, the MoE combine (torch's all_to_all_vdev_2d_offset):
 * `insplitsoffsets` (2 * experts * nranks int64) gives, expert-major, the
 * rows of sendbuff going back to each rank, then where each run starts in
 * sendbuff (the dispatch's outsplitsoffsets; padding is not sent).
 * recvbuff receives them packed rank-major (rank 0's expert 0, expert 1,
 * ..., then rank 1's): the dispatch's input order. `outsplitsoffsets`
 * (2 * nranks * experts int64, may be NULL) receives the counts,
 * rank-major, then their packed offsets. */
SDMA_API sdmaResult_t sdmaAlltoAllv2dOffset(
    const void *sendbuff, const int64_t *insplitsoffsets, void *recvbuff,
    int64_t *outsplitsoffsets, int experts, size_t capacity, size_t rowcount,
    sdmaDataType_t datatype, sdmaComm_t comm, sdmaStream_t stream);

/* Point-to-point (NCCL's ncclSend/ncclRecv): only the two peers call, a
 * send and its receive with the same count and type; a pair's messages
 * match in the order each side issues them. Buffers are any memory of the
 * rank's device (device memory on a GPU; no registration). Between
 * sdmaGroupStart and sdmaGroupEnd (per thread; they nest) sends and
 * receives are collected and run at the outermost sdmaGroupEnd as one
 * launch, every operation at once (as NCCL's group: a ring or an
 * all-to-allv in one group completes); outside a group each runs alone. A
 * group holds at most 128 operations, on one communicator and one stream;
 * a call refused inside a group makes sdmaGroupEnd run none of the group
 * and return its error. Sends and receives are not capturable in a CUDA
 * graph yet. A send or receive that never finds its
 * match fails after the communicator's timeout, naming the peer
 * (sdmaCommGetAsyncError); so does a receive of another size. */
SDMA_API sdmaResult_t sdmaSend(const void *sendbuff, size_t count,
                               sdmaDataType_t datatype, int peer,
                               sdmaComm_t comm, sdmaStream_t stream);
SDMA_API sdmaResult_t sdmaRecv(void *recvbuff, size_t count,
                               sdmaDataType_t datatype, int peer,
                               sdmaComm_t comm, sdmaStream_t stream);
/* Groups (NCCL's ncclGroupStart/End): collectives, reductions,
 * all-to-allvs, sdmaMemcpyAsync and schedule launches of single-node
 * communicators made inside a group run at the outermost sdmaGroupEnd,
 * before its sends and receives: on any communicators of this process, each
 * communicator's calls in order on a thread of their own, so one thread may
 * make every rank's call (ncclCommInitAll's pattern), and the launches of
 * ranks of one job sharing a GPU start as one launch. The handle, type and
 * operator are checked when a call is made (a refusal: the group's calls do
 * not run and sdmaGroupEnd returns it), the rest (buffers, sizes, roots,
 * sdmaNotSymmetric) at the group's end. sdmaGroupEnd returns the first
 * failure (each failed call's message on its communicator); a failed call
 * stops its communicator's later calls. */
SDMA_API sdmaResult_t sdmaGroupStart(void);
SDMA_API sdmaResult_t sdmaGroupEnd(void);
/* For libraries over sdma (the NCCL drop-in): inside a group, `call(ctx)`
 * runs at its end as one of `comm`'s calls (on that communicator's thread,
 * in order with its other calls; the collectives and copies it makes there
 * are part of the group; sends, receives and stream waits there are
 * refused), its result the call's; outside a group it runs now.
 * `release(ctx)` (may be NULL) follows once, whether `call` ran or not. */
SDMA_API sdmaResult_t sdmaGroupCall(sdmaComm_t comm,
                                    sdmaResult_t (*call)(void *ctx), void *ctx,
                                    void (*release)(void *ctx));

/* Any schedule: `textOrPath` is schedule text, a .mlir file or a compiled
 * load/store program (.hip). Collective; every rank the same schedule. */
SDMA_API sdmaResult_t sdmaScheduleLoad(sdmaComm_t comm, const char *textOrPath,
                                       sdmaSchedule_t *schedule);
SDMA_API sdmaResult_t sdmaScheduleGetBufferCount(sdmaSchedule_t schedule,
                                                 int *count);
/* Buffer `index`'s name (valid while the schedule is) and its size in
 * chunks. */
SDMA_API sdmaResult_t sdmaScheduleGetBuffer(sdmaSchedule_t schedule, int index,
                                            const char **name,
                                            long long *chunks);
/* One run: buffers[b] is this rank's buffer b (symmetric), each chunk
 * `count` elements of `datatype`. */
SDMA_API sdmaResult_t sdmaScheduleLaunch(sdmaSchedule_t schedule,
                                         void *const *buffers, int nbuffers,
                                         size_t count, sdmaDataType_t datatype,
                                         sdmaStream_t stream);
SDMA_API sdmaResult_t sdmaScheduleFree(sdmaSchedule_t schedule);

#ifdef __cplusplus
}
#endif

#endif /* SDMA_SDMA_H */
