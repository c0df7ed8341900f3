//===- sdma-node-job.cpp - a multi-node job under mpirun, nodes simulated -===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: mpirun -np R sdma-node-job [--local-ranks=G] [options] SCHEDULE.mlir
//
// Each MPI process is one rank of a job of R / G nodes: ranks node-major
// (rank r on node r / G), MPI_COMM_WORLD the transport between nodes
// (MpiTransport.h), each node's ranks one Communicator (shared memory on
// the CPU device, as on one host; a GPU's IPC with SDMA_DEVICE=cuda, the
// network phases then staged through host memory) made by
// MultiNodeComm::create from the transport alone. The hierarchical schedule is
// compiled into its node plan and run on every chunk size; every rank fills the
// collective's input with a pattern of (rank, byte) and checks every byte of
// its output against what the collective it declares must leave there. On one
// machine the nodes are simulated: only the transport crosses between them, as
// between hosts.
//
// Failure cases (every rank must report, none may hang):
//   --stall=K               rank K stops before its last launch (as a rank
//                           that died: mpirun would end the whole job at a
//                           real exit, before its peers could report)
//   --other-local-ranks=K:G rank K's node communicator has G ranks
//   --other-schedule=K:PATH rank K loads PATH
// Exit status: 0 all correct, 1 an error, 2 a bad command line, 3 wrong
// bytes.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/MemoryBudget.h"
#include "sdma/runtime/MpiTransport.h"
#include "sdma/runtime/MultiNode.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <unistd.h>

using namespace sdma::rt;

namespace {
const char *kUsage =
    "usage: mpirun -np R sdma-node-job --local-ranks=G [options] SCHEDULE\n"
    "Runs a hierarchical schedule over R / G simulated nodes of G ranks (MPI\n"
    "between nodes, shared memory within) and checks every byte.\n"
    "  --local-ranks=G         ranks per node (dividing R; default: the\n"
    "                          launcher's, as mpirun's one node)\n"
    "  --sizes=N,...           chunk bytes, K/M suffixes (default 64,4K)\n"
    "  --runs=N                runs per size (default 2)\n"
    "  --timeout-ms=N          every wait (default 10000)\n"
    "  --bench=N               then time N calls per size: each phase's\n"
    "                          median, the slowest rank's (#bench lines)\n"
    "  --csv=PATH              append the timings there\n"
    "  --stall=K               rank K stops before its last launch and\n"
    "                          never returns (a failure test)\n"
    "  --other-local-ranks=K:G rank K's node has G ranks (a failure test)\n"
    "  --other-schedule=K:PATH rank K loads PATH (a failure test)\n"
    "  --other-host=K          rank K says it runs on another host (a\n"
    "                          failure test: SDMA_HOST_ID)\n"
    "  --root=K                a rooted schedule rooted at rank K (default:\n"
    "                          the root it declares)\n"
    "  --over-count=K          all_to_allv: in the last run rank K sends\n"
    "                          rank 0 one row more than a slot holds (a\n"
    "                          failure test)\n";

struct Args {
  int localRanks = 0, runs = 2, stall = -1, bench = 0, otherHost = -1,
      overCount = -1, root = -1;
  std::string csv;
  uint64_t timeoutMs = 10000;
  std::vector<uint64_t> sizes{64, 4096};
  std::string schedule, otherLocal, otherSchedule;
};

bool parseArgs(int argc, char **argv, Args &args) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *name) -> const char * {
      size_t n = std::strlen(name);
      return arg.compare(0, n, name) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char *v = value("--local-ranks="))
      args.localRanks = std::atoi(v);
    else if (const char *v = value("--runs="))
      args.runs = std::atoi(v);
    else if (const char *v = value("--timeout-ms="))
      args.timeoutMs = std::strtoull(v, nullptr, 10);
    else if (const char *v = value("--bench="))
      args.bench = std::atoi(v);
    else if (const char *v = value("--csv="))
      args.csv = v;
    else if (const char *v = value("--stall="))
      args.stall = std::atoi(v);
    else if (const char *v = value("--other-local-ranks="))
      args.otherLocal = v;
    else if (const char *v = value("--other-host="))
      args.otherHost = std::atoi(v);
    else if (const char *v = value("--over-count="))
      args.overCount = std::atoi(v);
    else if (const char *v = value("--root="))
      args.root = std::atoi(v);
    else if (const char *v = value("--other-schedule="))
      args.otherSchedule = v;
    else if (const char *v = value("--sizes=")) {
      args.sizes.clear();
      std::string list = v;
      for (size_t at = 0; at <= list.size();) {
        size_t end = list.find(',', at);
        std::string item = list.substr(at, end - at);
        std::optional<uint64_t> size = MemoryBudget::parseBytes(item);
        if (!size || *size == 0)
          return false;
        args.sizes.push_back(*size);
        if (end == std::string::npos)
          break;
        at = end + 1;
      }
    } else if (arg.size() > 1 && arg[0] == '-')
      return false;
    else
      args.schedule = arg;
  }
  return args.localRanks >= 0 && args.runs > 0 && !args.schedule.empty();
}

