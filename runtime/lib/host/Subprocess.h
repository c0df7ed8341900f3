//===- Subprocess.h - a command and a lock that cannot hang a job -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The host compiler is another program: it can hang (a wedged NFS mount, a
// compiler wrapper waiting for a licence), and a process of the job that
// waits for another's compile waits on a lock. Both are bounded by
// SDMA_COMPILE_TIMEOUT_MS (default 300000: 5 minutes; a kernel compiles in
// about a second): a compile past it is killed with its whole process
// group and reported, and a lock not granted by then is reported with the
// path that holds it.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_SUBPROCESS_H
#define SDMA_RUNTIME_LIB_HOST_SUBPROCESS_H

#include <cstdint>
#include <string>

namespace sdma::rt {

/// SDMA_COMPILE_TIMEOUT_MS, checked: false with `error` naming the
/// variable when it is not a number in [1, 86400000].
bool compileTimeoutMs(int64_t &ms, std::string &error);

/// Runs `command` through /bin/sh in its own process group and waits up to
/// `timeoutMs`. 0: it exited with status 0; else false with `error` saying
/// how it ended (its exit status, the signal, or the timeout, after which
/// the group is killed).
bool runCommand(const std::string &command, int64_t timeoutMs,
                std::string &error);

/// Takes an exclusive flock on `fd` within `timeoutMs`; false with `error`
/// naming `path` when it is not granted (or flock fails).
bool lockWithin(int fd, const std::string &path, int64_t timeoutMs,
                std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_SUBPROCESS_H
