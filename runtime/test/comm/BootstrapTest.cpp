//===- BootstrapTest.cpp - ranks meet, gather, and fail by name -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Ranks are threads here (the protocol is the same between processes; the
// multi-process CPU device runs it across processes).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Bootstrap.h"
#include "sdma/runtime/Limits.h"

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace sdma::rt;

namespace {
/// Runs `body(rank)` for each of `ranks` ranks on its own thread; the error
/// each rank ended with ("" if none).
std::vector<std::string>
runRanks(int ranks, const std::function<bool(int, Error &)> &body) {
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      Error error;
      if (!body(r, error))
        errors[r] = error.empty() ? "failed" : error.message;
    });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

UniqueId makeId() {
  UniqueId id;
  Error error;
  EXPECT_TRUE(createUniqueId(id, error)) << error.message;
  return id;
}

/// The wire, as Bootstrap.cpp's banner has it.
struct Header {
  uint32_t magic, type, a, b;
  uint64_t length;
};
constexpr uint32_t kMagic = 0x53444d41, kHello = 1, kWelcome = 2;

/// The root's address, from the id's bytes 4-9.
sockaddr_in rootOf(const UniqueId &id) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  std::memcpy(&sin.sin_addr.s_addr, id.bytes + 4, 4);
  std::memcpy(&sin.sin_port, id.bytes + 8, 2);
  return sin;
}

/// A connection to the root of `id` that has sent nothing.
int connectTo(const UniqueId &id) {
  sockaddr_in sin = rootOf(id);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)), 0)
      << std::strerror(errno);
  return fd;
}

/// True if the peer closes `fd` within `ms` (what it sent before is read
/// and dropped).
bool closedWithin(int fd, int ms) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 50) > 0) {
      ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0)
        return true;
    }
  }
  return false;
}

long maxRssKiB() {
  rusage usage;
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}
} // namespace

TEST(Bootstrap, AllGatherAndBarrierAtEveryRankCount) {
  for (int ranks : {1, 2, 3, 4, 8}) {
    UniqueId id = makeId();
    std::vector<std::string> errors =
        runRanks(ranks, [&](int rank, Error &error) {
          auto boot = Bootstrap::connect(id, rank, ranks, 5000, error);
          if (!boot)
            return false;
          for (int round = 0; round < 3; ++round) {
            std::vector<std::string> all;
            std::string mine = "r" + std::to_string(rank) + "/" +
                               std::to_string(round) + std::string(7, 'x');
            mine.resize(12);
            if (!boot->allGather(mine, all, error))
              return false;
            for (int r = 0; r < ranks; ++r) {
              std::string want = "r" + std::to_string(r) + "/" +
                                 std::to_string(round) + std::string(7, 'x');
              want.resize(12);
              if (all[r] != want) {
                error.message =
                    "rank " + std::to_string(r) + "'s blob is wrong";
                return false;
              }
            }
            if (!boot->barrier(error))
              return false;
          }
          return true;
        });
    for (int r = 0; r < ranks; ++r)
      EXPECT_EQ(errors[r], "") << ranks << " ranks, rank " << r;
  }
}

TEST(Bootstrap, AMissingRankIsNamedOnEveryRank) {
  UniqueId id = makeId();
  std::vector<std::string> errors = runRanks(3, [&](int rank, Error &error) {
    if (rank == 1)
      return true; // never arrives
    return Bootstrap::connect(id, rank, 3, 300, error) != nullptr;
  });
  for (int r : {0, 2})
    EXPECT_NE(errors[r].find("rank 1 did not arrive within 300 ms"),
              std::string::npos)
        << errors[r];
}

TEST(Bootstrap, AForeignIdIsRefused) {
  UniqueId id = makeId();
  UniqueId forged = id;
  forged.bytes[20] ^= 1; // the secret differs, the address is the same
  Error error;
  EXPECT_FALSE(Bootstrap::connect(forged, 0, 1, 1000, error));
  EXPECT_NE(error.message.find("refused"), std::string::npos) << error.message;
  EXPECT_EQ(error.kind, ErrorKind::Remote);
  // The job itself still runs.
  auto boot = Bootstrap::connect(id, 0, 1, 1000, error);
  ASSERT_TRUE(boot) << error.message;
  EXPECT_TRUE(boot->barrier(error)) << error.message;
  UniqueId garbage;
  std::memset(garbage.bytes, 7, sizeof(garbage.bytes));
  EXPECT_FALSE(Bootstrap::connect(garbage, 0, 1, 1000, error));
  EXPECT_EQ(error.message.rfind("bootstrap: not an sdma unique id", 0), 0u)
      << error.message;
  EXPECT_EQ(error.kind, ErrorKind::InvalidArgument);
}

