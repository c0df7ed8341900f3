//===- CApiCommon.h - what the C API's files share --------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The handles behind sdma.h's opaque types, the registry of live ones, and
// the one way a call fails: the message kept for sdmaGetLastError (the
// communicator's, or the thread's without one) and the result returned.
// CApi.cpp holds the communicator and collective calls, CApiPeer.cpp the
// point-to-point calls and groups, CApiRedOp.cpp the operators a
// communicator makes (PreMulSum).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CAPI_CAPICOMMON_H
#define SDMA_RUNTIME_LIB_CAPI_CAPICOMMON_H

#include "sdma/sdma.h"

#include "sdma/runtime/Communicator.h"
#include "sdma/runtime/MultiNode.h"

#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

struct sdmaComm {
  /// One node's communicator (sdmaCommInitRankConfig), else null.
  std::unique_ptr<sdma::rt::Communicator> comm;
  /// A multi-node job's (sdmaCommInitMultiNode): its transport, then the
  /// communicator that uses it (destroyed first), else null.
  std::unique_ptr<sdma::rt::Transport> transport;
  std::unique_ptr<sdma::rt::MultiNodeComm> multi;
  /// The communicator of this rank's node: `comm`, or the multi-node one's.
  sdma::rt::Communicator *node = nullptr;
  std::string lastError;
  std::string lastPath; // sdmaCommGetLastPath's answer
  /// The operators sdmaRedOpCreatePreMulSum made: operator sdmaNumOps + i
  /// is entry i while it has a value (sdmaRedOpDestroy empties it).
  std::mutex opsMutex;
  std::vector<std::optional<sdma::rt::Arithmetic>> ops;
};

struct sdmaSchedule {
  sdmaComm *owner = nullptr;
  sdma::rt::Communicator::Schedule schedule;
  /// On a multi-node communicator: the hierarchical schedule instead.
  sdma::rt::MultiNodeComm::Schedule multiSchedule;
  bool multi = false; // (the owner may be destroyed before the schedule)
  /// Its buffers, whichever it is.
  const std::vector<sdma::rt::Buffer> &buffers() const {
    return multi ? multiSchedule.plan.buffers : schedule.buffers;
  }
};

namespace sdma::capi {

/// The thread's last error without a communicator.
extern thread_local std::string threadError;

/// The communicators and schedules this library made and has not freed. A
/// handle that is not among them (destroyed twice, freed, never made) is
/// refused before it is dereferenced.
class LiveHandles {
public:
  void add(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(handle);
  }
  bool remove(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(handle) != 0;
  }
  bool has(const void *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(handle) != 0;
  }

private:
  std::mutex mutex_;
  std::unordered_set<const void *> live_;
};
LiveHandles &liveHandles();

/// Keeps `message` for sdmaGetLastError (comm may be null: the thread's)
/// and returns `result`.
sdmaResult_t fail(sdmaComm *comm, sdmaResult_t result,
                  const std::string &message);
/// Refuses a handle that is not live (`what`: "comm" or "schedule").
sdmaResult_t deadHandle(const char *what);
/// The result code of an error of `kind`: one to one.
sdmaResult_t resultOf(rt::ErrorKind kind);
/// Fails with `error`'s kind and message, after `where`.
sdmaResult_t fail(sdmaComm *comm, const std::string &where,
                  const rt::Error &error);
/// The options of `config` (null: none); false with why if it was not
/// made with SDMA_CONFIG_INITIALIZER.
bool readConfig(const sdmaConfig_t *config, rt::CommOptions &options,
                std::string &why);
/// The refusal of a call a multi-node communicator does not serve.
sdmaResult_t notMultiNode(sdmaComm *comm, const std::string &call);

/// A call refused inside a group on this thread (`message`, kept by
/// fail()): the group's end runs none of it and returns `result`.
void refusedInGroup(sdmaResult_t result, const std::string &message);
/// Runs `call` on `comm` (a single-node communicator's call) now: success,
/// or its failure kept as `name`'s. Inside a group on this thread
/// (sdmaGroupStart) it is kept for the group's end instead (CApiPeer.cpp),
/// which runs every communicator's calls together; `probe`: it is a
/// collective, reduction or all-to-allv (rt::GroupCall::probe).
sdmaResult_t runOrDefer(sdmaComm *comm, const std::string &name,
                        std::function<bool(rt::Error &)> call,
                        bool probe = false);

/// Runs `body`; what it throws becomes an error code (nothing crosses the
/// C boundary).
template <typename F> sdmaResult_t guarded(sdmaComm *comm, F &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(comm, sdmaSystemError, "out of host memory");
  } catch (const std::exception &e) {
    return fail(comm, sdmaInternalError, e.what());
  }
}

/// The arithmetic of `op` for a reduction of `type` on `comm`: one of the
/// five built-in operators, or one sdmaRedOpCreatePreMulSum made on `comm`
/// for `type`. False, with why, for anything else.
bool resolveRedOp(sdmaComm *comm, sdmaDataType_t type, sdmaRedOp_t op,
                  sdma::rt::Arithmetic &arithmetic, std::string &why);

} // namespace sdma::capi

#endif // SDMA_RUNTIME_LIB_CAPI_CAPICOMMON_H
