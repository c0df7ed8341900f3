//===- CApi.cpp - sdma.h over the Communicator ----------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Arguments the C layer can judge alone (null pointers, types, roots) are
// refused here as sdmaInvalidArgument; a failure of the Communicator
// carries its kind (Error.h), mapped to a result code one to one
// (resultOf). Nothing throws across the C boundary.
//
//===----------------------------------------------------------------------===//

#include "capi/CApiCommon.h"

#include "sdma/runtime/CheckedMath.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <unordered_set>
#include <vector>

using namespace sdma::rt;

namespace sdma::capi {

thread_local std::string threadError;

LiveHandles &liveHandles() {
  static LiveHandles *handles = new LiveHandles(); // never destroyed
  return *handles;
}

sdmaResult_t fail(sdmaComm *comm, sdmaResult_t result,
                  const std::string &message) {
  (comm ? comm->lastError : threadError) = message;
  if (result != sdmaSuccess)
    refusedInGroup(result, message);
  return result;
}

sdmaResult_t deadHandle(const char *what) {
  return fail(nullptr, sdmaInvalidArgument,
              std::string(what) + " is not a live " +
                  (std::string(what) == "comm"
                       ? "communicator (destroyed, or not made by "
                         "sdmaCommInitRank)"
                       : "schedule (freed, or not made by sdmaScheduleLoad)"));
}

sdmaResult_t resultOf(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::InvalidArgument:
    return sdmaInvalidArgument;
  case ErrorKind::InvalidUsage:
    return sdmaInvalidUsage;
  case ErrorKind::Remote:
    return sdmaRemoteError;
  case ErrorKind::System:
    return sdmaSystemError;
  case ErrorKind::Device:
    return sdmaUnhandledCudaError;
  case ErrorKind::Internal:
    return sdmaInternalError;
  case ErrorKind::NotSymmetric:
    return sdmaNotSymmetric;
  }
  return sdmaInternalError;
}

sdmaResult_t fail(sdmaComm *comm, const std::string &where,
                  const Error &error) {
  return fail(comm, resultOf(error.kind),
              where.empty() ? error.message : where + ": " + error.message);
}

bool readConfig(const sdmaConfig_t *config, CommOptions &options,
                std::string &why) {
  if (!config)
    return true;
  // Earlier configs end before `path`, `privateBuffers`, `sharedBytes` or
  // `dmaSubmit`: their fields mean the same.
  bool withSubmit = config->size == sizeof(sdmaConfig_t);
  bool withShared =
      withSubmit || config->size == offsetof(sdmaConfig_t, dmaSubmit);
  bool withPrivate =
      withShared || config->size == offsetof(sdmaConfig_t, sharedBytes);
  bool withPath =
      withPrivate || config->size == offsetof(sdmaConfig_t, privateBuffers);
  if (config->magic != SDMA_CONFIG_MAGIC ||
      (!withPath && config->size != offsetof(sdmaConfig_t, path))) {
    why = "config was not initialised with SDMA_CONFIG_INITIALIZER";
    return false;
  }
  options.device = config->device ? config->device : "";
  options.deviceOrdinal = config->deviceOrdinal;
  options.heapBytes = config->heapBytes;
  options.timeoutMs = config->timeoutMs;
  if (config->checkCalls >= 0)
    options.checkCalls = config->checkCalls != 0;
  options.cacheDirectory = config->cacheDirectory ? config->cacheDirectory : "";
  options.compilerLibrary =
      config->compilerLibrary ? config->compilerLibrary : "";
  options.programDirectory =
      config->programDirectory ? config->programDirectory : "";
  if (withPath) {
    options.path = config->path ? config->path : "";
    options.dmaVariant = config->dmaVariant ? config->dmaVariant : "";
  }
  if (withPrivate) {
    if (config->privateBuffers != 0 && config->privateBuffers != 1) {
      why = "config privateBuffers is " +
            std::to_string(config->privateBuffers) + "; it takes 0 or 1";
      return false;
    }
    options.privateBuffers = config->privateBuffers == 1;
  }
  if (withShared) {
    if (config->sharedBytes < -1) {
      why = "config sharedBytes is " + std::to_string(config->sharedBytes) +
            "; it takes -1 (the environment's), 0 (never) or a size";
      return false;
    }
    options.sharedBytes = config->sharedBytes;
  }
  if (withSubmit)
    options.dmaSubmit = config->dmaSubmit ? config->dmaSubmit : "";
  return true;
}

