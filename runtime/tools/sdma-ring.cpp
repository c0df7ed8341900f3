//===- sdma-ring.cpp - GPU-initiated SDMA: the ring writer and its engines ===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-ring PACKETS.json [--chunk-bytes=N,...] [--ring-bytes=N,...]
//                  [--writers=N] [--fault=F] [--timeout-ms=N]
//                  [--emit-writer=FILE] [--emit-hip=FILE [--hip=clang|hiprtc]]
//
// Lowers a packet plan (sdma-translate --sdma-to-packets) to its ring writer
// kernel (Ring.h). --emit-writer writes the kernel's source, --emit-hip the
// same with the AMD prelude, ready for hipRTC or clang -x hip. Otherwise,
// for each chunk size and ring size: fills the collective's input, runs the
// writer on the CPU into simulated rings consumed by simulated engines, and
// checks every output byte. Exit status: 0 all correct, 1 a bad plan or a
// fault the engine model or the writer reported, 2 wrong bytes or a
// command-line mistake.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/Ring.h"
#include "sdma/runtime/Simulator.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace sdma::rt;

static const char *kUsage =
    "usage: sdma-ring PACKETS.json [options]\n"
    "Lowers an SDMA packet plan to the kernel that writes its packets into\n"
    "the engines' rings (GPU-initiated SDMA), runs it on the CPU against\n"
    "simulated engines and checks every output byte.\n"
    "  --chunk-bytes=N,...  chunk sizes (default 64,4096)\n"
    "  --ring-bytes=N,...   ring sizes, powers of two, or min: the smallest\n"
    "                       ring the plan takes (default 4096)\n"
    "  --writers=N          writers (wavefronts) per queue, 1..64 (default 4)\n"
    "  --start-before-end=N the rings start N bytes before their end, as\n"
    "                       rings left by earlier work do (default 0)\n"
    "  --engine-latency-us=N  each packet runs N us after the doorbell that\n"
    "                       made it visible: writers find the ring full\n"
    "                       (default 0)\n"
    "  --engine-lag         engines run nothing until their ring has filled\n"
    "                       (a writer waited for space) or the writers are\n"
    "                       done: back-pressure on every queue that outgrows\n"
    "                       its ring, however the threads are scheduled\n"
    "  --fault=F            inject a writer bug: early-doorbell, no-pad or\n"
    "                       race (default none)\n"
    "  --timeout-ms=N       the longest any one wait may take (default "
    "10000)\n"
    "  --emit-writer=FILE   write the writer kernel's source and exit\n"
    "  --emit-hip=FILE      write it with the AMD prelude and exit\n"
    "  --entry=communicator with --emit-writer/--emit-hip/--hiprtc: the\n"
    "                       communicator's writer (kernel-submitted DMA: its\n"
    "                       entry sdma_ring_write_table takes the call's\n"
    "                       addresses in its argument)\n"
    "  --hip=clang|hiprtc   the prelude --emit-hip uses (default clang)\n"
    "  --hiprtc=ARCH        compile the writer with hipRTC for ARCH (e.g.\n"
    "                       gfx90a) and exit\n";

static bool parseList(const std::string &text, std::vector<uint64_t> &out,
                      bool zero = false) {
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(item.c_str(), &end, 10);
    if (errno || end == item.c_str() || *end || item[0] == '-' ||
        (v == 0 && !zero))
      return false;
    out.push_back(v);
  }
  return !out.empty();
}

static bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

