//===- CommunicatorTest.cpp - ranks over shared memory; kernel cache ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ranks are threads of this process here, each with its own Communicator on
// the CPU device (its own heap segment and kernel instance), exactly as
// processes would be (test/runtime/comm-cpu.test and cpu-job.test run them
// as processes).
//
//===----------------------------------------------------------------------===//

#include "comm/Agreement.h"
#include "comm/ThreadJob.h"

#include "sdma/runtime/Communicator.h"
#include "sdma/runtime/LdstCpuExecutor.h"
#include "sdma/runtime/Simulator.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace sdma::rt;
using namespace sdma::rt::test;

namespace {
std::string planPath(const char *name) {
  return std::string(SDMA_RUNTIME_TEST_DIR) + "/plans/" + name;
}

} // namespace

TEST(LdstCpuCache, CompilesOnceThenLoads) {
  unsetenv("SDMA_HOST_OBJECT_DIR"); // this test's own cache directory
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

TEST(Communicator, ProgramOnRanksAsThreadsMatchesTheSimulator) {
  std::string error;
  std::optional<Plan> plan = Plan::load(planPath("ring.json"), error);
  ASSERT_TRUE(plan) << error;
  const size_t chunk = 256;
  HostMemory initial(*plan, chunk);
  fillInputs(*plan, initial);
  HostMemory reference = initial;
  ASSERT_TRUE(simulate(*plan, reference, {}, error)) << error;
  std::vector<uint64_t> differ(plan->ranks, 0);
  auto errors =
      job(plan->ranks, 1 << 20, [&](Communicator &comm, int r, Error &e) {
        Communicator::Schedule schedule;
        if (!comm.loadSchedule(planPath("ring.hip"), schedule, e))
          return false;
        std::vector<void *> buffers(plan->buffers.size());
        for (size_t b = 0; b < buffers.size(); ++b)
          if (!comm.memAlloc(initial.bufferBytes(r, b), buffers[b], e))
            return false;
        // Three runs: later ones are later epochs of the device-side counter.
        for (int run = 0; run < 3; ++run) {
          for (size_t b = 0; b < buffers.size(); ++b)
            std::memcpy(buffers[b], initial.buffer(r, b),
                        initial.bufferBytes(r, b));
          if (!comm.launch(schedule, buffers, chunk, nullptr, e))
            return false;
          for (size_t b = 0; b < buffers.size(); ++b)
            for (size_t i = 0; i < reference.bufferBytes(r, b); ++i)
              differ[r] += static_cast<uint8_t *>(buffers[b])[i] !=
                           reference.buffer(r, b)[i];
        }
        return true;
      });
  for (int r = 0; r < plan->ranks; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(differ[r], 0u) << "rank " << r;
  }
}

TEST(Communicator, HeapIsFirstFitAndCoalesces) {
  auto errors = job(2, 64 << 10, [](Communicator &comm, int, Error &e) {
    void *a, *b, *c, *d, *all;
    if (!comm.memAlloc(1000, a, e) || !comm.memAlloc(300, b, e))
      return false;
    // 256-byte granules, in order.
    if (static_cast<char *>(b) - static_cast<char *>(a) != 1024)
      return e.message = "b is not right after a", false;
    if (!comm.memFree(a, e) || !comm.memAlloc(200, c, e))
      return false;
    if (c != a)
      return e.message = "the freed block was not reused first", false;
    if (!comm.memFree(c, e) || !comm.memFree(b, e))
      return false;
    // Everything free again, one block: the whole heap fits.
    if (!comm.memAlloc(64 << 10, all, e))
      return false;
    if (all != a)
      return e.message = "the free blocks did not coalesce", false;
    if (comm.memAlloc(1, d, e))
      return e.message = "allocated beyond the heap", false;
    if (e.message.find(
            "the symmetric heap cannot hold 1 more bytes (0 of 65536 "
            "free") == std::string::npos)
      return false;
    e = Error();
    return comm.memFree(all, e);
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

TEST(Communicator, DisagreeingAllocationsFailOnEveryRank) {
  auto errors = job(3, 64 << 10, [](Communicator &comm, int r, Error &e) {
    void *p;
    return comm.memAlloc(r == 1 ? 512 : 256, p, e);
  });
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(errors[r].find("the symmetric allocation differs between "
                             "ranks"),
              std::string::npos)
        << errors[r];
}

/// Ranks sharing one GPU context co-launch in one room (CoLaunch.h), which
/// takes one mode: ranks that set it differently, or one that co-launches
/// beside one that does not, are refused when they join, naming both.
TEST(Communicator, RanksSharingAContextThatCoLaunchDifferentlyAreRefused) {
  auto none = [](Communicator &, int, Error &) { return true; };
  auto modes = job(2, 64 << 10, none, [](CommOptions &o, int r) {
    o.coLaunch = 1;
    o.coLaunchMode = r == 1 ? "ordered" : "together";
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(modes[r].find("SDMA_COLAUNCH_MODE=ordered"), std::string::npos)
        << modes[r];
    EXPECT_NE(modes[r].find("SDMA_COLAUNCH_MODE=together"), std::string::npos)
        << modes[r];
    EXPECT_NE(modes[r].find("must co-launch alike"), std::string::npos)
        << modes[r];
  }
  auto onOff = job(3, 64 << 10, none,
                   [](CommOptions &o, int r) { o.coLaunch = r == 2 ? 1 : 0; });
  // Every rank is told, the same (rank 1, beside rank 0 and alike, too).
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(
        onOff[r].find(
            "rank 2 has SDMA_COLAUNCH=1 SDMA_COLAUNCH_MODE=together and rank 0 "
            "SDMA_COLAUNCH=0: ranks that share a GPU context "
            "must co-launch alike"),
        std::string::npos)
        << onOff[r];
  // Alike: joined.
  auto alike = job(2, 64 << 10, none, [](CommOptions &o, int) {
    o.coLaunch = 1;
    o.coLaunchMode = "ordered";
  });
  EXPECT_EQ(alike, std::vector<std::string>(2, ""));
}

/// A fork while another thread draws or reads the token: the child's copy
/// of the token's lock is free (before, a child forked while it was held
/// waited for ever on its first call). A child gives up after 2 s.
TEST(Communicator, AForkWhileAnotherThreadReadsTheTokenLeavesItUsable) {
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed))
      (void)processToken();
  });
  int hung = 0, status = 0;
  for (int i = 0; i < 40 && !hung; ++i) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      alarm(2);
      std::string token = processToken();
      _exit(token.rfind(std::to_string(getpid()) + ".", 0) == 0 ? 0 : 1);
    }
    waitpid(child, &status, 0);
    hung += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  done = true;
  reader.join();
  EXPECT_EQ(hung, 0) << "a child hung or drew a wrong token (wait status "
                     << status << ")";
}

