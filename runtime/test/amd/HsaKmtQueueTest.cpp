//===- HsaKmtQueueTest.cpp - SDMA queues per engine, on a fake libhsakmt --===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// No AMD GPU here: HsaKmtApi loads libsdma-fake-hsakmt.so (FakeHsaKmt.cpp),
// which scripts topologies and failures and records every call.
//
//===----------------------------------------------------------------------===//

#include "amd/HsaKmtQueue.h"
#include "amd/FakeHsaKmt.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <vector>

using namespace sdma::rt;
using namespace sdma::rt::hsakmt;

namespace {

constexpr auto &kMi300xEngine = kFakeMi300xEngine;

struct Machine {
  FakeHsaKmtConfig config;
  std::vector<FakeHsaKmtNode> nodes;
  std::vector<FakeHsaKmtLink> links;
};

/// CPU node 0 and `gpus` GPU nodes 1..gpus, each GPU linked to the CPU
/// (PCIe) and to every other GPU (xGMI, `mask(src, dst)` recommended).
template <class Mask>
Machine machine(int gpus, uint32_t sdma, uint32_t xgmi, Mask mask) {
  Machine m;
  m.nodes.push_back({96, 0, 0, 0});
  for (int g = 0; g < gpus; ++g)
    m.nodes.push_back({0, 1216, sdma, xgmi});
  for (uint32_t g = 1; g <= uint32_t(gpus); ++g) {
    m.links.push_back({g, 0, 2, 20, 0x3});
    m.links.push_back({0, g, 2, 20, 0});
    for (uint32_t peer = 1; peer <= uint32_t(gpus); ++peer)
      if (peer != g)
        m.links.push_back({g, peer, 11, 15, mask(g, peer)});
  }
  return m;
}

Machine mi300x() {
  return machine(8, 2, 14, [](uint32_t src, uint32_t dst) {
    return 1u << kMi300xEngine[src - 1][dst - 1];
  });
}

/// The fake's control functions, from the handle HsaKmtApi::load shares.
struct FakeLib {
  decltype(&fakeHsaKmtSetup) setup = nullptr;
  decltype(&fakeHsaKmtCalls) calls = nullptr;
  decltype(&fakeHsaKmtLive) live = nullptr;
  decltype(&fakeHsaKmtQueue) queue = nullptr;
  FakeLib() {
    void *handle = dlopen(SDMA_FAKE_HSAKMT, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return;
    setup = reinterpret_cast<decltype(setup)>(dlsym(handle, "fakeHsaKmtSetup"));
    calls = reinterpret_cast<decltype(calls)>(dlsym(handle, "fakeHsaKmtCalls"));
    live = reinterpret_cast<decltype(live)>(dlsym(handle, "fakeHsaKmtLive"));
    queue = reinterpret_cast<decltype(queue)>(dlsym(handle, "fakeHsaKmtQueue"));
  }
};

class FakeMachine : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(fake.setup && fake.calls && fake.live && fake.queue)
        << SDMA_FAKE_HSAKMT << ": " << dlerror();
    std::string error;
    api = HsaKmtApi::load(SDMA_FAKE_HSAKMT, error);
    ASSERT_TRUE(api) << error;
  }
  void use(const Machine &m) {
    fake.setup(&m.config, m.nodes.data(), uint32_t(m.nodes.size()),
               m.links.data(), uint32_t(m.links.size()));
  }
  std::vector<FakeHsaKmtCall> calls(const std::string &name = "") {
    size_t count = 0;
    const FakeHsaKmtCall *all = fake.calls(&count);
    std::vector<FakeHsaKmtCall> out;
    for (size_t i = 0; i < count; ++i)
      if (name.empty() || name == all[i].name)
        out.push_back(all[i]);
    return out;
  }
  /// Nothing left open, allocated, mapped or queued.
  void expectAllReleased() {
    FakeHsaKmtLive live;
    fake.live(&live);
    EXPECT_EQ(live.kfdOpen, 0);
    EXPECT_EQ(live.allocations, 0);
    EXPECT_EQ(live.mappings, 0);
    EXPECT_EQ(live.queues, 0);
  }
  std::unique_ptr<SdmaQueueSet> create(uint32_t node, std::string &error,
                                       SdmaQueueOptions options = {}) {
    return SdmaQueueSet::create(*api, node, options, error);
  }

