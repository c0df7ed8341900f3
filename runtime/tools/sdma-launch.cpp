//===- sdma-launch.cpp - start a job of processes, one rank each ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-launch --nproc-per-node=N [--timeout-s=S] [--grace-s=G]
//                    PROGRAM [ARGS...]
//
// What torchrun does for one node, for programs on the C API: makes the
// job's unique id (sdmaGetUniqueId: its meeting point lives in this
// process until the job ends), then starts N copies of PROGRAM with
//   RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE  (torchrun's names)
//   MASTER_ADDR, MASTER_PORT  (a free local port, unless already set: so
//                             torch.distributed's env:// init works too)
//   SDMA_UNIQUE_ID                                  (256 hex digits)
// and waits. Options are torchrun's spellings too: --nproc_per_node, and a
// value after `=` or as the next argument.
//
// Each rank runs in its own process group, and dies with this process. A
// rank that fails is reported (what its group still holds is killed); the
// others get `timeout-s` seconds to finish before their groups are killed.
// SIGTERM, SIGINT or SIGHUP to sdma-launch (torchrun forwards them; a batch
// system sends them) goes to every rank's group; whatever still runs `grace-s`
// seconds later is killed, and sdma-launch exits 128 + the signal once every
// rank is reaped. Shared memory a rank left behind (a CPU-device job's
// /dev/shm/sdma-*-PID-* segments, named after the rank's pid) is removed as
// each rank is reaped.
//
// Exit status: 0 when every rank exits 0; the first failing rank's status
// (128 + signal if killed); 128 + signal if sdma-launch was signalled; 2 for
// a bad command line.
//
//===----------------------------------------------------------------------===//

#include "sdma/sdma.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <netinet/in.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {
const char *kUsage =
    "usage: sdma-launch --nproc-per-node=N [--timeout-s=S] [--grace-s=G]\n"
    "                   PROGRAM [ARGS...]\n"
    "Starts N processes of PROGRAM, one rank each, with RANK, WORLD_SIZE,\n"
    "LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and\n"
    "SDMA_UNIQUE_ID set (sdmaCommInitRank's arguments; torchrun's), and\n"
    "waits for them. A value follows its option after '=' or as the next\n"
    "argument; '_' may stand for '-' in a name (torchrun's spellings).\n"
    "  --nproc-per-node=N  processes (ranks), 1 to 1024\n"
    "  --timeout-s=S       once a rank has failed, how long the others may\n"
    "                      run before they are killed (default 60)\n"
    "  --grace-s=G         after SIGTERM, SIGINT or SIGHUP (forwarded to\n"
    "                      every rank), how long ranks may run before they\n"
    "                      are killed (default 10)\n";

volatile sig_atomic_t gSignal = 0;

void onSignal(int signal) { gSignal = signal; }

int statusOf(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// A whole decimal number in [low, high], or false.
bool parseNumber(const std::string &text, long low, long high, int &value) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  long number = std::strtol(text.c_str(), nullptr, 10);
  if (number < low || number > high)
    return false;
  value = static_cast<int>(number);
  return true;
}

