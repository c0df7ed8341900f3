// Kernel-triggered copy engines on one NVIDIA GPU (issue 15, item 6): each
// plan's copies are enqueued first (cuda-ce with CeOptions::kernelTrigger:
// every queue waits on its rank's launch flag), then one kernel computes
// every rank's input (the runtime's pattern, on the GPU) and, once its last
// block is done, stores the trigger values at system scope: no host call
// between the kernel and the copies. Every output byte is checked; a copy
// that ran before the trigger would have moved poison. Then a trigger one
// short must leave the run waiting, reported by wait() as such.
//
//   nvcc -O2 -arch=sm_90 -std=c++17 -Iruntime/include test/gpu/ce_trigger.cu
//        BUILD/libsdmart.a -ldl -lpthread -o ce_trigger
//   ce_trigger PLAN.json...   (exit 0: every byte as expected)

#include "sdma/runtime/Executor.h"
#include "sdma/runtime/HostMemory.h"
#include "sdma/runtime/Plan.h"

#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

using namespace sdma::rt;

constexpr int kMaxRanks = 16;
struct Inputs {
  unsigned char *buf[kMaxRanks];
  unsigned long long *flag[kMaxRanks];
  unsigned long long value, bytes;
  int ranks, buffer;
  unsigned int *done; // blocks finished
};

// patternByte (HostMemory.cpp), on the GPU.
__device__ unsigned char pattern(int rank, int buffer, unsigned long long i) {
  unsigned long long x = ((unsigned long long)rank << 48) ^
                         ((unsigned long long)buffer << 40) ^ i;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return (unsigned char)(x ^ (x >> 31));
}

__global__ void computeAndTrigger(Inputs in, long long spinNs) {
  // Some "compute" first, so the copies would overtake it if untriggered.
  if (threadIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < spinNs * 2) // ~2 GHz
      ;
  }
  __syncthreads();
  unsigned long long n = in.bytes * in.ranks;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    int r = (int)(i / in.bytes);
    unsigned long long k = i % in.bytes;
    in.buf[r][k] = pattern(r, in.buffer, k);
  }
  __syncthreads();
  // The last block to finish releases the copies.
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(in.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x < in.ranks) {
    __threadfence_system();
    atomicExch(in.flag[threadIdx.x], in.value); // 64-bit, device-wide
    __threadfence_system();
  }
}

static bool runPlan(const char *path, size_t chunk, bool shortTrigger,
                    int &failures) {
  std::string error;
  std::optional<Plan> plan = Plan::load(path, error);
  if (!plan || !plan->collective || plan->ranks > kMaxRanks) {
    std::printf("FAIL %s: %s\n", path,
                plan ? "no collective or too many ranks" : error.c_str());
    ++failures;
    return false;
  }
  ExecutorOptions options;
  options.ce.kernelTrigger = true;
  options.cuda.timeoutNs = shortTrigger ? 500000000ull : 5000000000ull;
  CompiledSchedule compiled{*plan, std::nullopt, std::nullopt};
  auto ex = createExecutor("cuda-ce", compiled, options, error);
  // Everything that may synchronize the context (allocation, loading the
  // kernel's module: lazy loading does) before the queues block on the
  // trigger, or it waits for them and they for the kernel.
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  unsigned int *done = nullptr;
  cudaMalloc(&done, sizeof(unsigned));
  cudaMemset(done, 0, sizeof(unsigned));
  cudaFuncAttributes attributes;
  cudaFuncGetAttributes(&attributes, computeAndTrigger);
  cudaDeviceSynchronize();
  std::optional<HostMemory> memory =
      HostMemory::create(*plan, chunk, error, MemoryBudget{});
  bool ok = ex && memory && ex->prepare(chunk, error) &&
            ex->upload(*memory, error) && ex->launch(error);
  Inputs in{};
  in.done = done;
  in.ranks = plan->ranks;
  in.buffer = plan->collective->input;
  in.bytes = plan->buffers[in.buffer].chunks * chunk;
  for (int r = 0; ok && r < plan->ranks; ++r) {
    uint64_t b = 0, f = 0, v = 0;
    ok = ex->deviceBuffer(r, in.buffer, b, error) &&
         ex->kernelTrigger(r, f, v, error);
    in.buf[r] = reinterpret_cast<unsigned char *>(b);
    in.flag[r] = reinterpret_cast<unsigned long long *>(f);
    in.value = shortTrigger ? v - 1 : v;
  }
  if (!ok) {
    std::printf("FAIL %s chunk %zu: %s\n", path, chunk, error.c_str());
    ++failures;
    return false;
  }
  computeAndTrigger<<<64, 256, 0, stream>>>(in, 200000);
  cudaError_t launched = cudaGetLastError();
  bool waited = ex->wait(error);
  cudaStreamSynchronize(stream);
  // Not after a run left waiting: cudaFree synchronizes the whole device,
  // whose copy queues stay blocked (the first GPU run hung there).
  if (waited) {
    cudaFree(in.done);
    cudaStreamDestroy(stream);
  }
  if (launched != cudaSuccess) {
    std::printf("FAIL %s: kernel launch: %s\n", path,
                cudaGetErrorString(launched));
    ++failures;
    return false;
  }
  if (shortTrigger) {
    // The run must still be waiting, and say for what.
    bool named = !waited && error.find("launch flag") != std::string::npos;
    std::printf("%s %s chunk %zu, trigger one short: %s\n",
                named ? "ok  " : "FAIL", path, chunk,
                waited ? "the run finished untriggered" : error.c_str());
    failures += !named;
    return named;
  }
  if (!waited || !ex->download(*memory, error)) {
    std::printf("FAIL %s chunk %zu: %s\n", path, chunk, error.c_str());
    ++failures;
    return false;
  }
  uint64_t inputWrong = 0;
  for (int r = 0; r < plan->ranks; ++r)
    for (uint64_t k = 0; k < in.bytes; ++k)
      inputWrong += memory->buffer(r, in.buffer)[k] != patternByte(r, in.buffer, k);
  CheckResult check = checkOutputs(*plan, *memory);
  bool good = inputWrong == 0 && check.wrongBytes == 0 && check.checkedBytes;
  std::printf("%s %s chunk %zu: kernel-computed input %llu bytes wrong; "
              "collective %llu of %llu bytes wrong%s%s\n",
              good ? "ok  " : "FAIL", path, chunk,
              (unsigned long long)inputWrong,
              (unsigned long long)check.wrongBytes,
              (unsigned long long)check.checkedBytes,
              check.firstWrong.empty() ? "" : "; first: ",
              check.firstWrong.c_str());
  failures += !good;
  return good;
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0); // whole lines survive a timeout
  int failures = 0, runs = 0;
  // A run that fails may leave the GPU's queues blocked: stop there.
  for (int i = 1; i < argc && !failures; ++i)
    for (size_t chunk : {size_t(1024), size_t(65536), size_t(1) << 20}) {
      ++runs;
      if (!runPlan(argv[i], chunk, false, failures))
        break;
    }
  // Last (the executor stays blocked): a trigger one short.
  if (argc > 1 && !failures) {
    runPlan(argv[1], 4096, true, failures);
    ++runs;
  }
  std::printf("%s: %d runs, %d failures\n", failures ? "FAILED" : "PASSED",
              runs, failures);
  return failures ? 1 : 0;
}
