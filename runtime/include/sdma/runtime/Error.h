//===- Error.h - an error and the kind it was raised as ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator, its bootstrap and its devices report a failure as an
// Error: a message naming what and where, and a kind chosen where the
// failure happens (IREE's iree_status_t, NCCL's `WARN + return
// ncclInvalidArgument`). Layers above add context to the message and keep
// the kind; the C API maps kinds to sdmaResult_t one to one, never from the
// text.
//
//   Error error;
//   if (!comm.memAlloc(bytes, ptr, error))
//     report(error.kind, error.message);
//
//   bool check(size_t bytes, Error &error) {
//     if (!bytes)
//       return error.fail(ErrorKind::InvalidArgument, "bytes must be > 0");
//     return true;
//   }
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_ERROR_H
#define SDMA_RUNTIME_ERROR_H

#include <string>
#include <utility>

namespace sdma::rt {

enum class ErrorKind {
  /// An argument of this call is wrong on this rank (a null pointer, a
  /// buffer that is not symmetric memory, a size that wraps, a bad root).
  InvalidArgument,
  /// The call is legal alone but not here: ranks disagree, a handle is not
  /// live, the communicator has failed, a run-time count is out of range.
  InvalidUsage,
  /// Another rank failed, timed out, exited or is doing something else.
  Remote,
  /// The operating system refused: memory, shared memory, sockets, files.
  System,
  /// The GPU or its driver (CUDA, HIP, NVRTC, hipRTC) failed, or there is
  /// no GPU.
  Device,
  /// A broken invariant of sdma itself.
  Internal,
  /// With CommOptions::privateBuffers: a buffer the call's path lets
  /// another rank reach is not symmetric memory. Nothing was enqueued: the
  /// caller may stage it and call again. (No rank was asked, unless the
  /// call shared its buffers (CommOptions::sharedBytes): then every rank
  /// was, and every rank gets this and stages alike.)
  NotSymmetric,
};

/// The kind's name, for logs and tests ("invalid argument", ...).
inline const char *errorKindName(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::InvalidArgument:
    return "invalid argument";
  case ErrorKind::InvalidUsage:
    return "invalid usage";
  case ErrorKind::Remote:
    return "remote";
  case ErrorKind::System:
    return "system";
  case ErrorKind::Device:
    return "device";
  case ErrorKind::Internal:
    return "internal";
  case ErrorKind::NotSymmetric:
    return "not symmetric";
  }
  return "unknown";
}

struct Error {
  ErrorKind kind = ErrorKind::Internal;
  std::string message;

  /// Sets the error; returns false, so `return error.fail(...)` ends a
  /// call that failed.
  bool fail(ErrorKind failKind, std::string text) {
    kind = failKind;
    message = std::move(text);
    return false;
  }
  /// Prefixes the message with where it happened, keeping the kind.
  bool context(const std::string &where) {
    message = where + ": " + message;
    return false;
  }
  bool empty() const { return message.empty(); }
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_ERROR_H
