//===- ExchangeBoard.cpp - a fast all-gather among a node's ranks ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/ExchangeBoard.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace sdma::rt;

namespace {
/// A slot: the exchange number it holds (0: none yet; or a mark, a
/// number no exchange reaches), then the message.
constexpr size_t kSlotHeader = 64;
/// The marks: its rank aborted (both slots), failed an exchange (that
/// exchange's slot), or destroyed its communicator (the next exchange's
/// slot, which every peer has read).
constexpr uint64_t kAbandoned = ~uint64_t(0);
constexpr uint64_t kFailed = ~uint64_t(1);
constexpr uint64_t kLeft = ~uint64_t(2);

/// What a mark says of rank `r`, or "" for an exchange number.
std::string marked(uint64_t number, int r) {
  std::string rank = "rank " + std::to_string(r);
  if (number == kAbandoned)
    return rank + " aborted its communicator (ncclCommAbort / "
                  "sdmaCommAbort): the buffer exchange of a shared call ends";
  if (number == kFailed)
    return rank + " failed a buffer exchange of a shared call (a rank it "
                  "waited for did not come in time, or aborted): the "
                  "exchanges end";
  if (number == kLeft)
    return rank + " destroyed its communicator: the buffer exchange of a "
                  "shared call ends";
  return "";
}
constexpr size_t kSlotBytes = kSlotHeader + kExchangeBytes;

std::atomic<uint64_t> &numberAt(char *slot) {
  static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) &&
                    std::atomic<uint64_t>::is_always_lock_free,
                "a slot's number is a lock-free word in shared memory");
  return *reinterpret_cast<std::atomic<uint64_t> *>(slot);
}
} // namespace

ExchangeBoard::~ExchangeBoard() {
  leave();
  if (base_)
    munmap(base_, bytes_);
}

void ExchangeBoard::leave() {
  // A peer waiting for this rank's next exchange learns it will not come
  // (a failed or aborted rank's marks say so already).
  if (base_ && state_ == State::Mapped && failed_.empty() && !abandoned_.load())
    numberAt(base_ +
             (size_t(agreement_.rank()) * 2 + ((count_ + 1) & 1)) * kSlotBytes)
        .store(kLeft, std::memory_order_release);
}

bool ExchangeBoard::map(Error &error) {
  const int rank = agreement_.rank(), ranks = agreement_.ranks();
  bytes_ = size_t(ranks) * 2 * kSlotBytes;
  std::string name, why;
  if (rank == 0) {
    std::random_device random;
    name = "/sdma-board-" + std::to_string(getpid()) + "-" +
           std::to_string((uint64_t(random()) << 32) ^ random());
    int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, off_t(bytes_)) != 0)
      why = "cannot make " + name + ": " + std::strerror(errno);
    if (fd >= 0) {
      if (why.empty()) {
        void *p =
            mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
          why = "cannot map " + name + ": " + std::strerror(errno);
        else
          base_ = static_cast<char *>(p);
      }
      close(fd);
    }
    if (!why.empty())
      shm_unlink(name.c_str());
  }
  // The name (rank 0), then every rank's verdict; the name goes after.
  // Whatever happens next, the name goes and a failed step unmaps.
  auto fail = [&] {
    if (rank == 0 && !name.empty())
      shm_unlink(name.c_str());
    if (base_)
      munmap(base_, bytes_);
    base_ = nullptr;
    return false;
  };
  std::vector<std::string> all;
  if (!agreement_.allGather(rank == 0 && why.empty() ? name : "", all, error))
    return fail();
  std::string theirs = all[0].substr(0, all[0].find('\0'));
  if (rank != 0 && !theirs.empty()) {
    int fd = shm_open(theirs.c_str(), O_RDWR, 0);
    void *p = fd < 0 ? MAP_FAILED
                     : mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED,
                            fd, 0);
    if (fd >= 0)
      close(fd);
    if (p == MAP_FAILED)
      why = "cannot map " + theirs + ": " + std::strerror(errno);
    else
      base_ = static_cast<char *>(p);
  }
  if (theirs.empty() && why.empty())
    why = "rank 0 made no segment";
  if (!agreement_.allGather(why.empty() ? "ok" : why, all, error))
    return fail();
  if (rank == 0 && !name.empty())
    shm_unlink(name.c_str());
  bool everyone = true;
  for (const std::string &verdict : all)
    everyone &= verdict.compare(0, 3, std::string("ok\0", 3)) == 0;
  if (!everyone && base_) {
    munmap(base_, bytes_);
    base_ = nullptr;
  }
  state_ = everyone ? State::Mapped : State::Bootstrap;
  if (everyone) {
    for (int i = 0; i < 2; ++i)
      ownNumbers_[i].store(
          &numberAt(base_ + (size_t(rank) * 2 + i) * kSlotBytes));
    // An abort while the segment was being made found no slots: its mark
    // goes now (sequentially consistent on both sides, so one of the two
    // writes it).
    if (abandoned_.load())
      abandon();
  }
  return true;
}