/// Removes the shared memory segments a CPU-device rank with this pid
/// created and did not unlink (/dev/shm/sdma-<job>-<pid>-<rank>-<n>): a rank
/// that died before every peer had mapped them leaves them.
void removeSegmentsOf(pid_t pid) {
  DIR *dir = opendir("/dev/shm");
  if (!dir)
    return;
  std::string infix = "-" + std::to_string(pid) + "-";
  std::vector<std::string> stale;
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    // sdma-, 16 hex digits of the job's id, then -pid-.
    if (name.rfind("sdma-", 0) == 0 && name.size() > 22 &&
        name.compare(21, infix.size(), infix) == 0)
      stale.push_back(name);
  }
  closedir(dir);
  for (const std::string &name : stale)
    unlink(("/dev/shm/" + name).c_str());
}
} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int ranks = 0, timeoutS = 60, graceS = 10, first = 1;
  auto bad = [&](const std::string &why) {
    std::fprintf(stderr, "sdma-launch: %s\n%s", why.c_str(), kUsage);
    return 2;
  };
  for (; first < argc && argv[first][0] == '-'; ++first) {
    std::string arg = argv[first];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--") {
      ++first;
      break;
    }
    if (arg == "--standalone")
      continue; // torchrun's one-node rendezvous: what this always does
    std::string name = arg.substr(0, arg.find('='));
    for (char &c : name)
      if (c == '_')
        c = '-';
    int *target = name == "--nproc-per-node" ? &ranks
                  : name == "--timeout-s"    ? &timeoutS
                  : name == "--grace-s"      ? &graceS
                                             : nullptr;
    int nodes = 0;
    if (name == "--nnodes")
      target = &nodes;
    if (!target)
      return bad("unknown option " + arg);
    std::string value;
    if (arg.find('=') != std::string::npos)
      value = arg.substr(arg.find('=') + 1);
    else if (first + 1 < argc)
      value = argv[++first];
    else
      return bad(name + " needs a value");
    if (target == &nodes) {
      if (value != "1")
        return bad("--nnodes: '" + value +
                   "': sdma-launch starts the ranks of one node (1)");
      continue;
    }
    long high = target == &ranks ? 1024 : 86400;
    long low = target == &ranks ? 1 : 0;
    if (!parseNumber(value, low, high, *target))
      return bad(name + ": '" + value + "' is not a whole number from " +
                 std::to_string(low) + " to " + std::to_string(high));
  }
  if (ranks < 1)
    return bad("--nproc-per-node is required");
  if (first >= argc)
    return bad("no program to run");
  // Before any rank starts: a signal from here on is forwarded. One this
  // process was started ignoring (nohup's SIGHUP) stays ignored, here and
  // in the ranks.
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  std::vector<int> handled;
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    sigaction(signal, &action, nullptr);
    handled.push_back(signal);
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
  pid_t launcher = getpid();
  std::vector<pid_t> pids(ranks, -1), all;
  for (int r = 0; r < ranks && !gSignal; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      // Its own group (what a signal goes to), dying with sdma-launch even
      // if sdma-launch is killed outright; default dispositions.
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != launcher)
        _exit(128 + SIGKILL);
      struct sigaction plain {};
      plain.sa_handler = SIG_DFL;
      for (int signal : handled)
        sigaction(signal, &plain, nullptr);
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
      for (pid_t started : all)
        kill(-started, SIGKILL);
      for (pid_t started : all)
        waitpid(started, nullptr, 0), removeSegmentsOf(started);
      return 1;
    }
    setpgid(pid, pid); // either side may run first
    pids[r] = pid;
    all.push_back(pid);
  }
  int result = 0, running = static_cast<int>(all.size()), forwarded = 0;
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::time_point::max();
  auto killRunning = [&](const char *why, int seconds) {
    for (int r = 0; r < ranks; ++r)
      if (pids[r] > 0) {
        std::printf("sdma-launch: rank %d still running %d s after %s: "
                    "killed\n",
                    r, seconds, why);
        kill(-pids[r], SIGKILL);
      }
  };
  while (running) {
    if (int signal = gSignal; signal && signal != forwarded) {
      // Every rank's group hears it; the grace period runs from the first.
      std::printf("sdma-launch: %s: forwarded to every rank\n",
                  strsignal(signal));
      for (int r = 0; r < ranks; ++r)
        if (pids[r] > 0)
          kill(-pids[r], signal);
      if (!forwarded)
        deadline = Clock::now() + std::chrono::seconds(graceS);
      forwarded = signal;
    }
    // Peek first: while the rank is a zombie its pid still names its group,
    // so what the group holds can be killed without hitting another's.
    siginfo_t info{};
    int status = 0;
    pid_t pid = -1;
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid > 0) {
      pid = info.si_pid;
      bool failed = info.si_code != CLD_EXITED || info.si_status != 0;
      if (forwarded || failed)
        kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    if (pid <= 0) {
      if (Clock::now() > deadline) {
        killRunning(forwarded ? "the signal" : "a failure",
                    forwarded ? graceS : timeoutS);
        deadline = Clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    for (int r = 0; r < ranks; ++r)
      if (pids[r] == pid) {
        pids[r] = -1;
        --running;
        removeSegmentsOf(pid);
        if (int code = statusOf(status)) {
          if (!forwarded)
            std::printf("sdma-launch: rank %d exited with status %d\n", r,
                        code);
          if (!result && !forwarded) {
            result = code;
            deadline = Clock::now() + std::chrono::seconds(timeoutS);
          }
        }
      }
  }
  if (forwarded || gSignal)
    return 128 + (forwarded ? forwarded : gSignal);
  return result;
}