TEST(Bootstrap, DisagreeingRankCountsAndDuplicatesFailTheJob) {
  UniqueId id = makeId();
  Error error0, error1;
  std::thread first([&] { Bootstrap::connect(id, 0, 2, 2000, error0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Bootstrap::connect(id, 1, 3, 2000, error1));
  first.join();
  EXPECT_NE(error1.message.find(
                "rank 1 says the job has 3 ranks, earlier ranks said 2"),
            std::string::npos)
      << error1.message;
  EXPECT_NE(error0.message.find("says the job has 3 ranks"), std::string::npos)
      << error0.message;

  UniqueId id2 = makeId();
  std::thread again([&] { Bootstrap::connect(id2, 0, 2, 2000, error0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Bootstrap::connect(id2, 0, 2, 2000, error1));
  again.join();
  EXPECT_NE(error1.message.find("rank 0 joined twice"), std::string::npos)
      << error1.message;
}

TEST(Bootstrap, ARankThatLeavesOrGathersTheWrongSizeIsNamed) {
  UniqueId id = makeId();
  std::vector<std::string> errors = runRanks(3, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id, rank, 3, 2000, error);
    if (!boot)
      return false;
    if (rank == 2)
      return true; // leaves (its connection closes)
    std::vector<std::string> all;
    return boot->allGather("abcd", all, error);
  });
  EXPECT_EQ(errors[2], "");
  for (int r : {0, 1})
    EXPECT_NE(errors[r].find("rank 2 left the job"), std::string::npos)
        << errors[r];

  UniqueId id2 = makeId();
  errors = runRanks(2, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id2, rank, 2, 2000, error);
    std::vector<std::string> all;
    return boot && boot->allGather(std::string(rank ? 4 : 8, 'z'), all, error);
  });
  for (int r : {0, 1})
    EXPECT_NE(errors[r].find("all-gather: rank 1 gave 4 bytes, rank 0 gave 8"),
              std::string::npos)
        << errors[r];
}

TEST(Bootstrap, ARankThatNeverReachesTheAllGatherIsNamed) {
  UniqueId id = makeId();
  std::vector<std::string> errors = runRanks(2, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id, rank, 2, 300, error);
    if (!boot)
      return false;
    if (rank == 1) { // busy elsewhere, longer than the timeout
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return true;
    }
    std::vector<std::string> all;
    return boot->allGather("x", all, error);
  });
  EXPECT_NE(errors[0].find("rank 1 did not reach the all-gather within 300 ms"),
            std::string::npos)
      << errors[0];
}

// A fake root (a listener of the test's) welcomes a rank with a header that
// claims 1 GiB: the rank refuses it by name before allocating anything.
TEST(Bootstrap, AFakeRootsHugeHeaderIsRefusedWithoutAllocating) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(sin);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)),
            0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(
      ::getsockname(listener, reinterpret_cast<sockaddr *>(&sin), &length), 0);
  UniqueId id = makeId(); // a real id's magic and secret, the fake's port
  std::memcpy(id.bytes + 8, &sin.sin_port, 2);
  uint64_t claimed = uint64_t(1) << 30;
  std::thread fake([&] {
    int fd = ::accept(listener, nullptr, nullptr);
    char hello[sizeof(Header) + 24];
    size_t got = 0;
    while (got < sizeof(hello)) {
      ssize_t n = ::recv(fd, hello + got, sizeof(hello) - got, 0);
      if (n <= 0)
        break;
      got += n;
    }
    Header h{kMagic, kWelcome, 0, 0, claimed};
    ::send(fd, &h, sizeof(h), MSG_NOSIGNAL);
    closedWithin(fd, 5000); // the rank hangs up; nothing else is sent
    ::close(fd);
  });
  long before = maxRssKiB();
  auto start = std::chrono::steady_clock::now();
  Error error;
  EXPECT_FALSE(Bootstrap::connect(id, 0, 2, 3000, error));
  auto took = std::chrono::steady_clock::now() - start;
  fake.join();
  ::close(listener);
  EXPECT_EQ(error.kind, ErrorKind::Remote);
  std::string root = "127.0.0.1:" + std::to_string(ntohs(sin.sin_port));
  EXPECT_NE(error.message.find("the job's root at " + root +
                               " sent a message of 1073741824 bytes"),
            std::string::npos)
      << error.message;
  EXPECT_NE(error.message.find("refused"), std::string::npos) << error.message;
  // At once, not after the timeout, and with no 1 GiB resident on the way.
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_LT(maxRssKiB() - before, 256 * 1024) << "KiB more at peak";
  EXPECT_GE(Bootstrap::maxMessageBytes(sdma::kMaxRanks), 65536u * 256);
  EXPECT_LT(Bootstrap::maxMessageBytes(sdma::kMaxRanks), claimed);
}