sdmaResult_t notMultiNode(sdmaComm *comm, const std::string &call) {
  return fail(comm, sdmaInvalidUsage,
              call + " is not built for a multi-node communicator yet");
}

} // namespace sdma::capi

using namespace sdma::capi;

namespace {

sdmaResult_t runOp(CommOp op, const void *send, void *recv, size_t count,
                   sdmaDataType_t type, int root, sdmaComm_t comm,
                   sdmaStream_t stream) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument,
                std::string(commOpName(op)) + ": comm is NULL");
  if (type < 0 || type >= sdmaNumTypes)
    return fail(comm, sdmaInvalidArgument,
                std::string(commOpName(op)) + ": invalid datatype " +
                    std::to_string(type));
  if (!comm->multi)
    return runOrDefer(
        comm, commOpName(op),
        [=](Error &error) {
          return comm->node->collective(op, send, recv, count,
                                        static_cast<DataType>(type), root,
                                        stream, error);
        },
        true);
  return guarded(comm, [&] {
    Error error;
    if (comm->multi->collective(op, send, recv, count,
                                static_cast<DataType>(type), root, stream,
                                error))
      return sdmaSuccess;
    return fail(comm, commOpName(op), error);
  });
}
sdmaResult_t runReduction(CommReduction kind, const void *send, void *recv,
                          size_t count, sdmaDataType_t type, sdmaRedOp_t op,
                          int root, sdmaComm_t comm, sdmaStream_t stream) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  std::string name = commReductionName(kind);
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, name + ": comm is NULL");
  if (type < 0 || type >= sdmaNumTypes)
    return fail(comm, sdmaInvalidArgument,
                name + ": invalid datatype " + std::to_string(type));
  Arithmetic arithmetic{};
  std::string why;
  if (!resolveRedOp(comm, type, op, arithmetic, why))
    return fail(comm, sdmaInvalidArgument, name + ": " + why);
  if (!comm->multi)
    return runOrDefer(
        comm, name,
        [=](Error &error) {
          return comm->node->reduce(kind, send, recv, count, arithmetic, root,
                                    stream, error);
        },
        true);
  return guarded(comm, [&] {
    Error error;
    if (comm->multi->reduce(kind, send, recv, count, arithmetic, root, stream,
                            error))
      return sdmaSuccess;
    return fail(comm, name, error);
  });
}

/// A communicator of `options` as rank `rank` of `nranks` in job
/// `commId`, into *comm (checked by the caller).
sdmaResult_t initWith(sdmaComm_t *comm, int nranks, sdmaUniqueId commId,
                      int rank, const CommOptions &options) {
  return guarded(nullptr, [&] {
    UniqueId id;
    std::memcpy(&id, &commId, sizeof(id));
    Error error;
    auto made = Communicator::create(id, rank, nranks, options, error);
    if (!made)
      return fail(nullptr, "rank " + std::to_string(rank), error);
    *comm = new sdmaComm();
    (*comm)->comm = std::move(made);
    (*comm)->node = (*comm)->comm.get();
    liveHandles().add(*comm);
    return sdmaSuccess;
  });
}

} // namespace