/// "K:VALUE" -> VALUE when K is `rank`.
std::optional<std::string> forRank(const std::string &spec, int rank) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos || std::atoi(spec.c_str()) != rank)
    return std::nullopt;
  return spec.substr(colon + 1);
}

uint8_t pattern(int rank, uint64_t byte) {
  return static_cast<uint8_t>(rank * 131 + byte * 7 + 1);
}

/// A reduction's f32 input element: small integers, so every sum is exact.
float value(int rank, uint64_t element) {
  return static_cast<float>(static_cast<int>((rank * 7 + element * 3) % 17) -
                            8);
}

/// all_to_allv (capacity slots): the rows per slot; a chunk holds this many.
constexpr int kSlotRows = 4;

/// all_to_allv: the rows rank `from` sends rank `to` in run `run`: random
/// counts from 0 to a full slot, then every slot full, then none (the
/// shapes cycle with the runs).
int64_t slotCount(int run, int from, int to) {
  if (run % 3 == 1)
    return kSlotRows;
  if (run % 3 == 2)
    return 0;
  uint64_t x = (uint64_t(run) << 40 | uint64_t(from) << 20 | uint64_t(to)) *
               0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<int64_t>((x ^ (x >> 31)) % (kSlotRows + 1));
}

/// all_to_allv's wrong bytes and counts on `rank`: each sender's slot holds
/// its count of rows and nothing past them (`fill`, as before the call); a
/// count over the capacity moves nothing and is received as 0.
int64_t alltoallvWrong(const NodePlan &plan, int rank,
                       const std::function<int64_t(int, int)> &count,
                       const uint8_t *output, const int64_t *recvCounts,
                       uint64_t chunk, uint8_t fill) {
  uint64_t row = chunk / kSlotRows;
  int64_t wrong = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    int64_t sent = count(r, rank);
    uint64_t n = static_cast<uint64_t>(sent > kSlotRows ? 0 : sent);
    wrong += recvCounts[r] != static_cast<int64_t>(n);
    for (uint64_t i = 0; i < chunk; ++i)
      wrong += output[r * chunk + i] !=
               (i < n * row ? pattern(r, rank * chunk + i) : fill);
  }
  return wrong;
}

bool reduces(const Collective &c) {
  return c.kind == "reduce_scatter" || c.kind == "all_reduce" ||
         c.kind == "reduce";
}

/// Fills `rank`'s collective input (bytes, or f32 values for a reduction).
void fillInput(const Collective &c, void *input, uint64_t bytes, int rank) {
  if (reduces(c)) {
    auto *elements = static_cast<float *>(input);
    for (uint64_t i = 0; i < bytes / sizeof(float); ++i)
      elements[i] = value(rank, i);
    return;
  }
  auto *data = static_cast<uint8_t *>(input);
  for (uint64_t i = 0; i < bytes; ++i)
    data[i] = pattern(rank, i);
}