int main(int argc, char **argv) {
  const char *path = nullptr;
  std::vector<uint64_t> chunkSizes, ringSizes;
  std::vector<uint64_t> writers, timeoutMs, startBeforeEnd, latencyUs;
  bool lag = false;
  std::string emitWriter, emitHip, hip = "clang", hiprtcArch;
  bool communicator = false;
  RingFault fault = RingFault::None;
  MemoryBudget budget;
  if (int status = tool::handleCommon(argc, argv, "sdma-ring", kUsage, budget);
      status >= 0)
    return status;
  auto bad = [](const std::string &what) {
    std::fprintf(stderr, "sdma-ring: %s\n", what.c_str());
    return tool::kUsageError;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int status = 0;
    if (tool::memoryBudgetOption("sdma-ring", arg, budget, status)) {
      if (status)
        return status;
    } else if (arg.rfind("--chunk-bytes=", 0) == 0) {
      if (!parseList(arg.substr(14), chunkSizes))
        return bad("bad --chunk-bytes '" + arg.substr(14, 64) + "'");
    } else if (arg.rfind("--ring-bytes=", 0) == 0) {
      // "min": the smallest ring the plan takes (0).
      std::string list = arg.substr(13);
      for (size_t at; (at = list.find("min")) != std::string::npos;)
        list.replace(at, 3, "0");
      if (!parseList(list, ringSizes, /*zero=*/true))
        return bad("bad --ring-bytes '" + arg.substr(13, 64) + "'");
    } else if (arg.rfind("--writers=", 0) == 0) {
      if (!parseList(arg.substr(10), writers) || writers.size() != 1 ||
          writers[0] > 64)
        return bad("bad --writers '" + arg.substr(10, 64) + "' (1..64)");
    } else if (arg.rfind("--start-before-end=", 0) == 0) {
      if (!parseList(arg.substr(19), startBeforeEnd, /*zero=*/true) ||
          startBeforeEnd.size() != 1)
        return bad("bad --start-before-end '" + arg.substr(19, 64) + "'");
    } else if (arg.rfind("--engine-latency-us=", 0) == 0) {
      if (!parseList(arg.substr(20), latencyUs, /*zero=*/true) ||
          latencyUs.size() != 1 || latencyUs[0] > 1000000)
        return bad("bad --engine-latency-us '" + arg.substr(20, 64) + "'");
    } else if (arg == "--engine-lag") {
      lag = true;
    } else if (arg.rfind("--timeout-ms=", 0) == 0) {
      if (!parseList(arg.substr(13), timeoutMs) || timeoutMs.size() != 1 ||
          timeoutMs[0] > 3600000)
        return bad("bad --timeout-ms '" + arg.substr(13, 64) + "'");
    } else if (arg.rfind("--fault=", 0) == 0) {
      std::optional<RingFault> f = parseRingFault(arg.substr(8));
      if (!f)
        return bad("unknown --fault '" + arg.substr(8, 64) +
                   "' (none, early-doorbell, no-pad, race)");
      fault = *f;
    } else if (arg.rfind("--emit-writer=", 0) == 0) {
      emitWriter = arg.substr(14);
    } else if (arg.rfind("--emit-hip=", 0) == 0) {
      emitHip = arg.substr(11);
    } else if (arg.rfind("--entry=", 0) == 0) {
      if (arg != "--entry=communicator")
        return bad("--entry takes communicator");
      communicator = true;
    } else if (arg.rfind("--hiprtc=", 0) == 0) {
      hiprtcArch = arg.substr(9);
    } else if (arg.rfind("--hip=", 0) == 0) {
      hip = arg.substr(6);
      if (hip != "clang" && hip != "hiprtc")
        return bad("--hip must be clang or hiprtc");
    } else if (arg[0] == '-' && arg.size() > 1) {
      return tool::unknownOption("sdma-ring", arg);
    } else if (!path) {
      path = argv[i];
    } else {
      return bad("more than one packet plan");
    }
  }
  if (!path)
    return bad("usage: sdma-ring PACKETS.json [options] (sdma-ring --help "
               "for more)");
  std::string error;
  std::optional<PacketPlan> plan = PacketPlan::load(path, error);
  if (!plan) {
    std::fprintf(stderr, "sdma-ring: error: %s\n", error.c_str());
    return 1;
  }
  if (!emitWriter.empty() || !emitHip.empty() || !hiprtcArch.empty()) {
    std::optional<std::string> writer =
        communicator ? emitCommunicatorRingWriter(*plan, error)
                     : emitRingWriter(*plan, fault, error);
    if (!writer) {
      std::fprintf(stderr, "sdma-ring: error: %s\n", error.c_str());
      return 1;
    }
    if ((!emitWriter.empty() && !writeFile(emitWriter, *writer)) ||
        (!emitHip.empty() &&
         !writeFile(emitHip, ringHipSource(*writer, hip == "clang")))) {
      std::fprintf(stderr, "sdma-ring: error: cannot write the kernel\n");
      return 1;
    }
    if (!hiprtcArch.empty()) {
      std::string code;
      if (!compileRingWriterHipRtc(*writer, hiprtcArch, code, error)) {
        std::fprintf(stderr, "sdma-ring: error: %s\n", error.c_str());
        return 1;
      }
      std::printf("hipRTC: compiled the ring writer of %s for %s: %zu-byte "
                  "code object\n",
                  plan->program.c_str(), hiprtcArch.c_str(), code.size());
    }
    return 0;
  }
  if (chunkSizes.empty())
    chunkSizes = {64, 4096};
  if (ringSizes.empty())
    ringSizes = {4096};
  RingSimOptions options;
  options.fault = fault;
  options.writers = writers.empty() ? 4 : static_cast<int>(writers[0]);
  if (!startBeforeEnd.empty())
    options.startBeforeEnd = startBeforeEnd[0];
  if (!latencyUs.empty())
    options.engineLatencyNs = latencyUs[0] * 1000;
  options.lagUntilFull = lag;
  if (!timeoutMs.empty())
    options.timeoutNs = timeoutMs[0] * 1000000ull;
  if (const char *cache = std::getenv("SDMA_CACHE_DIR"))
    options.cacheDirectory = cache;
  std::printf("ring writer %s: %d ranks, %zu queues, target %s, %d writers "
              "per queue\n",
              plan->program.c_str(), plan->ranks, plan->queues.size(),
              plan->target.name.c_str(), options.writers);
  Plan layout = plan->layout();
  int status = 0;
  for (uint64_t chunk : chunkSizes)
    for (uint64_t ring : ringSizes) {
      std::optional<HostMemory> memory =
          HostMemory::create(layout, chunk, error, budget);
      if (!memory) {
        std::fprintf(stderr, "sdma-ring: error: chunk %llu: %s\n",
                     (unsigned long long)chunk, error.c_str());
        return 1;
      }
      fillInputs(layout, *memory);
      options.ringBytes = ring;
      options.budget = budget;
      RingSimStats stats;
      if (!simulateRing(*plan, *memory, options, error, &stats)) {
        std::fprintf(stderr, "sdma-ring: error: chunk %llu ring %s: %s\n",
                     (unsigned long long)chunk,
                     ring ? std::to_string(ring).c_str() : "min",
                     error.c_str());
        return 1;
      }
      CheckResult check = checkOutputs(layout, *memory);
      bool ok = check.wrongBytes == 0;
      if (!ok)
        status = 2;
      std::printf(
          "%s chunk %llu ring %llu: %llu packets, %llu NOPs, %llu wraps, "
          "%llu doorbells, %llu full-ring waits (longest queue %llu bytes), "
          "%llu bytes moved; "
          "collective: %llu of %llu bytes wrong%s%s\n",
          ok ? "ok  " : "FAIL", (unsigned long long)chunk,
          (unsigned long long)stats.ringBytes,
          (unsigned long long)stats.packets, (unsigned long long)stats.nops,
          (unsigned long long)stats.wraps, (unsigned long long)stats.doorbells,
          (unsigned long long)stats.fullWaits,
          (unsigned long long)stats.longestQueueBytes,
          (unsigned long long)stats.bytesMoved,
          (unsigned long long)check.wrongBytes,
          (unsigned long long)check.checkedBytes,
          check.firstWrong.empty() ? "" : "; first: ",
          check.firstWrong.c_str());
    }
  return status;
}