extern "C" {

sdmaResult_t sdmaGetVersion(int *version) {
  if (!version)
    return fail(nullptr, sdmaInvalidArgument, "version is NULL");
  *version = SDMA_VERSION_CODE;
  return sdmaSuccess;
}

const char *sdmaGetErrorString(sdmaResult_t result) {
  switch (result) {
  case sdmaSuccess:
    return "no error";
  case sdmaUnhandledCudaError:
    return "unhandled cuda error (run with SDMA_DEBUG or see "
           "sdmaGetLastError)";
  case sdmaSystemError:
    return "unhandled system error (out of memory, shared memory, sockets)";
  case sdmaInternalError:
    return "internal error - please report this issue to the sdma developers";
  case sdmaInvalidArgument:
    return "invalid argument";
  case sdmaInvalidUsage:
    return "invalid usage (ranks disagree, or an API misuse)";
  case sdmaRemoteError:
    return "remote process exited, timed out or there was a network error";
  case sdmaInProgress:
    return "operation in progress";
  case sdmaNotSymmetric:
    return "a buffer the call's path shares is not symmetric memory (stage it "
           "or register it)";
  default:
    return "unknown result code";
  }
}

const char *sdmaGetLastError(sdmaComm_t comm) {
  return comm ? comm->lastError.c_str() : threadError.c_str();
}

sdmaResult_t sdmaGetUniqueId(sdmaUniqueId *uniqueId) {
  if (!uniqueId)
    return fail(nullptr, sdmaInvalidArgument, "uniqueId is NULL");
  return guarded(nullptr, [&] {
    static_assert(sizeof(UniqueId) == sizeof(sdmaUniqueId), "id size");
    UniqueId id;
    Error error;
    if (!createUniqueId(id, error))
      return fail(nullptr, "", error);
    std::memcpy(uniqueId, &id, sizeof(id));
    return sdmaSuccess;
  });
}

sdmaResult_t sdmaUniqueIdToString(const sdmaUniqueId *uniqueId, char *text,
                                  size_t bytes) {
  if (!uniqueId || !text || bytes < 2 * SDMA_UNIQUE_ID_BYTES + 1)
    return fail(nullptr, sdmaInvalidArgument,
                "sdmaUniqueIdToString needs an id and 257 bytes of text");
  static const char *digits = "0123456789abcdef";
  for (int i = 0; i < SDMA_UNIQUE_ID_BYTES; ++i) {
    unsigned char c = static_cast<unsigned char>(uniqueId->internal[i]);
    text[2 * i] = digits[c >> 4];
    text[2 * i + 1] = digits[c & 15];
  }
  text[2 * SDMA_UNIQUE_ID_BYTES] = '\0';
  return sdmaSuccess;
}

sdmaResult_t sdmaUniqueIdFromString(const char *text, sdmaUniqueId *uniqueId) {
  if (!text || !uniqueId || std::strlen(text) != 2 * SDMA_UNIQUE_ID_BYTES)
    return fail(nullptr, sdmaInvalidArgument,
                "a unique id is 256 hexadecimal digits");
  auto value = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  for (int i = 0; i < SDMA_UNIQUE_ID_BYTES; ++i) {
    int hi = value(text[2 * i]), lo = value(text[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return fail(nullptr, sdmaInvalidArgument,
                  "a unique id is 256 hexadecimal digits");
    uniqueId->internal[i] = static_cast<char>(hi * 16 + lo);
  }
  return sdmaSuccess;
}

sdmaResult_t sdmaCommInitRankConfig(sdmaComm_t *comm, int nranks,
                                    sdmaUniqueId commId, int rank,
                                    sdmaConfig_t *config) {
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "comm is NULL");
  *comm = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(nullptr, sdmaInvalidArgument,
                "rank " + std::to_string(rank) + " of " +
                    std::to_string(nranks) + " is not a rank");
  std::string why;
  CommOptions options;
  if (!readConfig(config, options, why))
    return fail(nullptr, sdmaInvalidArgument, why);
  return initWith(comm, nranks, commId, rank, options);
}

sdmaResult_t sdmaCommInitRank(sdmaComm_t *comm, int nranks, sdmaUniqueId commId,
                              int rank) {
  return sdmaCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

sdmaResult_t sdmaCommDestroy(sdmaComm_t comm) {
  if (!comm)
    return sdmaSuccess; // as ncclCommDestroy(NULL)
  if (!liveHandles().remove(comm))
    return deadHandle("comm");
  return guarded(nullptr, [&] {
    delete comm;
    return sdmaSuccess;
  });
}

sdmaResult_t sdmaCommAbort(sdmaComm_t comm) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "sdmaCommAbort: comm is NULL");
  // Not through guarded(): a call in flight on another thread owns the
  // communicator's last error; this one reports only its own failure.
  Error error;
  if (comm->node->abort(error))
    return sdmaSuccess;
  return fail(nullptr, resultOf(error.kind), "sdmaCommAbort: " + error.message);
}

sdmaResult_t sdmaCommShrink(sdmaComm_t comm, const int *excludeRanks,
                            int excludeCount, sdmaComm_t *newcomm, int flags) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !newcomm || (excludeCount > 0 && !excludeRanks) ||
      excludeCount < 0 || (flags & ~SDMA_SHRINK_ABORT))
    return fail(comm, sdmaInvalidArgument,
                "sdmaCommShrink: comm or newcomm is NULL, excludeRanks is NULL "
                "with a count, the count is negative, or an unknown flag");
  *newcomm = nullptr;
  if (comm->multi)
    return notMultiNode(comm, "CommShrink");
  int R = comm->node->ranks(), me = comm->node->rank();
  std::vector<char> out(R, 0);
  for (int i = 0; i < excludeCount; ++i) {
    int q = excludeRanks[i];
    if (q < 0 || q >= R || out[q])
      return fail(comm, sdmaInvalidArgument,
                  "sdmaCommShrink: excluded rank " + std::to_string(q) +
                      (q < 0 || q >= R
                           ? " is out of range [0, " + std::to_string(R) + ")"
                           : " is listed twice"));
    out[q] = 1;
  }
  if (out[me])
    return fail(comm, sdmaInvalidArgument,
                "sdmaCommShrink: rank " + std::to_string(me) +
                    " is in excludeRanks: excluded ranks do not call");
  std::vector<int> members;
  for (int q = 0; q < R; ++q)
    if (!out[q])
      members.push_back(q);
  Error error;
  if ((flags & SDMA_SHRINK_ABORT) && !comm->node->abort(error))
    return fail(comm, resultOf(error.kind), "sdmaCommShrink: " + error.message);
  // The lowest member makes the new job's id and hands it to the others.
  sdmaUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (members.front() == me)
    if (sdmaResult_t r = sdmaGetUniqueId(&id))
      return fail(comm, r,
                  std::string("sdmaCommShrink: ") + sdmaGetLastError(nullptr));
  if (!comm->node->shareAmong(members.front(), members, &id, sizeof(id), error))
    return fail(comm, resultOf(error.kind), "sdmaCommShrink: " + error.message);
  int position =
      int(std::find(members.begin(), members.end(), me) - members.begin());
  // The new communicator keeps the parent's options (NCCL's, without a
  // config of its own).
  if (sdmaResult_t r = initWith(newcomm, int(members.size()), id, position,
                                comm->node->requestedOptions()))
    return fail(comm, r,
                std::string("sdmaCommShrink: ") + sdmaGetLastError(nullptr));
  return sdmaSuccess;
}

