//===- CommOptions.cpp - a communicator's options from the environment ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A variable that is set must hold a value the option can take: a typo
// (SDMA_TIMEOUT_MS=abc, SDMA_HEAP_BYTES=1G, SDMA_DEVICE=gpu) is an error
// naming the variable, never a silent 0 or default.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Communicator.h"

#include "compile/KernelCache.h"

#include <cstdlib>
#include <limits>

using namespace sdma::rt;

namespace {
/// `text`, the value of $name, as a decimal number from `least` (0 or 1) to
/// `limit`.
bool parseNumber(const char *name, const char *text, uint64_t least,
                 uint64_t limit, uint64_t &value, Error &error) {
  uint64_t parsed = 0;
  for (const char *c = text; *c; ++c) {
    if (*c < '0' || *c > '9' || parsed > (limit - (*c - '0')) / 10)
      return error.fail(
          ErrorKind::InvalidArgument,
          std::string(name) + "='" + text + "' is not a decimal number from " +
              std::to_string(least) + " to " + std::to_string(limit));
    parsed = parsed * 10 + (*c - '0');
  }
  if (parsed < least)
    return error.fail(ErrorKind::InvalidArgument,
                      std::string(name) + "='" + text + "' must be positive");
  value = parsed;
  return true;
}

/// $name as a positive decimal number, into `value` when the option is
/// unset (0); `fallback` if the variable is unset too.
bool envNumber(const char *name, uint64_t fallback, uint64_t limit,
               uint64_t &value, Error &error) {
  if (value)
    return true;
  const char *text = std::getenv(name);
  if (!text || !*text) {
    value = fallback;
    return true;
  }
  return parseNumber(name, text, 1, limit, value, error);
}

/// $name, where set, as 0 or 1 into `value`.
bool envSwitch(const char *name, bool &value, Error &error) {
  const char *text = std::getenv(name);
  if (!text)
    return true;
  std::string set = text;
  if (set != "0" && set != "1")
    return error.fail(ErrorKind::InvalidArgument,
                      std::string(name) + "='" + set + "' must be 0 or 1");
  value = set == "1";
  return true;
}
} // namespace