/// The wrong bytes (elements, for a reduction) of `rank`'s output; -1 for
/// a collective this tool cannot check. A rooted collective's output that
/// only the root gets must hold `fill` (as before the call) elsewhere.
int64_t countWrong(const Collective &c, const NodePlan &plan, int rank,
                   const void *output, uint64_t chunkBytes, uint8_t fill) {
  const Buffer &in = plan.buffers[c.input], &out = plan.buffers[c.output];
  uint64_t outBytes = out.bytes(chunkBytes);
  int64_t wrong = 0;
  if ((c.kind == "reduce" || c.kind == "gather") && rank != c.root) {
    const auto *data = static_cast<const uint8_t *>(output);
    for (uint64_t i = 0; i < outBytes; ++i)
      wrong += data[i] != fill;
    return wrong;
  }
  if (reduces(c)) {
    if (in.type != "f32" || out.type != "f32")
      return -1;
    const auto *elements = static_cast<const float *>(output);
    uint64_t count = outBytes / sizeof(float);
    uint64_t first = c.kind == "reduce_scatter" ? rank * count : 0;
    for (uint64_t i = 0; i < count; ++i) {
      float want = 0;
      for (int p = 0; p < plan.ranks; ++p)
        want += value(p, first + i);
      wrong += elements[i] != want;
    }
    return wrong;
  }
  const auto *data = static_cast<const uint8_t *>(output);
  for (uint64_t i = 0; i < outBytes; ++i) {
    uint8_t want;
    if (c.kind == "all_gather") {
      uint64_t part = in.bytes(chunkBytes);
      want = pattern(static_cast<int>(i / part), i % part);
    } else if (c.kind == "all_to_all") {
      uint64_t part = outBytes / plan.ranks;
      want = pattern(static_cast<int>(i / part), rank * part + i % part);
    } else if (c.kind == "broadcast") {
      want = pattern(c.root, i);
    } else if (c.kind == "scatter") {
      want = pattern(c.root, rank * outBytes + i);
    } else if (c.kind == "gather") {
      uint64_t part = in.bytes(chunkBytes);
      want = pattern(static_cast<int>(i / part), i % part);
    } else {
      return -1;
    }
    wrong += data[i] != want;
  }
  return wrong;
}

/// The messages and bytes `rank` sends in network phase `phase`.
std::pair<int64_t, uint64_t> sent(const NodePlan &plan, const NodePhase &phase,
                                  int rank, uint64_t chunkBytes) {
  std::pair<int64_t, uint64_t> total{0, 0};
  for (const NodeTransfer &t : phase.transfers)
    if (t.src.rank == rank) {
      total.first += 1;
      total.second += static_cast<uint64_t>(t.src.count) *
                      (plan.buffers[t.src.buffer].counts ? 8 : chunkBytes);
    }
  return total;
}