sdmaResult_t sdmaCommCount(const sdmaComm_t comm, int *count) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !count)
    return fail(comm, sdmaInvalidArgument, "comm or count is NULL");
  *count = comm->multi ? comm->multi->ranks() : comm->node->ranks();
  return sdmaSuccess;
}

sdmaResult_t sdmaCommUserRank(const sdmaComm_t comm, int *rank) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !rank)
    return fail(comm, sdmaInvalidArgument, "comm or rank is NULL");
  *rank = comm->multi ? comm->multi->rank() : comm->node->rank();
  return sdmaSuccess;
}

sdmaResult_t sdmaCommGetAsyncError(sdmaComm_t comm, sdmaResult_t *asyncError) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !asyncError)
    return fail(comm, sdmaInvalidArgument, "comm or asyncError is NULL");
  Error error;
  if (comm->multi ? comm->multi->asyncError(error)
                  : comm->node->asyncError(error)) {
    *asyncError = sdmaSuccess;
  } else {
    comm->lastError = error.message;
    *asyncError = resultOf(error.kind);
  }
  return sdmaSuccess;
}

sdmaResult_t sdmaMemQuery(sdmaComm_t comm, const void *ptr, size_t size,
                          int *symmetric) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !symmetric)
    return fail(comm, sdmaInvalidArgument, "comm or symmetric is NULL");
  *symmetric = comm->node->isSymmetric(ptr, size) ? 1 : 0;
  return sdmaSuccess;
}

sdmaResult_t sdmaCommGetLastPath(sdmaComm_t comm, const char **path) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !path)
    return fail(comm, sdmaInvalidArgument, "comm or path is NULL");
  comm->lastPath = comm->node->lastPath();
  *path = comm->lastPath.c_str();
  return sdmaSuccess;
}

sdmaResult_t sdmaMemAlloc(sdmaComm_t comm, void **ptr, size_t size) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !ptr)
    return fail(comm, sdmaInvalidArgument, "comm or ptr is NULL");
  return guarded(comm, [&] {
    Error error;
    if (comm->node->memAlloc(size, *ptr, error))
      return sdmaSuccess;
    return fail(comm, "sdmaMemAlloc", error);
  });
}

