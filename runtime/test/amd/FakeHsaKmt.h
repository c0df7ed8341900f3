//===- FakeHsaKmt.h - a scripted libhsakmt for the queue path's tests -----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The control side of libsdma-fake-hsakmt.so (FakeHsaKmt.cpp): a test
// dlopens the library (the same handle HsaKmtApi::load gets), scripts a
// topology and failures with fakeHsaKmtSetup, runs the code under test and
// reads back every call with its arguments and what is still alive. A tool
// run against it gets a machine from $SDMA_FAKE_HSAKMT_MACHINE instead.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TEST_FAKEHSAKMT_H
#define SDMA_RUNTIME_TEST_FAKEHSAKMT_H

#include <cstddef>
#include <cstdint>

/// KFD's recommended engine per (source, destination) socket on an 8-GPU
/// MI300X in SPX mode (rec_sdma_eng_map of the KFD patch that added
/// RecSdmaEngIdMask): test data.
constexpr int kFakeMi300xEngine[8][8] = {
    {-1, 14, 12, 2, 4, 8, 10, 6}, {14, -1, 2, 10, 8, 4, 6, 12},
    {10, 2, -1, 12, 14, 6, 4, 8}, {2, 12, 10, -1, 6, 14, 8, 4},
    {4, 8, 14, 6, -1, 10, 12, 2}, {8, 4, 6, 14, 12, -1, 2, 10},
    {10, 6, 4, 8, 12, 2, -1, 14}, {6, 12, 8, 4, 2, 10, 14, -1}};

extern "C" {

struct FakeHsaKmtNode {
  uint32_t cpuCores = 0;
  uint32_t computeCores = 0; // NumFComputeCores: non-zero on a GPU
  uint32_t sdmaEngines = 0;
  uint32_t sdmaXgmiEngines = 0;
  uint32_t queuesPerEngine = 8; // KFD refuses more queues on one engine
};

struct FakeHsaKmtLink {
  uint32_t from = 0, to = 0;
  uint32_t type = 11; // HSA_IOLINKTYPE: 11 xGMI, 2 PCIe
  uint32_t weight = 15;
  uint32_t recSdmaEngIdMask = 0;
};

struct FakeHsaKmtConfig {
  uint32_t kfdMajor = 1, kfdMinor = 17;
  /// sizeof(HsaNodeProperties) to emulate: 360 (2024), 368 (2025), 376
  /// (later 2025) write the real layouts; 364 an unknown one.
  uint32_t nodePropertiesBytes = 360;
  int openStatus = 0; // what hsaKmtOpenKFD returns
  /// The n-th call (1-based; 0: none) fails: allocation with
  /// HSAKMT_STATUS_NO_MEMORY, the others with HSAKMT_STATUS_ERROR (what
  /// libhsakmt returns for any failed ioctl).
  int failAllocAt = 0;
  int failMapAt = 0;
  int failCreateQueueAt = 0;
  int failDestroyQueueAt = 0;
};

/// One call: its name, its arguments as integers (pointers as addresses),
/// its status and what it returned through pointers.
struct FakeHsaKmtCall {
  char name[40];
  uint64_t args[9];
  int status;
  uint64_t out[4];
};

struct FakeHsaKmtLive {
  int kfdOpen;     // hsaKmtOpenKFD minus hsaKmtCloseKFD
  int allocations; // hsaKmtAllocMemory not freed
  int mappings;    // mapped and not unmapped
  int queues;      // created and not destroyed
  int engine[32];  // live queues per SDMA engine
};

/// Forgets all state and scripts a new machine. Until the first call, the
/// machine is $SDMA_FAKE_HSAKMT_MACHINE (for tools): "mi300x" (CPU node 0,
/// GPU nodes 1-8 as kFakeMi300xEngine recommends), "mi300x-kfd-1.16", or
/// none (no node).
void fakeHsaKmtSetup(const FakeHsaKmtConfig *config,
                     const FakeHsaKmtNode *nodes, uint32_t numNodes,
                     const FakeHsaKmtLink *links, uint32_t numLinks);
/// The calls since setup.
const FakeHsaKmtCall *fakeHsaKmtCalls(size_t *count);
void fakeHsaKmtLive(FakeHsaKmtLive *live);
/// The addresses of a live queue's read pointer, write pointer and
/// doorbell; false for an unknown id.
bool fakeHsaKmtQueue(uint64_t queueId, uint64_t *readPtr, uint64_t *writePtr,
                     uint64_t *doorbell);
}

#endif // SDMA_RUNTIME_TEST_FAKEHSAKMT_H