/// The row bytes a launch at `chunk` passes: a slot's rows for
/// all_to_allv, else 0 (no count tables).
size_t rowBytesOf(const NodePlan &plan, uint64_t chunk) {
  return plan.collective && plan.collective->kind == "all_to_allv"
             ? chunk / kSlotRows
             : 0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Times `args.bench` launches (after two unmeasured ones): per phase, each
/// rank's median, then the slowest rank's (a phase ends when its last rank
/// does). Rank 0 prints them and appends them to --csv.
bool bench(MultiNodeComm &job, const MultiNodeComm::Schedule &schedule,
           const std::vector<void *> &buffers, uint64_t chunk, const Args &args,
           Error &error) {
  const NodePlan &plan = schedule.plan;
  size_t phases = plan.phases.size();
  std::vector<std::vector<double>> samples(phases + 1);
  std::vector<double> micros;
  for (int i = -2; i < args.bench; ++i) {
    MPI_Barrier(MPI_COMM_WORLD); // every rank starts the call together
    auto start = std::chrono::steady_clock::now();
    if (!job.launch(schedule, buffers, chunk, nullptr, error, &micros,
                    rowBytesOf(plan, chunk)) ||
        !job.nodeComm().synchronize(nullptr, error)) // a GPU's work, done
      return false;
    double total = std::chrono::duration<double, std::micro>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    if (i < 0)
      continue;
    for (size_t k = 0; k < phases; ++k)
      samples[k].push_back(micros[k]);
    samples[phases].push_back(total);
  }
  std::vector<double> mine(phases + 1), slowest(phases + 1);
  for (size_t k = 0; k <= phases; ++k)
    mine[k] = median(samples[k]);
  MPI_Reduce(mine.data(), slowest.data(), static_cast<int>(phases + 1),
             MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  // The network phases' busiest sender: messages and bytes.
  std::vector<long long> load(2 * phases, 0), most(2 * phases, 0);
  for (size_t k = 0; k < phases; ++k)
    if (plan.phases[k].network) {
      auto [messages, bytes] = sent(plan, plan.phases[k], job.rank(), chunk);
      load[2 * k] = messages;
      load[2 * k + 1] = static_cast<long long>(bytes);
    }
  MPI_Reduce(load.data(), most.data(), static_cast<int>(2 * phases),
             MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (job.rank() != 0)
    return true;
  FILE *csv = args.csv.empty() ? nullptr : std::fopen(args.csv.c_str(), "a");
  for (size_t k = 0; k <= phases; ++k) {
    const char *kind = k == phases              ? "total"
                       : plan.phases[k].network ? "network"
                                                : "node";
    std::printf("#bench %s %dx%d chunk %llu phase %s %s: %lld msgs %lld "
                "bytes %.1f us\n",
                plan.schedule.c_str(), plan.nodes, plan.localRanks,
                static_cast<unsigned long long>(chunk),
                k == phases ? "-" : std::to_string(k).c_str(), kind,
                k < phases ? most[2 * k] : 0LL,
                k < phases ? most[2 * k + 1] : 0LL, slowest[k]);
    if (csv)
      std::fprintf(csv, "%s,%d,%d,%s,%llu,%s,%s,%lld,%lld,%.2f\n",
                   plan.schedule.c_str(), plan.nodes, plan.localRanks,
                   job.transportName().c_str(),
                   static_cast<unsigned long long>(chunk),
                   k == phases ? "total" : std::to_string(k).c_str(), kind,
                   k < phases ? most[2 * k] : 0LL,
                   k < phases ? most[2 * k + 1] : 0LL, slowest[k]);
  }
  if (csv)
    std::fclose(csv);
  return true;
}

/// Runs every size; the number of wrong bytes, or -1 on an error.
int64_t runJob(MultiNodeComm &job, const MultiNodeComm::Schedule &schedule,
               const Args &args, Error &error) {
  const NodePlan &plan = schedule.plan;
  if (!plan.collective)
    return error.fail(ErrorKind::InvalidArgument,
                      "the schedule declares no collective to check"),
           -1;
  const Collective &c = *plan.collective;
  bool slots = c.kind == "all_to_allv";
  int64_t wrong = 0;
  for (uint64_t chunk : args.sizes) {
    if (slots && chunk % kSlotRows)
      return error.fail(ErrorKind::InvalidArgument,
                        "all_to_allv: a chunk of " + std::to_string(chunk) +
                            " bytes is not " + std::to_string(kSlotRows) +
                            " rows"),
             -1;
    std::vector<void *> buffers;
    for (const Buffer &buffer : plan.buffers) {
      void *ptr = nullptr;
      if (!job.nodeComm().memAlloc(buffer.bytes(chunk), ptr, error))
        return -1;
      buffers.push_back(ptr);
    }
    for (int run = 0; run < args.runs; ++run) {
      // all_to_allv: the rows rank `from` sends rank `to` in this run.
      auto count = [&](int from, int to) {
        if (from == args.overCount && to == 0 && run == args.runs - 1 &&
            chunk == args.sizes.back())
          return int64_t(kSlotRows + 1);
        return slotCount(run, from, to);
      };
      // Filled and read through host copies: a GPU's buffers are device
      // memory (the communicator's copy reaches both).
      std::vector<char> host;
      for (size_t b = 0; b < buffers.size(); ++b) {
        uint64_t bytes = plan.buffers[b].bytes(chunk);
        host.assign(bytes, static_cast<char>(0xEE + run));
        if (b == static_cast<size_t>(c.input))
          fillInput(c, host.data(), bytes, job.rank());
        if (b == static_cast<size_t>(c.sendCounts))
          for (int p = 0; p < plan.ranks; ++p) {
            int64_t n = count(job.rank(), p);
            std::memcpy(host.data() + p * sizeof(n), &n, sizeof(n));
          }
        if (!job.nodeComm().copy(buffers[b], host.data(), bytes, nullptr,
                                 error) ||
            !job.nodeComm().synchronize(nullptr, error))
          return -1;
      }
      if (job.rank() == args.stall && chunk == args.sizes.back() &&
          run == args.runs - 1) {
        std::printf("rank %d: stalling before its last launch\n", job.rank());
        std::fflush(stdout);
        for (;;) // until mpirun ends the job
          pause();
      }
      if (!job.launch(schedule, buffers, chunk, nullptr, error, nullptr,
                      rowBytesOf(plan, chunk)))
        return -1;
      host.resize(plan.buffers[c.output].bytes(chunk));
      std::vector<int64_t> received(slots ? plan.ranks : 0);
      if (!job.nodeComm().synchronize(nullptr, error) ||
          !job.nodeComm().copy(host.data(), buffers[c.output], host.size(),
                               nullptr, error) ||
          (slots && !job.nodeComm().copy(received.data(), buffers[c.recvCounts],
                                         received.size() * sizeof(int64_t),
                                         nullptr, error)) ||
          !job.nodeComm().synchronize(nullptr, error))
        return -1;
      int64_t here =
          slots ? alltoallvWrong(plan, job.rank(), count,
                                 reinterpret_cast<uint8_t *>(host.data()),
                                 received.data(), chunk,
                                 static_cast<uint8_t>(0xEE + run))
                : countWrong(c, plan, job.rank(), host.data(), chunk,
                             static_cast<uint8_t>(0xEE + run));
      if (here < 0)
        return error.fail(ErrorKind::InvalidArgument,
                          "no check for collective " + c.kind +
                              " (f32 reductions, all-gather, all-to-all, "
                              "the rooted ones, all-to-allv with capacity "
                              "slots)"),
               -1;
      std::printf("rank %d (node %d): %s chunk %llu run %d: %lld wrong %s\n",
                  job.rank(), job.node(), plan.schedule.c_str(),
                  static_cast<unsigned long long>(chunk), run,
                  static_cast<long long>(here),
                  reduces(c) ? "elements" : "bytes");
      wrong += here;
    }
    if (args.bench > 0 && !bench(job, schedule, buffers, chunk, args, error))
      return -1;
    for (void *ptr : buffers)
      if (!job.nodeComm().memFree(ptr, error))
        return -1;
  }
  return wrong;
}

uint64_t lingerMs = 0;

/// Reports `error`, then stays a while: mpirun ends the whole job when a
/// rank leaves with an error, and the peers have theirs to report too.
int fail(int rank, const Error &error) {
  std::printf("rank %d: error (%s): %s\n", rank, errorKindName(error.kind),
              error.message.c_str());
  std::fflush(stdout);
  usleep(static_cast<useconds_t>(lingerMs * 1000));
  return 1;
}

int runRank(const Args &args, int rank, int ranks) {
  int local = args.localRanks;
  if (std::optional<std::string> g = forRank(args.otherLocal, rank))
    local = std::atoi(g->c_str());
  if (rank == args.otherHost)
    setenv("SDMA_HOST_ID", "another-host", 1);
  CommOptions options;
  options.timeoutMs = args.timeoutMs;
  MpiTransport transport(MPI_COMM_WORLD, args.timeoutMs);
  Error error;
  std::unique_ptr<MultiNodeComm> job =
      MultiNodeComm::create(transport, local, options, error);
  if (!job)
    return fail(rank, error);
  std::string path = args.schedule;
  if (std::optional<std::string> other = forRank(args.otherSchedule, rank))
    path = *other;
  MultiNodeComm::Schedule schedule;
  if (!job->loadSchedule(path, schedule, error, args.root))
    return fail(rank, error);
  if (rank == 0)
    std::printf("%s: %d nodes x %d ranks, %zu phases\n",
                schedule.plan.schedule.c_str(), schedule.plan.nodes,
                schedule.plan.localRanks, schedule.plan.phases.size());
  int64_t wrong = runJob(*job, schedule, args, error);
  if (wrong < 0)
    return fail(rank, error);
  std::printf("rank %d: %s\n", rank, wrong ? "WRONG BYTES" : "all correct");
  return wrong ? 3 : 0;
}
} // namespace

int main(int argc, char **argv) {
  Args args;
  if (!parseArgs(argc, argv, args)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  lingerMs = args.timeoutMs * 2;
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = runRank(args, rank, ranks);
  std::fflush(stdout);
  if (status == 1 || status == 2)
    _exit(status); // peers may be gone: MPI_Finalize could wait for them
  MPI_Finalize();
  return status;
}