  FakeLib fake;
  std::unique_ptr<HsaKmtApi> api;
};

TEST(HsaKmtQueueRule, FollowsOneBitMasks) {
  std::vector<SdmaPeerLink> links;
  for (uint32_t peer = 2; peer <= 8; ++peer)
    links.push_back({peer, 1u << kMi300xEngine[0][peer - 1], true});
  std::vector<SdmaRoute> routes = planSdmaRoutes(links, 2, 14);
  ASSERT_EQ(routes.size(), 7u);
  for (size_t i = 0; i < routes.size(); ++i) {
    EXPECT_EQ(routes[i].peer, i + 2);
    EXPECT_EQ(routes[i].engine, kMi300xEngine[0][i + 1]);
    EXPECT_EQ(routes[i].queueType, kQueueTypeSdmaByEngId);
    EXPECT_EQ(routes[i].queue, i);
  }
}

TEST(HsaKmtQueueRule, SpreadsWideMasksAndSharesQueues) {
  // Engines 2 and 3 recommended to each of three peers: 2, 3, then 2 again.
  std::vector<SdmaRoute> routes = planSdmaRoutes(
      {{1, 0xC, true}, {2, 0xC, true}, {3, 0xC, true}, {4, 0x8, true}}, 2, 2);
  ASSERT_EQ(routes.size(), 4u);
  EXPECT_EQ(routes[0].engine, 2);
  EXPECT_EQ(routes[1].engine, 3);
  EXPECT_EQ(routes[2].engine, 2);
  EXPECT_EQ(routes[3].engine, 3);
  EXPECT_EQ(routes[2].queue, routes[0].queue);
  EXPECT_EQ(routes[3].queue, routes[1].queue);
  EXPECT_NE(routes[0].queue, routes[1].queue);
}

TEST(HsaKmtQueueRule, GenericQueueWhereNoOwnedEngineIsRecommended) {
  // A partition owning engines 0-1 only, links naming engines 14 and 12,
  // a link with no recommendation, and one that names engine 1 as well.
  std::vector<SdmaRoute> routes = planSdmaRoutes(
      {{1, 1u << 14, true}, {2, 0, true}, {3, (1u << 12) | 2, true}}, 2, 0);
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0].engine, -1);
  EXPECT_EQ(routes[0].queueType, kQueueTypeSdma); // no xGMI engine
  EXPECT_EQ(routes[1].queue, routes[0].queue);
  EXPECT_EQ(routes[2].engine, 1);
  EXPECT_NE(routes[2].queue, routes[0].queue);
  // With xGMI engines, an xGMI link gets a generic xGMI queue.
  routes = planSdmaRoutes({{1, 1u << 14, true}, {2, 0, false}}, 2, 6);
  EXPECT_EQ(routes[0].queueType, kQueueTypeSdmaXgmi);
  EXPECT_EQ(routes[1].queueType, kQueueTypeSdma);
}

