//===- HipLdstExecutor.cpp - load/store kernels on AMD GPUs ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#define __HIP_PLATFORM_AMD__ 1
#include "hip/HipLdstExecutor.h"
#include "hip/HipApi.h"
#include "hip/HipDeviceSet.h"
#include "hip/HipKernel.h"
#include "sdma/runtime/LdstPrelude.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace sdma::rt;
using namespace sdma::rt::hip;

struct HipLdstExecutor::State {
  const HipApi *api = nullptr;
  LdstProgram program;
  HipOptions options;
  std::unique_ptr<HipKernel> kernel;
  hipStream_t stream = nullptr;
  int smCount = 0, blocks = 1;
  size_t chunkBytes = 0;
  uint64_t epoch = 0;
  /// Every rank on options.device (one GPU); buffers, flags, syncs and the
  /// error record are its allocations.
  std::unique_ptr<HipDeviceSet> devices;
  std::vector<void *> flags, syncs;
  std::vector<uint64_t> table; // the kernel's SdmaTable, by value
  void *errorRecord = nullptr;

  bool check(hipError_t result, const char *call, std::string &error) {
    if (result == hipSuccess)
      return true;
    error = api->describe(call, result);
    return false;
  }
  bool alloc(void *&ptr, size_t bytes, std::string &error) {
    return devices->alloc(0, ptr, bytes, error);
  }
};

HipLdstExecutor::HipLdstExecutor(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

std::unique_ptr<HipLdstExecutor>
HipLdstExecutor::create(const LdstProgram &program, const HipOptions &options,
                        std::string &error) {
  int count = 0;
  const HipApi *api = HipApi::withDevices(count, error);
  if (!api)
    return nullptr;
  auto state = std::make_unique<State>();
  State &s = *state;
  s.api = api;
  s.program = program;
  s.options = options;
  s.devices = std::make_unique<HipDeviceSet>(*api);
  if (!s.devices->init(program.ranks, {}, options.device, error))
    return nullptr;
  const HipDeviceSet::Device &device = s.devices->devices().front();
  s.smCount = device.computeUnits;
  std::unique_ptr<HipLdstExecutor> executor(
      new HipLdstExecutor(std::move(state)));
  CompileInfo &info = executor->compile_;
  info.arch = device.arch;

  std::string code;
  if (!HipKernel::build(program.source, program.schedule + ".hip",
                        options.cacheDirectory, info, code, error))
    return nullptr;
  State &t = *executor->state_;
  t.kernel = std::make_unique<HipKernel>(*api);
  if (!t.kernel->load(device.ordinal, code, program.entry, kLdstThreads,
                      error) ||
      !t.check(api->hipStreamCreate(&t.stream), "hipStreamCreate", error))
    return nullptr;
  t.flags.assign(program.ranks, nullptr);
  t.syncs.assign(program.ranks, nullptr);
  for (int r = 0; r < program.ranks; ++r)
    if (!t.alloc(t.flags[r], program.flagSlots * 8, error) ||
        !t.alloc(t.syncs[r], 8, error))
      return nullptr;
  if (!t.alloc(t.errorRecord, 8 * 8, error))
    return nullptr;
  return executor;
}

HipLdstExecutor::~HipLdstExecutor() {
  State &s = *state_;
  if (s.stream)
    (void)s.api->hipStreamDestroy(s.stream);
  s.kernel.reset();
  // Buffers, flags, syncs and the error record go with the device set.
}

bool HipLdstExecutor::prepare(size_t chunkBytes, std::string &error) {
  State &s = *state_;
  std::vector<int64_t> chunks;
  for (const Buffer &buffer : s.program.buffers)
    chunks.push_back(buffer.chunks);
  if (!s.devices->allocateBuffers(chunks, chunkBytes, error))
    return false;
  s.chunkBytes = chunkBytes;
  std::vector<uint64_t> table;
  const std::vector<void *> *lists[] = {&s.devices->buffers(), &s.flags,
                                        &s.syncs};
  for (const std::vector<void *> *list : lists)
    for (void *p : *list)
      table.push_back(reinterpret_cast<uint64_t>(p));
  table.push_back(reinterpret_cast<uint64_t>(s.errorRecord));
  table.push_back(s.options.timeoutNs);
  table.push_back(0); // epochs: the launch numbers the run
  table.insert(table.end(), s.program.ranks, 0); // arrive: in-process
  table.push_back(0);                            // errorMirror: none
  table.push_back(0);                            // rowBytes: rows are chunks
  table.insert(table.end(), 4, 0);               // countsIn/Out: none
  table.push_back(0); // callTag, tags: in-process, unchecked
  table.insert(table.end(), s.program.ranks, 0);
  // ll, llSeq, llPairBytes (a low-latency program): no low-latency call.
  if (s.program.lowLatencyPairChunks >= 0)
    table.insert(table.end(), s.program.ranks + 2, 0);
  s.table = std::move(table);
  // One resident block per CU and rank at most (ranks wait on each other).
  int64_t largest = 0;
  for (const Buffer &buffer : s.program.buffers)
    largest = std::max<int64_t>(largest, buffer.chunks);
  uint64_t bytes = largest * chunkBytes;
  int cap = std::max(1, s.smCount / s.program.ranks);
  s.blocks = static_cast<int>(std::clamp<uint64_t>(
      (bytes + kLdstThreads * 64 - 1) / (kLdstThreads * 64), 1, cap));
  return true;
}

bool HipLdstExecutor::upload(const HostMemory &memory, std::string &error) {
  return state_->devices->upload(memory, error);
}

bool HipLdstExecutor::download(HostMemory &memory, std::string &error) {
  return state_->devices->download(memory, error);
}

bool HipLdstExecutor::launch(std::string &error) {
  State &s = *state_;
  if (!s.chunkBytes) {
    error = "run before prepare()";
    return false;
  }
  unsigned long long chunk = s.chunkBytes, epoch = s.epoch++;
  int rankBase = 0;
  void *args[] = {s.table.data(), &chunk, &epoch, &rankBase};
  return s.kernel->launch(s.blocks, s.program.ranks, s.stream, args, error);
}

bool HipLdstExecutor::wait(std::string &error) {
  State &s = *state_;
  auto start = std::chrono::steady_clock::now();
  auto limit = std::chrono::nanoseconds(s.options.timeoutNs) * 2 +
               std::chrono::seconds(10);
  hipError_t result;
  while ((result = s.api->hipStreamQuery(s.stream)) == hipErrorNotReady) {
    if (std::chrono::steady_clock::now() - start > limit) {
      error = "the GPU did not finish the run in time";
      return false;
    }
    std::this_thread::yield();
  }
  if (!s.check(result, "hipStreamQuery", error))
    return false;
  uint64_t record[5];
  if (!s.check(s.api->hipMemcpy(record, s.errorRecord, sizeof(record),
                                hipMemcpyDeviceToHost),
               "hipMemcpy", error))
    return false;
  if (record[0] != 0) {
    error = "rank " + std::to_string(record[1]) +
            " waited too long for flag slot " +
            std::to_string(static_cast<int64_t>(record[2])) + " to reach " +
            std::to_string(record[3]) + "; it stayed at " +
            std::to_string(record[4]);
    return false;
  }
  return true;
}

bool HipLdstExecutor::time(int runs, std::vector<double> &microseconds,
                           std::string &error) {
  microseconds.clear();
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!run(error))
      return false;
    microseconds.push_back(std::chrono::duration<double, std::micro>(
                               std::chrono::steady_clock::now() - start)
                               .count());
  }
  return true;
}