// A fake client's hello claiming 1 GiB is dropped by the root; the job
// still forms.
TEST(Bootstrap, AFakeClientsHugeHeaderIsDroppedAndTheJobForms) {
  UniqueId id = makeId();
  int fake = connectTo(id);
  Header h{kMagic, kHello, 0, 2, uint64_t(1) << 30};
  ASSERT_EQ(::send(fake, &h, sizeof(h), MSG_NOSIGNAL), ssize_t(sizeof(h)));
  long before = maxRssKiB();
  EXPECT_TRUE(closedWithin(fake, 1000));
  ::close(fake);
  std::vector<std::string> errors = runRanks(2, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id, rank, 2, 3000, error);
    return boot && boot->barrier(error);
  });
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
  EXPECT_LT(maxRssKiB() - before, 256 * 1024) << "KiB more at peak";
}

// Eight connections that never say hello, opened before the ranks: the
// ranks are admitted at once, and the idle ones are dropped after the
// hello deadline.
TEST(Bootstrap, IdleConnectionsNeitherHoldUpNorFailTheJob) {
  UniqueId id = makeId();
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i)
    idle.push_back(connectTo(id));
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = runRanks(4, [&](int rank, Error &error) {
    auto boot = Bootstrap::connect(id, rank, 4, 2000, error);
    return boot && boot->barrier(error);
  });
  auto took = std::chrono::steady_clock::now() - start;
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
  EXPECT_LT(took, std::chrono::milliseconds(Bootstrap::kHelloMs));
  for (int fd : idle) {
    EXPECT_TRUE(closedWithin(fd, Bootstrap::kHelloMs + 1000));
    ::close(fd);
  }

  // With no rank coming, an idle connection is still dropped in time.
  UniqueId quiet = makeId();
  int fd = connectTo(quiet);
  start = std::chrono::steady_clock::now();
  EXPECT_TRUE(closedWithin(fd, Bootstrap::kHelloMs + 1000));
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(Bootstrap::kHelloMs / 2));
  ::close(fd);
}

// A hello with a wrong secret in the middle of the join is refused and
// dropped; the job forms.
TEST(Bootstrap, ABadSecretIsDroppedAndTheJobStillForms) {
  UniqueId id = makeId();
  UniqueId forged = id;
  forged.bytes[12] ^= 1;    // the secret; the root's address is the same
  int idle = connectTo(id); // and one that says nothing, first
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors = runRanks(3, [&](int rank, Error &error) {
    if (rank == 2) { // the foreigner, between the ranks
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      Error foreign;
      if (Bootstrap::connect(forged, 1, 2, 2000, foreign) ||
          foreign.message.find("refused: not a hello with this job's "
                               "unique id") == std::string::npos) {
        error.message = "the forged hello was not refused: " + foreign.message;
        return false;
      }
      return true;
    }
    if (rank == 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto boot = Bootstrap::connect(id, rank, 2, 2000, error);
    return boot && boot->barrier(error);
  });
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(errors[r], "") << "rank " << r;
  // Neither the silent connection nor the foreign one held anyone up.
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(Bootstrap::kHelloMs));
  ::close(idle);
}

// A blob beyond the bound is this rank's argument error, sent nowhere; a
// rank count beyond sdma::kMaxRanks is refused before connecting.
TEST(Bootstrap, BlobsAndRankCountsAreBounded) {
  UniqueId id = makeId();
  Error error;
  auto boot = Bootstrap::connect(id, 0, 1, 2000, error);
  ASSERT_TRUE(boot) << error.message;
  std::vector<std::string> all;
  EXPECT_FALSE(boot->allGather(std::string(Bootstrap::kMaxBlobBytes + 1, 'x'),
                               all, error));
  EXPECT_EQ(error.kind, ErrorKind::InvalidArgument);
  EXPECT_NE(error.message.find("an all-gather of 257 bytes; the most is 256"),
            std::string::npos)
      << error.message;
  EXPECT_TRUE(
      boot->allGather(std::string(Bootstrap::kMaxBlobBytes, 'x'), all, error))
      << error.message;
  EXPECT_FALSE(
      Bootstrap::connect(makeId(), 0, sdma::kMaxRanks + 1, 100, error));
  EXPECT_EQ(error.kind, ErrorKind::InvalidArgument);
}
