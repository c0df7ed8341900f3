//===- sdma-cpu-job.cpp - a job of processes, one rank each, on the CPU ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-cpu-job --ranks=N [--sizes=1K,...] [--runs=N]
//                     [--timeout-ms=N] [--exit-early=RANK] PLAN.json
//                     PROGRAM.hip
//
// Launches N processes (this tool again, one rank each) that meet through
// the bootstrap as Communicators on the CPU device, load the program,
// allocate its buffers in their symmetric heaps and run the load/store
// kernel each for its own rank. Every rank fills its inputs
// with the rank/buffer pattern, the job runs, and every rank compares every
// byte of its buffers with the CPU reference simulator's run of the plan;
// `runs` runs per size (later runs are later flag epochs). --exit-early=K
// makes rank K leave right after joining: every other rank must then fail
// naming it, not hang. Exit status: 0 all correct, 1 an error, 2 a bad
// command line, 3 wrong bytes.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/Communicator.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/Simulator.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace sdma::rt;

namespace {
const char *kUsage =
    "usage: sdma-cpu-job --ranks=N [options] PLAN.json PROGRAM.hip\n"
    "Runs a compiled schedule as a job of N processes, one rank each, on the\n"
    "CPU (shared memory between processes) and checks every byte.\n"
    "  --ranks=N         processes (the program's rank count)\n"
    "  --sizes=N,...     output bytes per rank, K/M suffixes (default 1K,64K)\n"
    "  --runs=N          runs per size (default 2)\n"
    "  --timeout-ms=N    joining, gathers and every wait (default 10000)\n"
    "  --threads=N       emulated GPU threads per rank (default 4: every\n"
    "                    rank's threads spin while they wait)\n"
    "  --exit-early=K    rank K leaves after joining (a test of failure)\n"
    "  --other-program=K:PATH  rank K loads PATH instead (a test of the\n"
    "                    check that every rank runs the same schedule)\n";

struct Args {
  int ranks = 0, rank = -1, runs = 2, exitEarly = -1, threads = 4;
  uint64_t timeoutMs = 10000;
  std::vector<uint64_t> sizes;
  std::string id, cache, plan, program;
  /// --other-program=K:PATH: rank K loads PATH instead (a test of the
  /// schedule check).
  std::string otherProgram;
};

std::string hex(const UniqueId &id) {
  std::string text;
  char byte[3];
  for (char c : id.bytes) {
    std::snprintf(byte, sizeof(byte), "%02x", (unsigned char)c);
    text += byte;
  }
  return text;
}

bool unhex(const std::string &text, UniqueId &id) {
  if (text.size() != 2 * sizeof(id.bytes))
    return false;
  for (size_t i = 0; i < sizeof(id.bytes); ++i)
    id.bytes[i] =
        static_cast<char>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  return true;
}

/// One rank's part; the exit status.
int runRank(const Args &args) {
  std::string error;
  auto fail = [&](const std::string &why) {
    std::printf("rank %d: error: %s\n", args.rank, why.c_str());
    return 1;
  };
  UniqueId id;
  if (!unhex(args.id, id))
    return fail("bad --id");
  std::optional<Plan> plan = Plan::load(args.plan, error);
  std::string programPath = args.program;
  size_t colon = args.otherProgram.find(':');
  if (colon != std::string::npos &&
      args.otherProgram.substr(0, colon) == std::to_string(args.rank))
    programPath = args.otherProgram.substr(colon + 1);
  std::optional<LdstProgram> program =
      plan ? LdstProgram::load(programPath, error) : std::nullopt;
  if (!program)
    return fail(error);
  int output = plan->collective ? plan->collective->output : 0;
  int64_t outChunks = plan->buffers[output].chunks;
  size_t maxChunk = 1;
  for (uint64_t size : args.sizes)
    maxChunk = std::max<size_t>(maxChunk, size / outChunks);
  CommOptions options;
  options.device = "cpu";
  options.timeoutMs = args.timeoutMs;
  options.cacheDirectory = args.cache;
  options.cpuThreads = args.threads;
  options.heapBytes = 1 << 20;
  for (const Buffer &buffer : plan->buffers)
    options.heapBytes += (buffer.chunks * maxChunk + 255) / 256 * 256;
  Error commError;
  auto comm =
      Communicator::create(id, args.rank, args.ranks, options, commError);
  if (!comm)
    return fail(commError.message);
  if (args.rank == args.exitEarly) {
    std::printf("rank %d: leaving early\n", args.rank);
    return 0;
  }
  // Every rank loads the program (a rank with another is an error on every
  // rank) and allocates the buffers in its symmetric heap.
  Communicator::Schedule schedule;
  if (!comm->loadSchedule(programPath, schedule, commError))
    return fail(commError.message);
  if (schedule.buffers.size() != plan->buffers.size())
    return fail("the program's buffers are not the plan's");
  std::vector<void *> buffers(plan->buffers.size());
  for (size_t b = 0; b < buffers.size(); ++b)
    if (!comm->memAlloc(plan->buffers[b].chunks * maxChunk, buffers[b],
                        commError))
      return fail(commError.message);
  bool wrong = false;
  for (uint64_t size : args.sizes) {
    size_t chunk = std::max<uint64_t>(1, size / outChunks);
    HostMemory initial(*plan, chunk);
    fillInputs(*plan, initial);
    HostMemory reference = initial;
    if (!simulate(*plan, reference, {}, error))
      return fail("reference simulator: " + error);
    for (int run = 0; run < args.runs; ++run) {
      for (size_t b = 0; b < plan->buffers.size(); ++b)
        std::memcpy(buffers[b], initial.buffer(args.rank, b),
                    initial.bufferBytes(args.rank, b));
      // The launch's job barriers: no rank writes into another before that
      // one has started, and each returns once every write into it is done.
      if (!comm->launch(schedule, buffers, chunk, nullptr, commError))
        return fail(commError.message);
      uint64_t differ = 0, compared = 0;
      for (size_t b = 0; b < plan->buffers.size(); ++b) {
        size_t n = reference.bufferBytes(args.rank, b);
        const uint8_t *want = reference.buffer(args.rank, b);
        const uint8_t *got = static_cast<const uint8_t *>(buffers[b]);
        for (size_t i = 0; i < n; ++i)
          differ += got[i] != want[i];
        compared += n;
      }
      wrong |= differ != 0;
      std::printf("rank %d: %s %s size %llu run %d: %llu bytes compared, "
                  "%llu differ from the simulator\n",
                  args.rank, differ ? "FAIL" : "ok  ", plan->schedule.c_str(),
                  (unsigned long long)(chunk * outChunks), run,
                  (unsigned long long)compared, (unsigned long long)differ);
    }
  }
  return wrong ? 3 : 0;
}

/// Starts the job: the id, a warm kernel cache, one process per rank.
int launch(const Args &args, const char *self) {
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::load(args.program, error);
  if (!program) {
    std::fprintf(stderr, "sdma-cpu-job: error: %s\n", error.c_str());
    return 1;
  }
  char dir[] = "/tmp/sdma-cpu-job-XXXXXX";
  UniqueId id;
  Error idError;
  if (!mkdtemp(dir) || !createUniqueId(id, idError)) {
    std::fprintf(stderr, "sdma-cpu-job: error: %s\n",
                 idError.empty() ? "cannot create a temporary directory"
                                 : idError.message.c_str());
    return 1;
  }
  // Compile once here; the ranks find the kernel in the cache.
  LdstCpuOptions warm;
  warm.cacheDirectory = dir;
  if (!LdstCpuExecutor::create(*program, warm, error)) {
    std::fprintf(stderr, "sdma-cpu-job: error: %s\n", error.c_str());
    return 1;
  }
  std::string sizes;
  for (uint64_t s : args.sizes)
    sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
  std::vector<pid_t> pids;
  for (int r = 0; r < args.ranks; ++r) {
    std::vector<std::string> argv = {
        self,
        "--ranks=" + std::to_string(args.ranks),
        "--rank=" + std::to_string(r),
        "--id=" + hex(id),
        "--cache-dir=" + std::string(dir),
        "--sizes=" + sizes,
        "--runs=" + std::to_string(args.runs),
        "--threads=" + std::to_string(args.threads),
        "--timeout-ms=" + std::to_string(args.timeoutMs),
        "--exit-early=" + std::to_string(args.exitEarly),
        "--other-program=" + args.otherProgram,
        args.plan,
        args.program};
    pid_t pid = fork();
    if (pid == 0) {
      std::vector<char *> cargv;
      for (std::string &a : argv)
        cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(self, cargv.data());
      std::perror("sdma-cpu-job: exec");
      _exit(127);
    }
    pids.push_back(pid);
  }
  int worst = 0;
  for (int r = 0; r < args.ranks; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    if (code)
      std::printf("rank %d exited with status %d\n", r, code);
    worst = std::max(worst, code);
  }
  std::string command = "rm -rf '" + std::string(dir) + "'";
  (void)std::system(command.c_str());
  std::printf("%s: %d processes\n", worst ? "FAILED" : "PASSED", args.ranks);
  return worst == 3 ? 3 : worst ? 1 : 0;
}
} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  MemoryBudget budget;
  if (int status =
          tool::handleCommon(argc, argv, "sdma-cpu-job", kUsage, budget);
      status >= 0)
    return status;
  Args args;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *prefix) {
      return a.rfind(prefix, 0) == 0 ? a.substr(std::strlen(prefix))
                                     : std::string("\x01");
    };
    auto number = [&](const std::string &text, long long &out) {
      char *end = nullptr;
      errno = 0;
      out = std::strtoll(text.c_str(), &end, 10);
      return !text.empty() && !*end && !errno;
    };
    long long n = 0;
    std::string v;
    if ((v = value("--ranks=")) != "\x01" && number(v, n) && n > 0 && n <= 64)
      args.ranks = n;
    else if ((v = value("--rank=")) != "\x01" && number(v, n))
      args.rank = n;
    else if ((v = value("--runs=")) != "\x01" && number(v, n) && n > 0)
      args.runs = n;
    else if ((v = value("--threads=")) != "\x01" && number(v, n) && n > 0 &&
             n <= 1024)
      args.threads = n;
    else if ((v = value("--exit-early=")) != "\x01" && number(v, n))
      args.exitEarly = n;
    else if ((v = value("--timeout-ms=")) != "\x01" && number(v, n) && n > 0)
      args.timeoutMs = n;
    else if ((v = value("--id=")) != "\x01")
      args.id = v;
    else if ((v = value("--cache-dir=")) != "\x01")
      args.cache = v;
    else if ((v = value("--other-program=")) != "\x01")
      args.otherProgram = v;
    else if ((v = value("--sizes=")) != "\x01") {
      std::stringstream list(v);
      std::string item;
      while (std::getline(list, item, ',')) {
        std::optional<uint64_t> bytes = MemoryBudget::parseBytes(item);
        if (!bytes) {
          std::fprintf(stderr, "sdma-cpu-job: bad size '%.64s'\n",
                       item.c_str());
          return tool::kUsageError;
        }
        args.sizes.push_back(*bytes);
      }
    } else if (a.size() > 1 && a[0] == '-')
      return tool::unknownOption("sdma-cpu-job", a);
    else
      files.push_back(a);
  }
  if (files.size() != 2 || args.ranks < 1) {
    std::fputs(kUsage, stderr);
    return tool::kUsageError;
  }
  args.plan = files[0];
  args.program = files[1];
  if (args.sizes.empty())
    args.sizes = {1024, 65536};
  if (args.rank >= 0)
    return runRank(args);
  return launch(args, "/proc/self/exe");
}
