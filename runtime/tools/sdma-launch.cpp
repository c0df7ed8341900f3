//===- sdma-launch.cpp - start a job of processes, one rank each ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-launch --nproc-per-node=N [--timeout-s=S] PROGRAM [ARGS...]
//
// What torchrun does for one node, for programs on the C API: makes the
// job's unique id (sdmaGetUniqueId: its meeting point lives in this
// process until the job ends), then starts N copies of PROGRAM with
//   RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE  (torchrun's names)
//   MASTER_ADDR, MASTER_PORT  (a free local port, unless already set: so
//                             torch.distributed's env:// init works too)
//   SDMA_UNIQUE_ID                                  (256 hex digits)
// and waits. A rank that fails is reported; the others get `timeout-s`
// seconds to finish before they are killed. Exit status: 0 when every rank
// exits 0, else the first failing rank's status (128 + signal if killed).
//
//===----------------------------------------------------------------------===//

#include "sdma/sdma.h"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {
const char *kUsage =
    "usage: sdma-launch --nproc-per-node=N [--timeout-s=S] PROGRAM [ARGS...]\n"
    "Starts N processes of PROGRAM, one rank each, with RANK, WORLD_SIZE,\n"
    "LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and\n"
    "SDMA_UNIQUE_ID set (sdmaCommInitRank's arguments; torchrun's), and\n"
    "waits for them.\n"
    "  --nproc-per-node=N  processes (ranks)\n"
    "  --timeout-s=S       once a rank has failed, how long the others may\n"
    "                      run before they are killed (default 60)\n";

int statusOf(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int ranks = 0, timeoutS = 60, first = 1;
  for (; first < argc && argv[first][0] == '-'; ++first) {
    std::string arg = argv[first];
    if (arg.rfind("--nproc-per-node=", 0) == 0)
      ranks = std::atoi(arg.c_str() + 17);
    else if (arg.rfind("--timeout-s=", 0) == 0)
      timeoutS = std::atoi(arg.c_str() + 12);
    else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "sdma-launch: unknown option %s\n%s", arg.c_str(),
                   kUsage);
      return 2;
    }
  }
  if (ranks < 1 || ranks > 1024 || first >= argc) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  sdmaUniqueId id;
  char text[2 * SDMA_UNIQUE_ID_BYTES + 1];
  if (sdmaGetUniqueId(&id) != sdmaSuccess ||
      sdmaUniqueIdToString(&id, text, sizeof(text)) != sdmaSuccess) {
    std::fprintf(stderr, "sdma-launch: error: %s\n", sdmaGetLastError(nullptr));
    return 1;
  }
  // torch.distributed's env:// rendezvous, as torchrun sets it up.
  if (!std::getenv("MASTER_PORT")) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (fd >= 0 &&
        bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) ==
            0 &&
        getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
      setenv("MASTER_PORT", std::to_string(ntohs(address.sin_port)).c_str(), 1);
    if (fd >= 0)
      close(fd);
  }
  if (!std::getenv("MASTER_ADDR"))
    setenv("MASTER_ADDR", "127.0.0.1", 1);
  std::vector<pid_t> pids(ranks, -1);
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      setenv("SDMA_UNIQUE_ID", text, 1);
      execvp(argv[first], argv + first);
      std::fprintf(stderr, "sdma-launch: cannot run %s: %s\n", argv[first],
                   std::strerror(errno));
      _exit(127);
    }
    if (pid < 0) {
      std::perror("sdma-launch: fork");
      return 1;
    }
    pids[r] = pid;
  }
  int result = 0, running = ranks;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (running) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (int r = 0; r < ranks; ++r)
          if (pids[r] > 0) {
            std::printf("sdma-launch: rank %d still running %d s after a "
                        "failure: killed\n",
                        r, timeoutS);
            kill(pids[r], SIGKILL);
          }
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    for (int r = 0; r < ranks; ++r)
      if (pids[r] == pid) {
        pids[r] = -1;
        --running;
        if (int code = statusOf(status)) {
          std::printf("sdma-launch: rank %d exited with status %d\n", r, code);
          if (!result) {
            result = code;
            deadline = std::chrono::steady_clock::now() +
                       std::chrono::seconds(timeoutS);
          }
        }
      }
  }
  return result;
}