sdmaResult_t sdmaMemFree(sdmaComm_t comm, void *ptr) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "comm is NULL");
  return guarded(comm, [&] {
    Error error;
    if (comm->node->memFree(ptr, error))
      return sdmaSuccess;
    return fail(comm, "sdmaMemFree", error);
  });
}

sdmaResult_t sdmaMemRegister(sdmaComm_t comm, void *buff, size_t size,
                             void **handle) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !handle)
    return fail(comm, sdmaInvalidArgument, "comm or handle is NULL");
  return guarded(comm, [&] {
    Error error;
    int index = 0;
    if (!comm->node->registerMemory(buff, size, index, error))
      return fail(comm, "sdmaMemRegister", error);
    *handle = reinterpret_cast<void *>(static_cast<intptr_t>(index));
    return sdmaSuccess;
  });
}

sdmaResult_t sdmaMemcpyAsync(sdmaComm_t comm, void *dst, const void *src,
                             size_t bytes, sdmaStream_t stream) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "comm is NULL");
  auto copy = [=](Error &error) {
    return comm->node->copy(dst, src, bytes, stream, error);
  };
  // In a group: in order with the group's calls on this communicator (a
  // multi-node communicator's run when made).
  if (!comm->multi)
    return runOrDefer(comm, "sdmaMemcpyAsync", copy);
  return guarded(comm, [&] {
    Error error;
    return copy(error) ? sdmaSuccess : fail(comm, "sdmaMemcpyAsync", error);
  });
}

sdmaResult_t sdmaMemDeregister(sdmaComm_t comm, void *handle) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "comm is NULL");
  return guarded(comm, [&] {
    Error error;
    if (comm->node->deregisterMemory(
            static_cast<int>(reinterpret_cast<intptr_t>(handle)), error))
      return sdmaSuccess;
    return fail(comm, "sdmaMemDeregister", error);
  });
}

sdmaResult_t sdmaAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, sdmaDataType_t datatype,
                           sdmaComm_t comm, sdmaStream_t stream) {
  return runOp(CommOp::AllGather, sendbuff, recvbuff, sendcount, datatype, 0,
               comm, stream);
}

sdmaResult_t sdmaAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                          sdmaDataType_t datatype, sdmaComm_t comm,
                          sdmaStream_t stream) {
  return runOp(CommOp::AlltoAll, sendbuff, recvbuff, count, datatype, 0, comm,
               stream);
}

sdmaResult_t sdmaAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           sdmaDataType_t datatype, sdmaRedOp_t op,
                           sdmaComm_t comm, sdmaStream_t stream) {
  return runReduction(CommReduction::AllReduce, sendbuff, recvbuff, count,
                      datatype, op, 0, comm, stream);
}

sdmaResult_t sdmaReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, sdmaDataType_t datatype,
                               sdmaRedOp_t op, sdmaComm_t comm,
                               sdmaStream_t stream) {
  return runReduction(CommReduction::ReduceScatter, sendbuff, recvbuff,
                      recvcount, datatype, op, 0, comm, stream);
}

sdmaResult_t sdmaReduce(const void *sendbuff, void *recvbuff, size_t count,
                        sdmaDataType_t datatype, sdmaRedOp_t op, int root,
                        sdmaComm_t comm, sdmaStream_t stream) {
  return runReduction(CommReduction::Reduce, sendbuff, recvbuff, count,
                      datatype, op, root, comm, stream);
}

sdmaResult_t sdmaBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           sdmaDataType_t datatype, int root, sdmaComm_t comm,
                           sdmaStream_t stream) {
  return runOp(CommOp::Broadcast, sendbuff, recvbuff, count, datatype, root,
               comm, stream);
}

sdmaResult_t sdmaScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                         sdmaDataType_t datatype, int root, sdmaComm_t comm,
                         sdmaStream_t stream) {
  return runOp(CommOp::Scatter, sendbuff, recvbuff, recvcount, datatype, root,
               comm, stream);
}

sdmaResult_t sdmaGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                        sdmaDataType_t datatype, int root, sdmaComm_t comm,
                        sdmaStream_t stream) {
  return runOp(CommOp::Gather, sendbuff, recvbuff, sendcount, datatype, root,
               comm, stream);
}

