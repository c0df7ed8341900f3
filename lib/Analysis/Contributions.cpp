//===- Contributions.cpp - symbolic contents of reduced chunks ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "Contributions.h"

#include <algorithm>
#include <iterator>

using namespace sdma::detail;

llvm::ArrayRef<Symbol> Contributions::terms(const Symbol &value,
                                            Symbol &scratch) const {
  if (value.rank == kReduced)
    return sets[value.chunk];
  if (value.rank < 0)
    return {};
  scratch = value;
  return llvm::ArrayRef<Symbol>(scratch);
}

std::optional<Symbol> Contributions::combine(unsigned kind, const Symbol &dst,
                                             const Symbol &src) {
  for (const Symbol *value : {&dst, &src}) {
    if (value->rank == -1 || value->rank == kUndefined)
      return Symbol{kUndefined, static_cast<int64_t>(kind), -1};
    if (value->rank == kMixed ||
        (value->rank == kReduced && value->buffer != kind))
      return Symbol{kMixed, static_cast<int64_t>(kind), -1};
  }
  Symbol a, b;
  llvm::ArrayRef<Symbol> x = terms(dst, a), y = terms(src, b);
  uint64_t bytes = (x.size() + y.size()) * sizeof(Symbol);
  if (used + bytes > budget)
    return std::nullopt;
  used += bytes;
  std::vector<Symbol> merged;
  merged.reserve(x.size() + y.size());
  std::merge(x.begin(), x.end(), y.begin(), y.end(),
             std::back_inserter(merged));
  sets.push_back(std::move(merged));
  return Symbol{kReduced, static_cast<int64_t>(kind),
                static_cast<int64_t>(sets.size() - 1)};
}