/// Ranks share a GPU context where they share a process: a process is
/// told by its token, which a forked child draws again (it inherits the
/// parent's memory, so a token drawn once would make it the parent).
TEST(Communicator, AForkedChildIsAnotherProcess) {
  const std::string parent = processToken();
  EXPECT_EQ(processToken(), parent);
  int pipeEnds[2];
  ASSERT_EQ(pipe(pipeEnds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string token = processToken();
    ssize_t ignored = write(pipeEnds[1], token.data(), token.size());
    (void)ignored;
    _exit(0);
  }
  close(pipeEnds[1]);
  char text[64] = {};
  ssize_t n = read(pipeEnds[0], text, sizeof(text) - 1);
  close(pipeEnds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_GT(n, 0);
  EXPECT_NE(std::string(text, size_t(n)), parent);
  EXPECT_EQ(std::string(text, size_t(n)).rfind(std::to_string(child) + ".", 0),
            0u)
      << text;
}

/// A first call meets the other ranks on the host (the call's agreement):
/// an abort from another thread ends that wait at once, not at the
/// timeout, and the rank that was left sees this one leave.
TEST(Communicator, AnAbortEndsAHostExchangeInFlight) {
  std::atomic<Communicator *> first{nullptr};
  std::atomic<bool> returned{false}, aborted{false};
  double seconds = 0;
  auto errors = job(
      2, 64 << 10,
      [&](Communicator &comm, int r, Error &e) {
        void *in = nullptr, *out = nullptr;
        if (!comm.memAlloc(64, in, e) || !comm.memAlloc(128, out, e))
          return false;
        if (r == 1) {
          // Never calls: rank 0's call waits for it, until aborted.
          while (!first.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          Error ignored;
          first.load()->abort(ignored);
          aborted = true;
          // Stays until rank 0's call has returned (leaving would end it).
          while (!returned.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return true;
        }
        first = &comm;
        auto began = std::chrono::steady_clock::now();
        bool ok = comm.collective(CommOp::AllGather, in, out, 64,
                                  DataType::Uint8, 0, nullptr, e);
        seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - began)
                      .count();
        returned = true;
        // Its communicator goes when this returns: not while rank 1 is
        // still inside abort() on it.
        while (!aborted.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return ok;
      },
      [](CommOptions &o, int) { o.timeoutMs = 20000; });
  EXPECT_NE(
      errors[0].find(
          "aborted (ncclCommAbort / sdmaCommAbort): its host exchanges end"),
      std::string::npos)
      << errors[0];
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(errors[1], "");
}

/// Two ranks; with `shared`, they first make a shared call (buffers of
/// their own, on the barrier path: the call exchanges where they are,
/// ExchangeBoard). Then rank 1 runs `rankOne` and, with `keep`, holds its
/// communicator until rank 0's next call (a shared one, else its first,
/// which meets the ranks on the host) has returned (else it goes). Each
/// rank's error, and the seconds rank 0's call took; true where a runtime
/// built alone has no schedule compiler for the built-in call.
static bool afterRankOne(const std::function<void(Communicator &)> &rankOne,
                         bool keep, bool shared,
                         std::vector<std::string> &errors, double &seconds) {
  std::atomic<bool> ready{false}, done{false};
  errors = job(
      2, 64 << 10,
      [&](Communicator &comm, int r, Error &e) {
        std::vector<uint8_t> in(64, uint8_t(r)), out(128);
        if (shared && !comm.collective(CommOp::AllGather, in.data(), out.data(),
                                       64, DataType::Uint8, 0, nullptr, e))
          return false;
        if (r == 1) {
          rankOne(comm);
          ready = true;
          while (keep && !done.load())
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return true;
        }
        while (!ready.load())
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto began = std::chrono::steady_clock::now();
        bool ok = comm.collective(CommOp::AllGather, in.data(), out.data(), 64,
                                  DataType::Uint8, 0, nullptr, e);
        seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - began)
                      .count();
        done = true;
        return ok ? e.fail(ErrorKind::Internal, "rank 0's call ran") : false;
      },
      [shared](CommOptions &o, int) {
        o.timeoutMs = 20000;
        if (shared) {
          o.sharedBytes = 1;     // any size
          o.lowLatencyBytes = 0; // the barrier path: buffers are exchanged
        }
      });
  for (const std::string &e : errors)
    if (e.find("no compiler:") != std::string::npos)
      return true;
  return false;
}

/// A rank aborts between calls (no host exchange in flight) and keeps its
/// communicator: the other's next first call, which meets the ranks on the
/// host, fails at once naming it (before, it waited until that rank
/// destroyed its communicator, or the timeout).
TEST(Communicator, AnAbortBetweenCallsIsNamedAtThePeersNextExchange) {
  std::vector<std::string> errors;
  double seconds = 0;
  auto abort = [](Communicator &comm) {
    Error ignored;
    comm.abort(ignored);
  };
  if (afterRankOne(abort, /*keep=*/true, /*shared=*/false, errors, seconds))
    GTEST_SKIP() << errors[0];
  EXPECT_NE(errors[0].find("rank 1 left the job (its communicator was "
                           "destroyed or aborted)"),
            std::string::npos)
      << errors[0];
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(errors[1], "");
}

// A peer waiting in a shared call's buffer exchange on a rank whose
// communicator was aborted learns of it at once, by name.
TEST(Communicator, AnAbortIsNamedToAPeerInASharedCallsExchange) {
  std::vector<std::string> errors;
  double seconds = 0;
  auto abort = [](Communicator &comm) {
    Error ignored;
    comm.abort(ignored);
  };
  if (afterRankOne(abort, /*keep=*/true, /*shared=*/true, errors, seconds))
    GTEST_SKIP() << errors[0];
  EXPECT_NE(errors[0].find("rank 1 aborted its communicator (ncclCommAbort / "
                           "sdmaCommAbort): the buffer exchange of a shared "
                           "call ends"),
            std::string::npos)
      << errors[0];
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(errors[1], "");
}

// A peer waiting in a shared call's buffer exchange on a rank that
// destroys its communicator learns of it at once (the rank marks its board
// before its leaving exchange, which the peer never joins).
TEST(Communicator, ADestroyedRankIsNamedToAPeerInASharedCallsExchange) {
  std::vector<std::string> errors;
  double seconds = 0;
  if (afterRankOne([](Communicator &) {}, /*keep=*/false, /*shared=*/true,
                   errors, seconds))
    GTEST_SKIP() << errors[0];
  EXPECT_NE(errors[0].find("rank 1 destroyed its communicator"),
            std::string::npos)
      << errors[0];
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(errors[1], "");
}

TEST(Communicator, ArgumentsAreCheckedBeforeAnythingRuns) {
  auto errors = job(4, 64 << 10, [](Communicator &comm, int, Error &e) {
    void *in, *out;
    if (!comm.memAlloc(64, in, e) || !comm.memAlloc(1024, out, e))
      return false;
    Error why;
    if (comm.collective(CommOp::Broadcast, in, out, 4, DataType::Int8, 4,
                        nullptr, why) ||
        why.message != "root 4 is not a rank (0..3)" ||
        why.kind != ErrorKind::InvalidArgument)
      return e.message = "root: " + why.message, false;
    if (comm.collective(CommOp::AllGather, in, out, 4,
                        static_cast<DataType>(12), 0, nullptr, why) ||
        why.message != "invalid data type 12")
      return e.message = "type: " + why.message, false;
    // The ring program's buffers are 1 and 4 chunks: a 300-byte chunk runs
    // past the 256-byte allocation of `in`.
    Communicator::Schedule ring;
    if (!comm.loadSchedule(planPath("ring.hip"), ring, e))
      return false;
    if (comm.launch(ring, {in, out}, 300, nullptr, why) ||
        why.message.find("buffer 'input' (300 bytes at ") != 0 ||
        why.message.find(
            "runs past the end of its 256-byte symmetric allocation") ==
            std::string::npos)
      return e.message = "bounds: " + why.message, false;
    int other = 0;
    if (comm.launch(ring, {in, &other}, 4, nullptr, why) ||
        why.message.find("is not symmetric memory") == std::string::npos)
      return e.message = "not symmetric: " + why.message, false;
    return true;
  });
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
}