TEST(HsaKmtQueueLoad, NoLibraryIsAClearError) {
  std::string error;
  EXPECT_FALSE(HsaKmtApi::load("/nonexistent/libhsakmt.so.1", error));
  EXPECT_NE(error.find("no libhsakmt (/nonexistent/libhsakmt.so.1"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("SDMA_HSAKMT_LIB"), std::string::npos) << error;
  ASSERT_EQ(setenv("SDMA_HSAKMT_LIB", "/nonexistent/from-env.so", 1), 0);
  EXPECT_FALSE(HsaKmtApi::load("", error));
  unsetenv("SDMA_HSAKMT_LIB");
  EXPECT_NE(error.find("/nonexistent/from-env.so"), std::string::npos) << error;
  EXPECT_EQ(HsaKmtApi::describe("hsaKmtX", 99, "node 2"),
            "hsaKmtX failed: unknown HSAKMT_STATUS (99) (node 2)");
}

TEST(HsaKmtQueueLoad, NamesTheMissingEntryPoint) {
  std::string error;
  EXPECT_FALSE(HsaKmtApi::load(SDMA_FAKE_HSAKMT_OLD, error));
  EXPECT_NE(error.find("lacks hsaKmtCreateQueueExt (libhsakmt before August "
                       "2024"),
            std::string::npos)
      << error;
  EXPECT_FALSE(HsaKmtApi::load("libm.so.6", error));
  EXPECT_EQ(error, "libm.so.6 lacks hsaKmtOpenKFD");
}

// A real libhsakmt where the machine has one (CI: Debian's libhsakmt1 5.2,
// older than hsaKmtCreateQueueExt): every entry point before that one in
// SDMA_HSAKMT_FUNCTIONS is found by name.
TEST(HsaKmtQueueLoad, RealOldLibhsakmtLacksOnlyCreateQueueExt) {
  void *real = dlopen("libhsakmt.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!real)
    GTEST_SKIP() << "no libhsakmt.so.1 here";
  if (dlsym(real, "hsaKmtCreateQueueExt"))
    GTEST_SKIP() << "this libhsakmt.so.1 is new enough";
  std::string error;
  EXPECT_FALSE(HsaKmtApi::load("libhsakmt.so.1", error));
  EXPECT_EQ(error.rfind("libhsakmt.so.1 lacks hsaKmtCreateQueueExt", 0), 0u)
      << error;
  EXPECT_TRUE(dlsym(real, "hsaKmtDestroyQueue"));
}

TEST_F(FakeMachine, Mi300xOneQueuePerPeerEngineInEveryLayout) {
  for (uint32_t layout : {360u, 368u, 376u}) {
    SCOPED_TRACE("HsaNodeProperties of " + std::to_string(layout) + " bytes");
    Machine m = mi300x();
    m.config.nodePropertiesBytes = layout;
    use(m);
    std::string error;
    std::unique_ptr<SdmaQueueSet> set = create(3, error);
    ASSERT_TRUE(set) << error;
    std::vector<FakeHsaKmtCall> allocs = calls("hsaKmtAllocMemory");
    std::vector<FakeHsaKmtCall> maps = calls("hsaKmtMapMemoryToGPU");
    std::vector<FakeHsaKmtCall> creates = calls("hsaKmtCreateQueueExt");
    ASSERT_EQ(set->rings().size(), 7u);
    ASSERT_EQ(allocs.size(), 7u);
    ASSERT_EQ(maps.size(), 7u);
    ASSERT_EQ(creates.size(), 7u);
    size_t i = 0;
    for (uint32_t peer : {1, 2, 4, 5, 6, 7, 8}) {
      int engine = kMi300xEngine[2][peer - 1];
      const SdmaRingDesc *ring = set->ringFor(peer);
      ASSERT_EQ(ring, &set->rings()[i]) << "peer " << peer;
      EXPECT_EQ(ring->engine, engine) << "peer " << peer;
      EXPECT_EQ(ring->node, 3);
      EXPECT_EQ(ring->ringBytes, 65536u);
      // Ring: 64 KiB on node 3, pinned, host-visible, executable, uncached.
      EXPECT_EQ(allocs[i].args[0], 3u);
      EXPECT_EQ(allocs[i].args[1], 65536u);
      EXPECT_EQ(allocs[i].args[2], 0x31041u);
      EXPECT_EQ(allocs[i].out[0], ring->ring);
      EXPECT_EQ(maps[i].args[0], ring->ring);
      uint64_t expected[9] = {3,
                              kQueueTypeSdmaByEngId,
                              100,
                              3,
                              uint64_t(engine),
                              ring->ring,
                              65536,
                              0,
                              0};
      for (int a = 0; a < 9; ++a)
        EXPECT_EQ(creates[i].args[a], expected[a]) << "argument " << a;
      uint64_t readPtr, writePtr, doorbell;
      ASSERT_TRUE(
          fake.queue(creates[i].out[0], &readPtr, &writePtr, &doorbell));
      EXPECT_EQ(ring->readPtr, readPtr);
      EXPECT_EQ(ring->writePtr, writePtr);
      EXPECT_EQ(ring->doorbell, doorbell);
      ++i;
    }
    EXPECT_FALSE(set->ringFor(3)) << "no queue to itself";
    EXPECT_FALSE(set->ringFor(0)) << "the CPU is no peer";
    FakeHsaKmtLive live;
    fake.live(&live);
    EXPECT_EQ(live.kfdOpen, 1);
    EXPECT_EQ(live.queues, 7);
    size_t before = calls().size();
    ASSERT_TRUE(set->release(error)) << error;
    expectAllReleased();
    // Undone in reverse: per queue, last first: destroy, unmap, free.
    std::vector<FakeHsaKmtCall> after = calls();
    ASSERT_EQ(after.size(), before + 7 * 3 + 1);
    for (size_t q = 0; q < 7; ++q) {
      const FakeHsaKmtCall *step = &after[before + 3 * q];
      size_t k = 6 - q;
      EXPECT_STREQ(step[0].name, "hsaKmtDestroyQueue");
      EXPECT_EQ(step[0].args[0], creates[k].out[0]);
      EXPECT_STREQ(step[1].name, "hsaKmtUnmapMemoryToGPU");
      EXPECT_EQ(step[1].args[0], allocs[k].out[0]);
      EXPECT_STREQ(step[2].name, "hsaKmtFreeMemory");
      EXPECT_EQ(step[2].args[0], allocs[k].out[0]);
    }
    EXPECT_STREQ(after.back().name, "hsaKmtCloseKFD");
  }
}

TEST_F(FakeMachine, OldKfdIsRefused) {
  Machine m = mi300x();
  m.config.kfdMinor = 16;
  use(m);
  std::string error;
  EXPECT_FALSE(create(1, error));
  EXPECT_EQ(error, "GPU-initiated SDMA needs KFD interface >= 1.17 (SDMA "
                   "queues on a chosen engine, RecSdmaEngIdMask); this driver "
                   "reports 1.16");
  EXPECT_TRUE(calls("hsaKmtAllocMemory").empty());
  expectAllReleased();
}

TEST_F(FakeMachine, UnknownNodePropertiesLayoutIsRefused) {
  Machine m = mi300x();
  m.config.nodePropertiesBytes = 364;
  use(m);
  std::string error;
  EXPECT_FALSE(create(1, error));
  EXPECT_NE(error.find("wrote a 364-byte HsaNodeProperties for node 1; sdma "
                       "knows the layouts of 360 bytes"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("will not guess"), std::string::npos) << error;
  expectAllReleased();
}

TEST_F(FakeMachine, FailuresNameTheCallStatusNodeAndEngineAndUndoAll) {
  struct Case {
    int FakeHsaKmtConfig::*knob;
    int at;
    std::string error;
  } cases[] = {
      {&FakeHsaKmtConfig::failAllocAt, 3,
       "hsaKmtAllocMemory failed: HSAKMT_STATUS_NO_MEMORY (6) (node 1, "
       "engine 2, 65536-byte ring)"},
      {&FakeHsaKmtConfig::failMapAt, 1,
       "hsaKmtMapMemoryToGPU failed: HSAKMT_STATUS_ERROR (1) (node 1, "
       "engine 14, 65536-byte ring)"},
      {&FakeHsaKmtConfig::failCreateQueueAt, 2,
       "hsaKmtCreateQueueExt failed: HSAKMT_STATUS_ERROR (1) (node 1, "
       "engine 12, 65536-byte ring)"},
      {&FakeHsaKmtConfig::openStatus, 20,
       "hsaKmtOpenKFD failed: HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED (20): "
       "no usable KFD (/dev/kfd; is amdgpu loaded and this user in the "
       "render group?)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.error);
    Machine m = mi300x();
    m.config.*c.knob = c.at;
    use(m);
    std::string error;
    EXPECT_FALSE(create(1, error));
    EXPECT_EQ(error, c.error);
    expectAllReleased();
  }
}

TEST_F(FakeMachine, AFullEngineFailsTheSecondSetOnly) {
  Machine m = mi300x();
  for (FakeHsaKmtNode &node : m.nodes)
    node.queuesPerEngine = 1;
  use(m);
  std::string error;
  std::unique_ptr<SdmaQueueSet> first = create(2, error);
  ASSERT_TRUE(first) << error;
  std::unique_ptr<SdmaQueueSet> second =
      create(2, error, SdmaQueueOptions{4096, {5}});
  EXPECT_FALSE(second);
  EXPECT_EQ(error, "hsaKmtCreateQueueExt failed: HSAKMT_STATUS_ERROR (1) "
                   "(node 2, engine 8, 4096-byte ring)");
  FakeHsaKmtLive live;
  fake.live(&live);
  EXPECT_EQ(live.kfdOpen, 1) << "the first set keeps KFD open";
  EXPECT_EQ(live.queues, 7);
  first.reset();
  expectAllReleased();
}

TEST_F(FakeMachine, PartitionsGetGenericQueues) {
  // CPX: each partition owns engines 0-1 and no xGMI engine; the links
  // still name engines of the whole device.
  Machine m = machine(
      4, 2, 0, [](uint32_t, uint32_t dst) { return 1u << (4 + 2 * dst); });
  use(m);
  std::string error;
  std::unique_ptr<SdmaQueueSet> set = create(1, error);
  ASSERT_TRUE(set) << error;
  ASSERT_EQ(set->rings().size(), 1u);
  EXPECT_EQ(set->rings()[0].engine, -1);
  for (uint32_t peer : {2, 3, 4})
    EXPECT_EQ(set->ringFor(peer), &set->rings()[0]);
  std::vector<FakeHsaKmtCall> creates = calls("hsaKmtCreateQueueExt");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].args[1], kQueueTypeSdma);
  EXPECT_EQ(creates[0].args[4], 0u);
  set.reset();
  expectAllReleased();
  // DPX: xGMI engines 2-7 owned, engine 14 named: a generic xGMI queue.
  m = machine(4, 2, 6, [](uint32_t, uint32_t) { return 1u << 14; });
  use(m);
  set = create(1, error);
  ASSERT_TRUE(set) << error;
  ASSERT_EQ(set->rings().size(), 1u);
  creates = calls("hsaKmtCreateQueueExt");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].args[1], kQueueTypeSdmaXgmi);
  set.reset();
  expectAllReleased();
}

