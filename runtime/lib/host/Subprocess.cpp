//===- Subprocess.cpp - a command and a lock that cannot hang a job -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "host/Subprocess.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace sdma::rt;

namespace {

using Clock = std::chrono::steady_clock;

/// Polls `done` every 1-10 ms (backing off) until it holds or `timeoutMs`
/// passed.
template <typename Done> bool pollUntil(int64_t timeoutMs, Done done) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (done())
      return true;
    if (Clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(10));
  }
}

} // namespace

bool sdma::rt::compileTimeoutMs(int64_t &ms, std::string &error) {
  ms = 300000;
  const char *text = std::getenv("SDMA_COMPILE_TIMEOUT_MS");
  if (!text)
    return true;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (!*text || *end || errno || value < 1 || value > 86400000) {
    error = std::string("SDMA_COMPILE_TIMEOUT_MS='") + text +
            "' is not a number of milliseconds in [1, 86400000]";
    return false;
  }
  ms = value;
  return true;
}

bool sdma::rt::runCommand(const std::string &command, int64_t timeoutMs,
                          std::string &error) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a timeout kills the compiler's children too.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const char *argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, "/bin/sh", nullptr, &attr,
                       const_cast<char *const *>(argv), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    error = std::string("cannot start /bin/sh: ") + std::strerror(rc);
    return false;
  }
  int status = 0;
  pid_t waited = 0;
  bool exited = pollUntil(timeoutMs, [&] {
    do
      waited = waitpid(pid, &status, WNOHANG);
    while (waited < 0 && errno == EINTR);
    return waited != 0;
  });
  if (!exited) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    error = "did not finish within " + std::to_string(timeoutMs) +
            " ms (SDMA_COMPILE_TIMEOUT_MS); killed";
    return false;
  }
  if (waited < 0) {
    error = std::string("waitpid: ") + std::strerror(errno);
    return false;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return true;
  error = WIFEXITED(status)
              ? "exited with status " + std::to_string(WEXITSTATUS(status))
              : "was killed by signal " + std::to_string(WTERMSIG(status));
  return false;
}

bool sdma::rt::lockWithin(int fd, const std::string &path, int64_t timeoutMs,
                          std::string &error) {
  int failure = 0;
  bool granted = pollUntil(timeoutMs, [&] {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
      return true;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      failure = errno;
      return true;
    }
    return false;
  });
  if (granted && !failure)
    return true;
  error = failure ? "cannot lock " + path + ": " + std::strerror(failure)
                  : "waited " + std::to_string(timeoutMs) +
                        " ms (SDMA_COMPILE_TIMEOUT_MS) for " + path +
                        ", which another process holds while it compiles "
                        "the same kernel (is its compiler stuck?)";
  return false;
}
