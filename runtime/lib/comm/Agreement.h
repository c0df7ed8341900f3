//===- Agreement.h - what every rank must agree on --------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The communicator's exchanges over its Bootstrap: fixed-size messages
// (kExchangeBytes) that start with what they are, so a rank doing
// something else (destroying its communicator, another call) is named
// instead of failing on a size; and agreement, which fails on every rank
// when any rank's value differs, naming the first rank that differs.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_AGREEMENT_H
#define SDMA_RUNTIME_LIB_COMM_AGREEMENT_H

#include "sdma/runtime/Bootstrap.h"

#include <string>
#include <vector>

namespace sdma::rt {

/// Every exchange of the communicator is this long.
constexpr size_t kExchangeBytes = 256;

/// `text` as an exchange carries it: zero-padded to kExchangeBytes, or
/// where longer cut and tagged with a hash of the whole (so values that
/// differ past the cut still differ).
std::string exchangeText(const std::string &text);

/// This process among the job's (the init exchange tells ranks that share
/// a process, and so a GPU context, by it): its pid and 32 random bits,
/// drawn again in a forked child, so processes of two containers (same
/// host name, same pid) differ, and so do a parent and its child.
std::string processToken();

class Agreement {
public:
  explicit Agreement(Bootstrap &bootstrap) : bootstrap_(bootstrap) {}

  int rank() const { return bootstrap_.rank(); }
  int ranks() const { return bootstrap_.ranks(); }

  /// Every rank's `mine`, cut or zero-padded to kExchangeBytes.
  bool allGather(const std::string &mine, std::vector<std::string> &all,
                 Error &error);

  /// True on every rank when every rank passed the same `mine`; otherwise
  /// false on every rank, naming `what` and the first rank that differs
  /// (InvalidUsage). Values longer than an exchange are compared by hash.
  bool agree(const std::string &mine, const std::string &what, Error &error);

  /// agree() for a rank that may refuse the step: with `refused` set (this
  /// rank's own reason), it takes part with a refusal instead of `mine` and
  /// fails with `refused`; the other ranks fail with Remote, naming it and
  /// its reason, instead of waiting for it.
  bool agreeUnless(const Error &refused, const std::string &mine,
                   const std::string &what, Error &error);

  /// A bounded wait for every rank to say it is leaving; errors ignored.
  void leave();
  /// An abort (Bootstrap::interrupt), which with no exchange in flight
  /// says now that this rank leaves: the others' exchanges fail naming it.
  void interrupt(const std::string &why) {
    bootstrap_.interrupt(why, leavingText());
  }
  /// True, with why, once the rank's exchanges were interrupted (an abort:
  /// Bootstrap::interrupt).
  bool interrupted(Error &error) { return bootstrap_.interrupted(error); }

private:
  /// What this rank passes when it leaves.
  std::string leavingText() const;

  Bootstrap &bootstrap_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_AGREEMENT_H