TEST_F(FakeMachine, WideMasksSpreadPeersAndShareQueues) {
  use(machine(4, 2, 2, [](uint32_t, uint32_t) { return 0xCu; }));
  std::string error;
  std::unique_ptr<SdmaQueueSet> set = create(4, error);
  ASSERT_TRUE(set) << error;
  ASSERT_EQ(set->rings().size(), 2u);
  EXPECT_EQ(set->ringFor(1)->engine, 2);
  EXPECT_EQ(set->ringFor(2)->engine, 3);
  EXPECT_EQ(set->ringFor(3), set->ringFor(1));
  FakeHsaKmtLive live;
  fake.live(&live);
  EXPECT_EQ(live.engine[2], 1);
  EXPECT_EQ(live.engine[3], 1);
}

TEST_F(FakeMachine, BadInputIsRefusedBeforeAnyQueue) {
  use(mi300x());
  std::string error;
  for (uint64_t bytes : {0ull, 1000ull, 2048ull, 12288ull, 1ull << 32}) {
    EXPECT_FALSE(create(1, error, SdmaQueueOptions{bytes, {}}));
    EXPECT_EQ(error, "SDMA ring size " + std::to_string(bytes) +
                         " bytes: must be a power of two from 4096 to "
                         "2147483648 (KFD's ring_size is 32-bit)");
  }
  EXPECT_TRUE(calls().empty()) << "checked before opening KFD";
  struct Case {
    uint32_t node;
    std::vector<uint32_t> peers;
    std::string error;
  } cases[] = {
      {0, {}, "node 0 is not a GPU (no compute cores)"},
      {42, {}, "node 42 does not exist (libhsakmt reports 9 nodes)"},
      {1, {2, 9}, "node 1 has no IO link to node 9"},
      {1, {1}, "peer 1 is node 1 itself: SDMA queues here are per peer GPU"},
  };
  for (const Case &c : cases) {
    EXPECT_FALSE(create(c.node, error, SdmaQueueOptions{65536, c.peers}));
    EXPECT_EQ(error, c.error);
    expectAllReleased();
  }
  EXPECT_TRUE(calls("hsaKmtAllocMemory").empty());
}