sdmaResult_t sdmaScheduleLoad(sdmaComm_t comm, const char *textOrPath,
                              sdmaSchedule_t *schedule) {
  if (comm && !liveHandles().has(comm))
    return deadHandle("comm");
  if (!comm || !textOrPath || !schedule)
    return fail(comm, sdmaInvalidArgument,
                "comm, textOrPath or schedule is NULL");
  *schedule = nullptr;
  return guarded(comm, [&] {
    auto made = std::make_unique<sdmaSchedule>();
    made->owner = comm;
    made->multi = comm->multi != nullptr;
    Error error;
    if (comm->multi
            ? !comm->multi->loadSchedule(textOrPath, made->multiSchedule, error)
            : !comm->node->loadSchedule(textOrPath, made->schedule, error))
      return fail(comm, "sdmaScheduleLoad", error);
    *schedule = made.release();
    liveHandles().add(*schedule);
    return sdmaSuccess;
  });
}

sdmaResult_t sdmaScheduleGetBufferCount(sdmaSchedule_t schedule, int *count) {
  if (schedule && !liveHandles().has(schedule))
    return deadHandle("schedule");
  if (!schedule || !count)
    return fail(nullptr, sdmaInvalidArgument, "schedule or count is NULL");
  *count = static_cast<int>(schedule->buffers().size());
  return sdmaSuccess;
}

sdmaResult_t sdmaScheduleGetBuffer(sdmaSchedule_t schedule, int index,
                                   const char **name, long long *chunks) {
  if (schedule && !liveHandles().has(schedule))
    return deadHandle("schedule");
  if (!schedule || index < 0 || size_t(index) >= schedule->buffers().size())
    return fail(nullptr, sdmaInvalidArgument,
                "no buffer " + std::to_string(index) + " in the schedule");
  const Buffer &buffer = schedule->buffers()[index];
  if (name)
    *name = buffer.name.c_str();
  if (chunks)
    *chunks = buffer.chunks;
  return sdmaSuccess;
}

sdmaResult_t sdmaScheduleLaunch(sdmaSchedule_t schedule, void *const *buffers,
                                int nbuffers, size_t count,
                                sdmaDataType_t datatype, sdmaStream_t stream) {
  if (schedule && !liveHandles().has(schedule))
    return deadHandle("schedule");
  if (!schedule || (!buffers && nbuffers) || nbuffers < 0)
    return fail(nullptr, sdmaInvalidArgument,
                "sdmaScheduleLaunch: schedule or buffers is NULL");
  sdmaComm *comm = schedule->owner;
  if (!liveHandles().has(comm))
    return fail(nullptr, sdmaInvalidUsage,
                "sdmaScheduleLaunch: the schedule's communicator was "
                "destroyed");
  if (datatype < 0 || datatype >= sdmaNumTypes)
    return fail(comm, sdmaInvalidArgument,
                "sdmaScheduleLaunch: invalid datatype " +
                    std::to_string(datatype));
  std::vector<void *> list(buffers, buffers + nbuffers);
  std::optional<uint64_t> bytes =
      checkedMul(count, dataTypeBytes(static_cast<DataType>(datatype)));
  if (!bytes)
    return fail(comm, sdmaInvalidArgument,
                "sdmaScheduleLaunch: " + std::to_string(count) +
                    " elements of " +
                    dataTypeName(static_cast<DataType>(datatype)) +
                    " do not fit 64 bits of bytes");
  if (!comm->multi)
    // The schedule's plan is copied: it may be freed before a group ends.
    return runOrDefer(comm, "sdmaScheduleLaunch",
                      [comm, plan = schedule->schedule, list, bytes = *bytes,
                       stream](Error &error) {
                        return comm->node->launch(plan, list, bytes, stream,
                                                  error);
                      });
  return guarded(comm, [&] {
    Error error;
    if (comm->multi->launch(schedule->multiSchedule, list, *bytes, stream,
                            error))
      return sdmaSuccess;
    return fail(comm, "sdmaScheduleLaunch", error);
  });
}

sdmaResult_t sdmaScheduleFree(sdmaSchedule_t schedule) {
  if (schedule && !liveHandles().remove(schedule))
    return deadHandle("schedule");
  delete schedule;
  return sdmaSuccess;
}

} // extern "C"
