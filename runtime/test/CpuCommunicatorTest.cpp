//===- CpuCommunicatorTest.cpp - ranks over shared memory; kernel cache ---===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ranks are threads of this process here, each with its own communicator,
// segment and kernel instance, exactly as processes would be (sdma-cpu-job
// and test/runtime/cpu-job.test run them as processes).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CpuCommunicator.h"
#include "sdma/runtime/Simulator.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace sdma::rt;

namespace {
std::string planPath(const char *name) {
  return std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/" + name;
}

/// A temporary directory, removed at the end of the test.
struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/sdma-cpucomm-test-XXXXXX";
    path = mkdtemp(pattern) ? pattern : "";
  }
  ~TempDir() {
    std::string command = "rm -rf '" + path + "'";
    (void)std::system(command.c_str());
  }
  std::string path;
};
} // namespace

TEST(LdstCpuCache, CompilesOnceThenLoads) {
  std::string error;
  std::optional<LdstProgram> program =
      LdstProgram::load(planPath("ring.hip"), error);
  ASSERT_TRUE(program) << error;
  TempDir dir;
  // A compiler that counts its runs.
  std::string counter = dir.path + "/runs", wrapper = dir.path + "/cxx";
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\necho run >> '" << counter << "'\nexec c++ \"$@\"\n";
  }
  chmod(wrapper.c_str(), 0755);
  LdstCpuOptions options;
  options.compiler = wrapper;
  options.cacheDirectory = dir.path;
  ASSERT_TRUE(LdstCpuExecutor::create(*program, options, error)) << error;
  ASSERT_TRUE(LdstCpuExecutor::create(*program, options, error)) << error;
  std::ifstream runs(counter);
  std::string text((std::istreambuf_iterator<char>(runs)), {});
  EXPECT_EQ(text, "run\n"); // the second executor came from the cache
  // Without a cache directory, every executor compiles.
  options.cacheDirectory.clear();
  ASSERT_TRUE(LdstCpuExecutor::create(*program, options, error)) << error;
  std::ifstream again(counter);
  std::string twice((std::istreambuf_iterator<char>(again)), {});
  EXPECT_EQ(twice, "run\nrun\n");
}

TEST(CpuCommunicator, RanksAsThreadsMatchTheSimulator) {
  std::string error;
  std::optional<Plan> plan = Plan::load(planPath("ring.json"), error);
  std::optional<LdstProgram> program =
      LdstProgram::load(planPath("ring.hip"), error);
  ASSERT_TRUE(plan && program) << error;
  UniqueId id;
  ASSERT_TRUE(createUniqueId(id, error)) << error;
  TempDir cache;
  const size_t chunk = 256;
  HostMemory initial(*plan, chunk);
  fillInputs(*plan, initial);
  HostMemory reference = initial;
  ASSERT_TRUE(simulate(*plan, reference, {}, error)) << error;
  int ranks = plan->ranks;
  std::vector<std::string> errors(ranks);
  std::vector<uint64_t> differ(ranks, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      CpuCommunicator::Options options;
      options.maxChunkBytes = chunk;
      options.cpu.threads = 2;
      options.cpu.cacheDirectory = cache.path;
      std::string e;
      auto comm = CpuCommunicator::create(id, r, ranks, *program, options, e);
      for (int run = 0; comm && run < 3; ++run) {
        for (size_t b = 0; b < plan->buffers.size(); ++b)
          std::memcpy(comm->buffer(b), initial.buffer(r, b),
                      initial.bufferBytes(r, b));
        if (!comm->bootstrap().barrier(e) || !comm->run(chunk, e) ||
            !comm->bootstrap().barrier(e))
          break;
        for (size_t b = 0; b < plan->buffers.size(); ++b)
          for (size_t i = 0; i < reference.bufferBytes(r, b); ++i)
            differ[r] += comm->buffer(b)[i] != reference.buffer(r, b)[i];
      }
      errors[r] = comm ? e : "create: " + e;
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(differ[r], 0u) << "rank " << r;
  }
}

TEST(CpuCommunicator, ChunkBeyondTheBuffersIsRefused) {
  std::string error;
  std::optional<LdstProgram> program =
      LdstProgram::load(planPath("ring.hip"), error);
  ASSERT_TRUE(program) << error;
  UniqueId id;
  ASSERT_TRUE(createUniqueId(id, error));
  TempDir cache;
  std::vector<std::unique_ptr<CpuCommunicator>> comms(program->ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < program->ranks; ++r)
    threads.emplace_back([&, r] {
      CpuCommunicator::Options options;
      options.maxChunkBytes = 64;
      options.cpu.cacheDirectory = cache.path;
      std::string e;
      comms[r] =
          CpuCommunicator::create(id, r, program->ranks, *program, options, e);
    });
  for (std::thread &t : threads)
    t.join();
  ASSERT_TRUE(comms[0]);
  EXPECT_FALSE(comms[0]->run(65, error));
  EXPECT_EQ(error, "chunk of 65 bytes: the buffers hold chunks of 1..64");
}