TEST_F(FakeMachine, PlanChoosesPeersWithoutCreatingQueues) {
  use(mi300x());
  SdmaQueuePlan plan;
  std::string error;
  ASSERT_TRUE(planSdmaQueues(*api, 8, {5, 3, 5}, plan, error)) << error;
  EXPECT_EQ(plan.info.numSdmaEngines, 2u);
  EXPECT_EQ(plan.info.numSdmaXgmiEngines, 14u);
  EXPECT_EQ(plan.info.numIoLinks, 8u);
  ASSERT_EQ(plan.routes.size(), 2u);
  EXPECT_EQ(plan.routes[0].peer, 3u);
  EXPECT_EQ(plan.routes[0].engine, kMi300xEngine[7][2]);
  EXPECT_EQ(plan.routes[1].peer, 5u);
  EXPECT_EQ(plan.routes[1].engine, kMi300xEngine[7][4]);
  EXPECT_EQ(plan.queueCount, 2u);
  EXPECT_TRUE(calls("hsaKmtAllocMemory").empty());
  expectAllReleased();
}

TEST_F(FakeMachine, ReleaseGoesOnPastAFailureAndReportsTheFirst) {
  Machine m = mi300x();
  m.config.failDestroyQueueAt = 2; // the second destroyed: peer 7's queue
  use(m);
  std::string error;
  std::unique_ptr<SdmaQueueSet> set = create(1, error);
  ASSERT_TRUE(set) << error;
  EXPECT_FALSE(set->release(error));
  EXPECT_EQ(error, "hsaKmtDestroyQueue failed: HSAKMT_STATUS_ERROR (1) (node "
                   "1, engine 10)");
  FakeHsaKmtLive live;
  fake.live(&live);
  EXPECT_EQ(live.queues, 1) << "the queue KFD would not destroy";
  EXPECT_EQ(live.allocations, 1) << "its ring, still in use, is kept";
  EXPECT_EQ(live.kfdOpen, 0);
  EXPECT_TRUE(set->release(error)) << "nothing left to release";
}

TEST_F(FakeMachine, AFailedCleanUpIsReportedWithTheFailure) {
  Machine m = mi300x();
  m.config.failCreateQueueAt = 2;
  m.config.failDestroyQueueAt = 1;
  use(m);
  std::string error;
  EXPECT_FALSE(create(1, error));
  EXPECT_EQ(error, "hsaKmtCreateQueueExt failed: HSAKMT_STATUS_ERROR (1) "
                   "(node 1, engine 12, 65536-byte ring); cleaning up: "
                   "hsaKmtDestroyQueue failed: HSAKMT_STATUS_ERROR (1) (node "
                   "1, engine 14)");
}

} // namespace
