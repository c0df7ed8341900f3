//===- ExchangeBoard.h - a fast all-gather among a node's ranks -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The exchange a shared call makes (SharedBuffers.h) on every call, kept
// off the bootstrap's TCP round trip through its root: a host shared-memory
// segment every rank of the communicator maps (they are on one node), with
// two slots per rank. A rank writes its message into slot (n mod 2) of its
// own row, publishes n (release), and reads every peer's slot once it
// shows n (acquire). Two slots suffice: a rank writes exchange n + 2 only
// after every peer posted n + 1, which each did after reading n.
//
//   rank 0: [n=7 | msg][n=6 | msg]     rank 1: [n=7 | msg][n=6 | msg] ...
//            slot 1      slot 0
//
// Marks, numbers no exchange takes, end the peers' waits at once, naming
// the rank, rather than after the timeout: an abort (abandon(), from any
// thread) marks both of the rank's slots; a failed exchange (a peer came
// too late, or showed a mark) marks its own slot, so a late peer does not
// take that exchange alone; a board destroyed marks the slot of the
// rank's next exchange (which every peer has read). A waiting rank also
// looks at the peer's other slot, and names the first rank that aborted
// or left, else one that failed.
//
// The segment is made on the first exchange (rank 0 creates it, the others
// map it, its name goes at once); where any rank cannot, every rank learns
// so and the board uses the bootstrap's all-gather from then on.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_EXCHANGEBOARD_H
#define SDMA_RUNTIME_LIB_COMM_EXCHANGEBOARD_H

#include "comm/Agreement.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace sdma::rt {

class ExchangeBoard {
public:
  ExchangeBoard(Agreement &agreement, uint64_t timeoutMs)
      : agreement_(agreement), timeoutMs_(timeoutMs) {}
  ~ExchangeBoard();
  ExchangeBoard(const ExchangeBoard &) = delete;
  ExchangeBoard &operator=(const ExchangeBoard &) = delete;

  /// Every rank's `mine` (cut and tagged past kExchangeBytes - 1 bytes,
  /// zero-padded to kExchangeBytes: exchangeText), in rank order, as
  /// Agreement::allGather. Collective.
  bool allGather(const std::string &mine, std::vector<std::string> &all,
                 Error &error);
  int rank() const { return agreement_.rank(); }
  int ranks() const { return agreement_.ranks(); }
  /// Whether exchanges go through the shared segment (after the first).
  bool onSegment() const { return state_ == State::Mapped; }
  /// This rank leaves the exchanges (its communicator was aborted): from
  /// any thread, at any time; a peer waiting on it, now or later, fails at
  /// once naming it. The bootstrap's own interrupt covers exchanges that
  /// do not use the segment.
  void abandon();
  /// This rank leaves (its communicator is being destroyed): a peer
  /// waiting for its next exchange, now or later, fails at once naming it.
  /// Before the bootstrap's leaving exchange, which such a peer never
  /// joins. Idempotent.
  void leave();

private:
  enum class State { Unknown, Mapped, Bootstrap };
  /// Makes the segment collectively; false (every rank alike) where some
  /// rank could not: the bootstrap serves.
  bool map(Error &error);

  Agreement &agreement_;
  uint64_t timeoutMs_;
  State state_ = State::Unknown;
  char *base_ = nullptr;
  /// This rank's two slots' numbers once the segment is mapped, for
  /// abandon() from another thread.
  std::atomic<std::atomic<uint64_t> *> ownNumbers_[2] = {};
  std::atomic<bool> abandoned_{false};
  /// False, with the abort's failure.
  bool aborted(Error &error);
  size_t bytes_ = 0;
  uint64_t count_ = 0; // exchanges made
  /// Set once an exchange timed out: the ranks' exchange numbers are out
  /// of step, so every later exchange fails with it.
  Error failed_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_EXCHANGEBOARD_H