void ExchangeBoard::abandon() {
  abandoned_.store(true);
  for (auto &own : ownNumbers_)
    if (std::atomic<uint64_t> *number = own.load())
      number->store(kAbandoned);
}

bool ExchangeBoard::aborted(Error &error) {
  if (!agreement_.interrupted(failed_))
    failed_.fail(ErrorKind::InvalidUsage,
                 "the communicator was aborted: its exchanges end");
  error = failed_;
  return false;
}

bool ExchangeBoard::allGather(const std::string &mine,
                              std::vector<std::string> &all, Error &error) {
  if (!failed_.empty()) {
    error = failed_;
    return false;
  }
  if (state_ == State::Unknown && !map(error))
    return false;
  if (state_ == State::Bootstrap)
    return agreement_.allGather(mine, all, error);
  const int rank = agreement_.rank(), ranks = agreement_.ranks();
  const uint64_t n = ++count_;
  auto slot = [&](int r, uint64_t k) {
    return base_ + (size_t(r) * 2 + (k & 1)) * kSlotBytes;
  };
  char *own = slot(rank, n);
  // Aborted (by another thread, before or now): nothing is published over
  // the abort's mark.
  uint64_t before = numberAt(own).load(std::memory_order_acquire);
  if (before == kAbandoned || abandoned_.load(std::memory_order_relaxed))
    return aborted(error);
  // Cut and tagged where too long, as the bootstrap's exchanges are.
  std::memcpy(own + kSlotHeader, exchangeText(mine).data(), kExchangeBytes);
  if (!numberAt(own).compare_exchange_strong(before, n,
                                             std::memory_order_release))
    return aborted(error);
  // This exchange failed here: the peers waiting on this rank for it, or
  // (looking at both slots) for a later one, fail at once too. The
  // exchange numbers are out of step from here on: every later exchange
  // fails the same way.
  auto fail = [&](ErrorKind kind, const std::string &why) {
    failed_.fail(kind, why);
    uint64_t mine = n; // not over an abort's mark
    numberAt(own).compare_exchange_strong(mine, kFailed,
                                          std::memory_order_release);
    error = failed_;
    return false;
  };
  // Why the exchanges end, once rank `seen`'s slots show a mark.
  auto firstMark = [&](int seen) {
    std::string failedOne;
    for (int r = 0; r < ranks; ++r)
      for (uint64_t k : {n, n + 1}) {
        if (r == rank)
          continue;
        uint64_t number = numberAt(slot(r, k)).load(std::memory_order_acquire);
        if (number == kAbandoned || number == kLeft)
          return marked(number, r);
        if (number == kFailed && (failedOne.empty() || r == seen))
          failedOne = marked(number, r);
      }
    return failedOne.empty() ? marked(kFailed, seen) : failedOne;
  };
  all.assign(ranks, std::string());
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs_);
  for (int r = 0; r < ranks; ++r) {
    char *theirs = slot(r, n);
    for (unsigned spins = 0;; ++spins) {
      const uint64_t seen = numberAt(theirs).load(std::memory_order_acquire);
      if (seen == n)
        break;
      if (r == rank) // an abort's mark over this exchange's number
        return aborted(error);
      // A mark here, or in the peer's other slot (it failed or left an
      // exchange before this one): the first rank that aborted or left is
      // named, else the one that failed.
      if (!marked(seen, r).empty())
        return fail(ErrorKind::Remote, firstMark(r));
      if (spins < 4096)
        continue;
      // (A peer that posted this exchange meanwhile, finished it and left
      // marked the other slot after: its post is read first.)
      if (!marked(numberAt(slot(r, n + 1)).load(std::memory_order_acquire), r)
               .empty() &&
          numberAt(theirs).load(std::memory_order_acquire) != n)
        return fail(ErrorKind::Remote, firstMark(r));
      // Aborted here: at once (the abort marks this rank's slots).
      if (Error stop; agreement_.interrupted(stop))
        return aborted(error);
      if (std::chrono::steady_clock::now() > deadline)
        return fail(ErrorKind::Remote,
                    "rank " + std::to_string(r) +
                        " did not reach the buffer exchange of a shared "
                        "call within " +
                        std::to_string(timeoutMs_) + " ms");
      std::this_thread::yield();
    }
    all[r].assign(theirs + kSlotHeader, kExchangeBytes);
  }
  return true;
}