bool sdma::rt::resolveOptions(CommOptions &o, Error &error) {
  if (o.device.empty()) {
    const char *device = std::getenv("SDMA_DEVICE");
    o.device = device && *device ? device : "cuda";
    if (o.device != "cpu" && o.device != "cuda" && o.device != "hip")
      return error.fail(ErrorKind::InvalidArgument,
                        "SDMA_DEVICE='" + o.device +
                            "' is not a device (cpu, cuda or hip)");
  }
  if (o.device != "cpu" && o.device != "cuda" && o.device != "hip")
    return error.fail(ErrorKind::InvalidArgument,
                      "unknown device '" + o.device + "' (cpu, cuda or hip)");
  // A day of waiting, a TiB of heap: past them a value is a typo.
  uint64_t heap = o.heapBytes, twoShot = o.twoShotBytes,
           p2pChunk = o.p2pChunkBytes, dmaMin = o.dmaMinBytes;
  if (!envNumber("SDMA_TIMEOUT_MS", 30000, 86400000, o.timeoutMs, error) ||
      !envNumber("SDMA_HEAP_BYTES",
                 o.device == "cpu" ? 16ull << 20 : 256ull << 20, 1ull << 40,
                 heap, error) ||
      !envNumber("SDMA_TWO_SHOT_BYTES", 256 << 10,
                 std::numeric_limits<uint32_t>::max(), twoShot, error) ||
      !envNumber("SDMA_P2P_CHUNK_BYTES",
                 o.device == "cpu" ? 16 << 10 : 256 << 10, 64ull << 20,
                 p2pChunk, error) ||
      !envNumber("SDMA_DMA_MIN_BYTES", 0, 1ull << 50, dmaMin, error))
    return false;
  o.dmaMinBytes = dmaMin;
  // A size where 0 turns a feature off (not envNumber's positive numbers),
  // read where the option was left unset (-1).
  auto envSize = [&](const char *name, uint64_t limit, int64_t &value) {
    const char *text = std::getenv(name);
    uint64_t v = 0;
    if (value >= 0 || !text || !*text)
      return true;
    if (!parseNumber(name, text, 0, limit, v, error))
      return false;
    value = int64_t(v);
    return true;
  };
  // Low-latency calls unset stay -1: the communicator sizes them by its rank
  // count. Sharing unset is off.
  if (!envSize("SDMA_LL_BYTES", 1ull << 24, o.lowLatencyBytes) ||
      !envSize("SDMA_SHARED_BYTES", 1ull << 50, o.sharedBytes) ||
      !envSize("SDMA_COPY_KERNEL_BYTES", 1ull << 50, o.copyKernelBytes))
    return false;
  if (o.copyKernelBytes < 0)
    o.copyKernelBytes = 32 << 20;
  if (o.sharedBytes < 0)
    o.sharedBytes = 0;
  if (o.lowLatencyBytes > (int64_t(1) << 24))
    return error.fail(ErrorKind::InvalidArgument,
                      "lowLatencyBytes " + std::to_string(o.lowLatencyBytes) +
                          " is more than 16 MiB");
  if (o.lowLatencyBytes > 0)
    o.lowLatencyBytes = (o.lowLatencyBytes + 7) / 8 * 8;
  if (p2pChunk > (64ull << 20))
    return error.fail(ErrorKind::InvalidArgument, "p2pChunkBytes " +
                                                      std::to_string(p2pChunk) +
                                                      " is more than 64 MiB");
  o.p2pChunkBytes = (p2pChunk + 15) / 16 * 16;
  o.heapBytes = (heap + 255) / 256 * 256;
  o.twoShotBytes = twoShot;
  if (o.coLaunch < 0 && std::getenv("SDMA_COLAUNCH")) {
    bool on = false;
    if (!envSwitch("SDMA_COLAUNCH", on, error))
      return false;
    o.coLaunch = on ? 1 : 0;
  }
  if (!envSwitch("SDMA_CHECK_CALLS", o.checkCalls, error) ||
      !envSwitch("SDMA_REPLAY_CALLS", o.replayCalls, error) ||
      !envSwitch("SDMA_DMA_BATCH", o.dmaBatch, error))
    return false;
  auto choose =
      [&](std::string &value, const char *variable, const char *fallback,
          std::initializer_list<const char *> allowed, const char *what) {
        const char *env = std::getenv(variable);
        bool fromEnv = value.empty() && env && *env;
        if (value.empty())
          value = fromEnv ? env : fallback;
        std::string list;
        for (const char *a : allowed) {
          if (value == a)
            return true;
          list += (list.empty() ? "" : ", ") + std::string(a);
        }
        return error.fail(ErrorKind::InvalidArgument,
                          (fromEnv ? std::string(variable) + "='" + value + "'"
                                   : std::string(what) + " '" + value + "'") +
                              " is not one of " + list);
      };
  if (!choose(o.path, "SDMA_PATH", "auto", {"auto", "ldst", "dma"}, "path") ||
      !choose(o.dmaVariant, "SDMA_DMA_VARIANT", "pcpy",
              {"pcpy", "b2b", "bcst", "swap"}, "DMA variant") ||
      !choose(o.coLaunchMode, "SDMA_COLAUNCH_MODE", "together",
              {"together", "ordered"}, "co-launch mode") ||
      !choose(o.dmaSubmit, "SDMA_DMA_SUBMIT", "host", {"host", "kernel"},
              "DMA submission"))
    return false;
  // Unset stays "": the device's target.
  const char *target = std::getenv("SDMA_DMA_PACKET_TARGET");
  if ((!o.dmaPacketTarget.empty() || (target && *target)) &&
      !choose(o.dmaPacketTarget, "SDMA_DMA_PACKET_TARGET", "",
              {"gfx9", "gfx942", "gfx950"}, "SDMA packet target"))
    return false;
  if (o.programDirectory.empty() && std::getenv("SDMA_PROGRAM_DIR"))
    o.programDirectory = std::getenv("SDMA_PROGRAM_DIR");
  o.cacheDirectory = KernelCache(o.cacheDirectory).directory();
  if (o.cpuThreads < 1)
    return error.fail(ErrorKind::InvalidArgument,
                      "cpuThreads " + std::to_string(o.cpuThreads) +
                          " must be positive");
  return true;
}
