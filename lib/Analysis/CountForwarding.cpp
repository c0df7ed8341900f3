//===- CountForwarding.cpp - count tables read through their copies -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Analysis/CountForwarding.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace sdma;

namespace {

unsigned indexOf(Value buffer) {
  return cast<BlockArgument>(buffer).getArgNumber() - 1;
}

/// Who writes one count-table entry.
struct Writers {
  int copies = 0, others = 0;
  Operation *other = nullptr;
  CountEntry source;
};

} // namespace

FailureOr<CountForwarding> CountForwarding::build(ScheduleOp schedule) {
  CountForwarding result;
  std::map<CountEntry, Writers> writers;
  for (Operation &op : schedule.getBody().getOps()) {
    auto transfer = dyn_cast<TransferOpInterface>(&op);
    if (!transfer)
      continue;
    auto copy = dyn_cast<CopyOp>(&op);
    std::optional<StaticSlice> read;
    if (copy)
      for (unsigned i = 0, e = transfer.getNumSlices(); i < e; ++i)
        if (transfer.isSliceRead(i) && !transfer.isSliceWritten(i))
          read = getStaticSlice(transfer, i);
    bool fromTable = read && schedule.isCountBuffer(read->buffer);
    for (unsigned i = 0, e = transfer.getNumSlices(); i < e; ++i) {
      if (!transfer.isSliceWritten(i))
        continue;
      std::optional<StaticSlice> s = getStaticSlice(transfer, i);
      if (!s || !schedule.isCountBuffer(s->buffer))
        continue;
      for (int64_t k = 0; k < s->count; ++k) {
        Writers &w = writers[{s->rank, indexOf(s->buffer), s->offset + k}];
        if (fromTable) {
          ++w.copies;
          w.source = {read->rank, indexOf(read->buffer), read->offset + k};
        } else {
          ++w.others;
          w.other = &op;
        }
      }
    }
  }

  for (CopyvOp op : schedule.getBody().getOps<CopyvOp>()) {
    for (unsigned side = 0; side < 2; ++side) {
      if (!op.isForwarded(side))
        continue;
      result.anyForwarded = true;
      unsigned rankField =
          side ? CopyvOp::kTargetPrefixRank : CopyvOp::kSourcePrefixRank;
      std::optional<int64_t> rank = op.getConstantField(rankField);
      std::optional<int64_t> end = op.getConstantField(rankField + 1);
      if (!rank || !end)
        return op.emitOpError("is not flat: run sdma-unroll first");
      Value table = side ? op.getTargetPrefix() : op.getSourcePrefix();
      StringRef name = schedule.getBufferName(table);
      for (int64_t i = 0; i < *end; ++i) {
        CountEntry entry{*rank, indexOf(table), i};
        auto w = writers.find(entry);
        auto fail = [&]() {
          return op.emitOpError()
                 << (side ? "destination" : "source") << " reads entry " << i
                 << " of count table '" << name << "' on rank " << *rank
                 << " forwarded, but ";
        };
        if (w == writers.end() || w->second.copies + w->second.others == 0)
          return fail() << "no sdma.copy writes it";
        if (w->second.others)
          return fail() << "an " << w->second.other->getName()
                        << " writes it, not a copy out of a count table";
        if (w->second.copies > 1)
          return fail() << w->second.copies
                        << " copies write it; forwarding needs exactly one";
        const CountEntry &source = w->second.source;
        if (writers.count(source))
          return fail() << "it is copied from entry " << source.index << " of '"
                        << schedule.getBufferName(
                               schedule.getBufferArgs()[source.buffer])
                        << "' on rank " << source.rank
                        << ", which an op writes: forward only out of tables "
                           "that no op writes";
        result.from[entry] = source;
      }
    }
  }
  return result;
}

std::vector<CountEntry> CountForwarding::view(int64_t rank, unsigned buffer,
                                              int64_t end) const {
  std::vector<CountEntry> entries;
  entries.reserve(end);
  for (int64_t i = 0; i < end; ++i)
    entries.push_back(from.at({rank, buffer, i}));
  return entries;
}
