//===- Contributions.h - symbolic contents of reduced chunks ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Private to the verifier. A chunk that sdma.reduce wrote holds a
// *contribution set*: the operator and the multiset of starting chunks
// (Symbols) combined into it. The operators are commutative and
// associative, so the set is all the value depends on: two schedules that
// combine the same chunks in different orders or trees leave the same set.
// A chunk's Symbol names its set: rank kReduced, buffer = the operator's
// code (ReduceOp::getKinds()), chunk = the set's index here. Sets never
// change once made, so copies move them as they move any Symbol.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_ANALYSIS_CONTRIBUTIONS_H
#define SDMA_LIB_ANALYSIS_CONTRIBUTIONS_H

#include "Segments.h"

namespace sdma::detail {

class Contributions {
public:
  /// Symbol::rank of a chunk holding a contribution set.
  static constexpr int64_t kReduced = -2;
  /// Symbol::rank of a chunk that combines a chunk never written.
  static constexpr int64_t kUndefined = -3;
  /// Symbol::rank of a chunk that combines two different operators.
  static constexpr int64_t kMixed = -4;

  explicit Contributions(uint64_t budgetBytes) : budget(budgetBytes) {}

  /// What `dst <kind> src` leaves in the destination chunk; std::nullopt
  /// when the sets would outgrow the memory budget.
  std::optional<Symbol> combine(unsigned kind, const Symbol &dst,
                                const Symbol &src);
  /// The chunks a value combines (a plain chunk is its own one-term set),
  /// sorted; empty for undefined or mixed values.
  llvm::ArrayRef<Symbol> terms(const Symbol &value, Symbol &scratch) const;
  /// The operator of a set (ReduceOp::getKinds() index), or -1.
  static int kindOf(const Symbol &value) {
    return value.rank == kReduced ? static_cast<int>(value.buffer) : -1;
  }
  uint64_t bytesUsed() const { return used; }

private:
  std::vector<std::vector<Symbol>> sets;
  uint64_t budget, used = 0;
};

} // namespace sdma::detail

#endif // SDMA_LIB_ANALYSIS_CONTRIBUTIONS_H
