//===- launch_cost.cu - the host's cost of one kernel launch ----*- CUDA -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Issue 38 measures the communicator per call; a call is one launch per
// rank (threads) or one for the ranks sharing a GPU (a group), so the
// launch itself is the floor. This times, on the host, back-to-back
// launches of an empty kernel (one block of 32 threads) whose parameter is
// P bytes, the sizes the communicator's launches pass (a table of 26 words
// at 2 ranks, a group of 8 tables at 8 ranks is past 4 KiB):
//   one:     one thread, one stream;
//   join:    one thread, the group's pattern: stream B's event waited on
//            by stream A, the launch on A, A's event waited on by B;
//   threads: T threads, a stream each, launching at once (ranks as
//            threads: every launch of a context takes the driver's lock);
//   memops:  no launch: a stream write of a word, then a stream wait on
//            it (cuStreamWriteValue32 + cuStreamWaitValue32, what a call
//            handed to a kernel already running would cost the host);
//   graph:   the launch captured once in a CUDA graph, cudaGraphLaunch.
// Each row is the median over 7 repeats of N launches: host_us is the loop's
// wall time per launch (the enqueue), total_us until the streams are idle.
//   nvcc -O2 -std=c++17 -arch=sm_90 bench/launch_cost.cu -lcuda -o launch_cost
//   ./launch_cost [N] > launch_cost.csv
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.cuh"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

template <int Bytes> struct Param {
  unsigned long long words[Bytes / 8];
};

template <int Bytes> __global__ void empty(const __grid_constant__ Param<Bytes> p) {
  if (threadIdx.x == 0 && p.words[0] == 1 && p.words[Bytes / 8 - 1] == 2)
    printf("never\n");
}

static double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(
             steady_clock::now().time_since_epoch())
      .count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  double host, total;
};

/// `launches` launches on `stream` by one thread: its host time.
template <int Bytes>
static double loop(cudaStream_t stream, int launches, bool join,
                   cudaStream_t other, cudaEvent_t a, cudaEvent_t b) {
  Param<Bytes> p{};
  double start = nowUs();
  for (int i = 0; i < launches; ++i) {
    if (join) {
      CK(cudaEventRecord(b, other));
      CK(cudaStreamWaitEvent(stream, b, 0));
    }
    empty<Bytes><<<1, 32, 0, stream>>>(p);
    if (join) {
      CK(cudaEventRecord(a, stream));
      CK(cudaStreamWaitEvent(other, a, 0));
    }
  }
  return nowUs() - start;
}

/// The memops and graph modes (one thread, one stream): host time.
template <int Bytes>
static double other(const std::string &mode, cudaStream_t stream,
                    int launches) {
  Param<Bytes> p{};
  double start = 0;
  if (mode == "memops") {
    unsigned *word;
    CK(cudaMalloc(&word, 4));
    CK(cudaMemset(word, 0, 4));
    CK(cudaDeviceSynchronize());
    CUdeviceptr w = reinterpret_cast<CUdeviceptr>(word);
    start = nowUs();
    for (int i = 1; i <= launches; ++i)
      if (cuStreamWriteValue32(stream, w, unsigned(i), 0) != CUDA_SUCCESS ||
          cuStreamWaitValue32(stream, w, unsigned(i), CU_STREAM_WAIT_VALUE_GEQ) !=
              CUDA_SUCCESS) {
        std::fprintf(stderr, "stream memory operations failed\n");
        std::exit(1);
      }
    double host = nowUs() - start;
    CK(cudaStreamSynchronize(stream));
    CK(cudaFree(word));
    return host;
  }
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  empty<Bytes><<<1, 32, 0, stream>>>(p);
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  start = nowUs();
  for (int i = 0; i < launches; ++i)
    CK(cudaGraphLaunch(exec, stream));
  double host = nowUs() - start;
  CK(cudaStreamSynchronize(stream));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  return host;
}

template <int Bytes>
static Row measure(const char *mode, int threads, int launches) {
  std::vector<cudaStream_t> streams(std::max(threads, 2));
  for (auto &s : streams)
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CK(cudaEventCreateWithFlags(&a, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&b, cudaEventDisableTiming));
  bool join = std::string(mode) == "join";
  std::vector<double> host, total;
  for (int rep = 0; rep < 8; ++rep) {
    CK(cudaDeviceSynchronize());
    std::vector<double> each(threads);
    std::atomic<int> ready{0};
    double start = nowUs();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < threads) {
        }
        each[t] = std::string(mode) == "memops" || std::string(mode) == "graph"
                      ? other<Bytes>(mode, streams[t], launches)
                      : loop<Bytes>(streams[t], launches, join, streams[1],
                                    a, b);
      });
    for (auto &t : pool)
      t.join();
    CK(cudaDeviceSynchronize());
    double end = nowUs();
    if (rep == 0)
      continue; // warm-up
    host.push_back(*std::max_element(each.begin(), each.end()) / launches);
    total.push_back((end - start) / launches);
  }
  for (auto &s : streams)
    CK(cudaStreamDestroy(s));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  Row row{median(host), median(total)};
  std::printf("%s,%d,%d,%.3f,%.3f\n", mode, Bytes, threads, row.host,
              row.total);
  std::fflush(stdout);
  return row;
}

template <int Bytes> static void sweep(int launches) {
  measure<Bytes>("one", 1, launches);
  measure<Bytes>("join", 1, launches);
  measure<Bytes>("graph", 1, launches);
  if (Bytes == 64)
    measure<Bytes>("memops", 1, launches);
  for (int threads : {2, 4, 8})
    measure<Bytes>("threads", threads, launches);
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? std::atoi(argv[1]) : 2000;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s, %d launches a repeat, empty kernel <<<1, 32>>>\n",
              prop.name, launches);
  std::printf("mode,param_bytes,threads,host_us,total_us\n");
  sweep<64>(launches);
  sweep<256>(launches);
  sweep<512>(launches);
  sweep<2048>(launches);
  sweep<4096>(launches);
  sweep<6144>(launches);
  sweep<16384>(launches);
  return 0;
}
