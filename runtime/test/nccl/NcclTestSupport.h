//===- NcclTestSupport.h - checks the NCCL API test shares -------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The rank, the failure count and the checks of sdma-nccl-test
// (NcclApiTest.cpp, NcclP2pCases.cpp): a result and its message, every
// element of a buffer, each rank's values, the unique id through a file.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TEST_NCCL_NCCLTESTSUPPORT_H
#define SDMA_RUNTIME_TEST_NCCL_NCCLTESTSUPPORT_H

#include "NcclAbi.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sdma::nccltest {

inline int rank = 0, ranks = 1;
inline std::atomic<int> failures{0};

inline void check(ncclResult_t got, ncclResult_t want, const std::string &what,
                  ncclComm_t comm, const char *words = nullptr) {
  std::string message = ncclGetLastError(comm);
  if (got == want && (!words || message.find(words) != std::string::npos))
    return;
  std::fprintf(stderr, "rank %d: %s: got %d (%s), want %d%s%s: %s\n", rank,
               what.c_str(), int(got), ncclGetErrorString(got), int(want),
               words ? " mentioning " : "", words ? words : "",
               message.c_str());
  ++failures;
}

template <typename T>
void expect(const std::vector<T> &got, const std::vector<T> &want,
            const std::string &what) {
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      std::fprintf(stderr, "rank %d: %s: element %zu differs\n", rank,
                   what.c_str(), i);
      ++failures;
      return;
    }
}

/// Rank r's element i (small integers: exact in every type and operator).
inline int value(int r, size_t i) { return int((r * 7 + i * 3) % 11) - 5; }

inline ncclUniqueId exchangeId(const char *path) {
  ncclUniqueId id;
  if (rank == 0) {
    check(ncclGetUniqueId(&id), ncclSuccess, "ncclGetUniqueId", nullptr);
    std::string tmp = std::string(path) + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof(id));
    std::rename(tmp.c_str(), path);
    return id;
  }
  for (int i = 0; i < 3000; ++i) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id.internal, sizeof(id)))
      return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "rank %d: no unique id in %s\n", rank, path);
  std::exit(1);
}

template <typename T> std::vector<T> input(int r, size_t n, size_t from = 0) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = T(value(r, from + i));
  return v;
}
/// Every rank's input(r, n, from), rank after rank: an all-gather's output
/// (from 0), or rank q's all-to-all output (from q * n).
template <typename T> std::vector<T> everyRank(size_t n, size_t from = 0) {
  std::vector<T> v;
  for (int r = 0; r < ranks; ++r)
    for (T x : input<T>(r, n, from))
      v.push_back(x);
  return v;
}

/// NcclP2pCases.cpp: ncclSend/ncclRecv, grouped and alone, every byte
/// checked, and their refusals.
void pointToPoint(ncclComm_t comm);
/// NcclPreMulSumCases.cpp: ncclRedOpCreatePreMulSum in every reduction,
/// every element checked, and its refusals.
void preMulSum(ncclComm_t comm);
/// NcclNodeCases.cpp: a communicator across nodes (NCCL_TEST_ACROSS_NODES),
/// every call it serves checked, then destroyed; the exit status.
int acrossNodes(ncclComm_t comm);

} // namespace sdma::nccltest

#endif // SDMA_RUNTIME_TEST_NCCL_NCCLTESTSUPPORT_H
