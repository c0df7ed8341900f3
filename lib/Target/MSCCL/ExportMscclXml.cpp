//===- ExportMscclXml.cpp - a flat sdma schedule as an MSCCL algorithm ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// `sdma-translate --sdma-to-msccl-xml` writes a flat schedule as the XML the
// MSCCL runtime and RCCL load. MSCCL moves data by messages: a send is
// buffered in its connection and lands in the receiver's memory when the
// receiver's step runs. So every put becomes a send at its own place in the
// issuing rank's program and a receive on the target rank just before the
// first op of that rank the put happens-before (the rank's end if none); a
// reduce that reads a peer (a get) becomes a send on the peer right after
// the peer's last op it happens-before and an rrc in place of the reduce.
// The happens-before order is the schedule's run rank by rank in program
// order (vector clocks through its signal/wait pairs), one order the
// schedule allows; signals, waits and fences then carry nothing the
// messages do not, and are not written. A gpu's steps run in that order:
// each depends on the step before it when that step is in another thread
// block. Thread blocks: one for local steps, one per peer and channel (0:
// puts, 1: gets), so each connection's sends and receives pair in order.
//
//   sdma (2 ranks)                         MSCCL, gpu 1
//   copy in[0] on 0 -> out[0] on 1         tb 1 (send 0 recv 0 chan 0):
//   signal 0 -> 1; wait 1 <- 0               r  out[0]        (rank 0's put)
//   copy out[0] on 1 -> out[1] on 1        tb 0 (local): cpy out[0] -> out[1]
//                                                  depid=1 deps=0
//
// A swap between two ranks is two messages (each side sends, then
// receives). Buffers: the collective's input and output are i and o (one
// buffer in place: i, inplace="1"), every other buffer is packed into s.
// Not written: swaps within one rank, barriers, run-time counts
// (sdma.copyv), rooted collectives.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/MSCCL.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace sdma;

namespace {

/// Where an sdma buffer lives in MSCCL's i / o / s.
struct Place {
  char buffer = 'i';
  int64_t base = 0;
};

/// One MSCCL step to write, at a place in its gpu's order.
struct Action {
  const char *type = "nop";
  int peer = -1, channel = 0;
  Place src, dst;
  int64_t srcOff = -1, dstOff = -1, count = 1;
  /// Sorts the gpu's steps: before op `position` of its program (own ops
  /// after what is inserted before them), ties by the op's order.
  std::tuple<int64_t, int, int64_t> key;
  /// A put's receive: the rank that put and the put's place in its
  /// program (-1 otherwise).
  int from = -1;
  int64_t fromIndex = -1;
};

class Exporter {
public:
  Exporter(ScheduleOp schedule, raw_ostream &os)
      : schedule_(schedule), os_(os), R_(*schedule.getRanks()) {}
  LogicalResult run();

private:
  LogicalResult placeBuffers();
  LogicalResult programs();
  LogicalResult clocks();
  LogicalResult actions();
  void write();

  /// The first position of `rank`'s program that `op` (at `index` of its
  /// issuer `from`) happens before; the program's length if none.
  int64_t firstAfter(int rank, int from, int64_t index) const {
    const std::vector<Operation *> &p = program_[rank];
    for (size_t y = 0; y < p.size(); ++y)
      if (clock_.at(p[y])[from] > index)
        return int64_t(y);
    return int64_t(p.size());
  }
  Place placeOf(Value buffer) const { return place_.at(buffer); }
  /// Adds an MSCCL step to `gpu`'s (Action's fields in order).
  void step(int gpu, const char *type, int peer, int channel, Place src,
            Place dst, int64_t srcOff, int64_t dstOff, int64_t count,
            std::tuple<int64_t, int, int64_t> key) {
    steps_[gpu].push_back(
        {type, peer, channel, src, dst, srcOff, dstOff, count, key});
  }

  ScheduleOp schedule_;
  raw_ostream &os_;
  int64_t R_;
  std::string collective_;
  bool inplace_ = false;
  int64_t inputChunks_ = 0, outputChunks_ = 0, scratchChunks_ = 0;
  llvm::DenseMap<Value, Place> place_;
  std::vector<std::vector<Operation *>> program_; // per rank, in order
  llvm::DenseMap<Operation *, int64_t> index_;    // in its rank's program
  llvm::DenseMap<Operation *, std::vector<int64_t>> clock_;
  std::vector<std::vector<Action>> steps_; // per gpu
};

LogicalResult Exporter::placeBuffers() {
  if (schedule_.getRoot())
    return schedule_.emitOpError(
        "is a rooted collective; MSCCL's rooted collectives number their "
        "chunks differently, so --sdma-to-msccl-xml does not write them");
  std::optional<StringRef> kind = schedule_.getCollective();
  static const std::pair<StringRef, StringRef> names[] = {
      {"all_gather", "allgather"},
      {"all_reduce", "allreduce"},
      {"all_to_all", "alltoall"},
      {"reduce_scatter", "reducescatter"}};
  collective_ = "custom";
  if (kind) {
    collective_.clear();
    for (auto [sdmaName, msccl] : names)
      if (*kind == sdmaName)
        collective_ = msccl.str();
    if (collective_.empty())
      return schedule_.emitOpError("implements ")
             << *kind
             << ", which MSCCL's XML cannot declare (all_gather, all_reduce, "
                "all_to_all, reduce_scatter, or no collective)";
  }
  auto args = schedule_.getBufferArgs();
  std::optional<unsigned> in = schedule_.getCollectiveInput(),
                          out = schedule_.getCollectiveOutput();
  if (!in || !out) {
    in = 0;
    out = args.size() > 1 ? 1 : 0;
  }
  inplace_ = *in == *out;
  for (unsigned i = 0; i < args.size(); ++i) {
    if (schedule_.isCountBuffer(i))
      return schedule_.emitOpError("has count table '")
             << schedule_.getBufferName(args[i])
             << "': MSCCL has no run-time counts";
    int64_t chunks = *schedule_.getBufferChunks(args[i], R_);
    if (i == *in) {
      place_[args[i]] = {'i', 0};
      inputChunks_ = chunks;
    } else if (i == *out) {
      place_[args[i]] = {'o', 0};
      outputChunks_ = chunks;
    } else {
      place_[args[i]] = {'s', scratchChunks_};
      scratchChunks_ += chunks;
    }
  }
  if (inplace_)
    outputChunks_ = inputChunks_;
  return success();
}

LogicalResult Exporter::programs() {
  program_.assign(R_, {});
  for (Operation &op : schedule_.getBody().getOps()) {
    auto fields = dyn_cast<FieldsOpInterface>(&op);
    if (fields && !fields.hasStaticFields())
      return op.emitOpError("is not flat: run sdma-unroll before "
                            "--sdma-to-msccl-xml");
    if (!isa<CopyOp, BcastOp, SwapOp, ReduceOp, FenceOp, SignalOp, WaitOp,
             BarrierOp, CopyvOp, NotifyOp, PollOp>(&op))
      return op.emitOpError("is not part of a flat schedule: run sdma-unroll "
                            "before --sdma-to-msccl-xml");
    if (isa<BarrierOp, CopyvOp, NotifyOp, PollOp>(&op))
      return op.emitOpError("has no MSCCL counterpart (--sdma-to-msccl-xml "
                            "writes copies, broadcasts, swaps between two "
                            "ranks, reduces, fences and signal/wait pairs)");
    if (auto copy = dyn_cast<CopyOp>(&op); copy && copy.getPull())
      return op.emitOpError("is a pull, which --sdma-to-msccl-xml does not "
                            "write (MSCCL's copies are sends their source "
                            "issues): write it as a put");
    if (auto swap = dyn_cast<SwapOp>(&op);
        swap && getStaticSlice(swap, 0)->rank == getStaticSlice(swap, 1)->rank)
      return op.emitOpError("swaps two slices of one rank, which MSCCL "
                            "cannot do without a scratch chunk");
    int64_t rank = -1;
    if (auto t = dyn_cast<TransferOpInterface>(&op))
      rank = getStaticSlice(t, 0)->rank;
    else if (auto s = dyn_cast<SignalOp>(&op))
      rank = *s.getConstantField(0);
    else if (auto w = dyn_cast<WaitOp>(&op))
      rank = *w.getConstantField(0);
    else if (auto f = dyn_cast<FenceOp>(&op))
      rank = f.hasRank() ? *f.getConstantField(0) : -1;
    if (rank < 0)
      continue; // a fence on every rank orders nothing a run in order needs
    index_[&op] = int64_t(program_[rank].size());
    program_[rank].push_back(&op);
  }
  return success();
}

LogicalResult Exporter::clocks() {
  // Every rank runs its program in order; a wait takes the clock of its
  // signal (the k-th of that pair and tag).
  std::vector<size_t> pc(R_, 0);
  std::vector<std::vector<int64_t>> now(R_, std::vector<int64_t>(R_, 0));
  std::map<std::tuple<int64_t, int64_t, int64_t>,
           std::vector<std::vector<int64_t>>>
      raised;
  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> taken;
  for (bool moved = true; moved;) {
    moved = false;
    for (int64_t r = 0; r < R_; ++r)
      while (pc[r] < program_[r].size()) {
        Operation *op = program_[r][pc[r]];
        if (auto w = dyn_cast<WaitOp>(op)) {
          auto key = std::tuple(*w.getConstantField(1), r, int64_t(w.getTag()));
          std::vector<std::vector<int64_t>> &got = raised[key];
          if (taken[key] >= got.size())
            break;
          const std::vector<int64_t> &theirs = got[taken[key]++];
          for (int64_t q = 0; q < R_; ++q)
            now[r][q] = std::max(now[r][q], theirs[q]);
        }
        now[r][r] = int64_t(pc[r]) + 1;
        clock_[op] = now[r];
        if (auto s = dyn_cast<SignalOp>(op))
          raised[{r, *s.getConstantField(1), int64_t(s.getTag())}].push_back(
              now[r]);
        ++pc[r];
        moved = true;
      }
  }
  for (int64_t r = 0; r < R_; ++r)
    if (pc[r] < program_[r].size())
      return program_[r][pc[r]]->emitOpError(
          "is never released when every rank runs its ops in order: the "
          "schedule deadlocks (sdma-verify says where)");
  return success();
}

LogicalResult Exporter::actions() {
  steps_.assign(R_, {});
  int64_t order = 0;
  auto put = [&](Operation *op, StaticSlice from, StaticSlice to, int sub) {
    int g = int(from.rank), b = int(to.rank);
    int64_t at = index_[op], tie = order * 2 + sub;
    Place src = placeOf(from.buffer), dst = placeOf(to.buffer);
    if (g == b) {
      step(g, "cpy", -1, 0, src, dst, src.base + from.offset,
           dst.base + to.offset, from.count, {at, 1, tie});
      return;
    }
    step(g, "s", b, 0, src, dst, src.base + from.offset, dst.base + to.offset,
         from.count, {at, 1, tie});
    step(b, "r", g, 0, src, dst, -1, dst.base + to.offset, from.count,
         {firstAfter(b, g, at), 0, tie});
    steps_[b].back().from = g;
    steps_[b].back().fromIndex = at;
  };
  // Where rank p sends data op `op` reads there (a get or a swap's other
  // side): after p's ops the op follows, and after every put into p that
  // happens before the op has landed (a put lands at its receive).
  auto sendKey = [&](Operation *op, int p, int64_t tie) {
    std::tuple<int64_t, int, int64_t> key{clock_[op][p], 0, tie};
    for (const Action &a : steps_[p])
      if (a.from >= 0 && clock_[op][a.from] > a.fromIndex)
        key = std::max(key, a.key);
    return key;
  };
  // Puts first: a get's send must follow the puts into its rank that
  // happen before it (sendKey).
  for (Operation &op : schedule_.getBody().getOps()) {
    ++order;
    if (auto copy = dyn_cast<CopyOp>(&op)) {
      put(&op, *getStaticSlice(copy, 0), *getStaticSlice(copy, 1), 0);
    } else if (auto bcast = dyn_cast<BcastOp>(&op)) {
      put(&op, *getStaticSlice(bcast, 0), *getStaticSlice(bcast, 1), 0);
      put(&op, *getStaticSlice(bcast, 0), *getStaticSlice(bcast, 2), 1);
    }
  }
  order = 0;
  for (Operation &op : schedule_.getBody().getOps()) {
    ++order;
    if (isa<CopyOp, BcastOp>(&op)) {
      continue;
    } else if (auto copy = dyn_cast<CopyOp>(&op)) {
      put(&op, *getStaticSlice(copy, 0), *getStaticSlice(copy, 1), 0);
    } else if (auto bcast = dyn_cast<BcastOp>(&op)) {
      put(&op, *getStaticSlice(bcast, 0), *getStaticSlice(bcast, 1), 0);
      put(&op, *getStaticSlice(bcast, 0), *getStaticSlice(bcast, 2), 1);
    } else if (auto swap = dyn_cast<SwapOp>(&op)) {
      // Two messages: this rank's slice out, then the peer's in; the peer
      // sends where a get would and receives where a put lands.
      StaticSlice mine = *getStaticSlice(swap, 0),
                  theirs = *getStaticSlice(swap, 1);
      int g = int(mine.rank), p = int(theirs.rank);
      int64_t at = index_[&op], tie = order * 2;
      Place a = placeOf(mine.buffer), b = placeOf(theirs.buffer);
      int64_t aOff = a.base + mine.offset, bOff = b.base + theirs.offset;
      step(g, "s", p, 0, a, b, aOff, bOff, mine.count, {at, 1, tie});
      step(g, "r", p, 1, b, a, -1, aOff, mine.count, {at, 1, tie + 1});
      step(p, "s", g, 1, b, a, bOff, aOff, mine.count, sendKey(&op, p, tie));
      step(p, "r", g, 0, a, b, -1, bOff, mine.count,
           {firstAfter(p, g, at), 0, tie + 1});
    } else if (auto reduce = dyn_cast<ReduceOp>(&op)) {
      StaticSlice to = *getStaticSlice(reduce, 0),
                  from = *getStaticSlice(reduce, 1);
      int g = int(to.rank), p = int(from.rank);
      int64_t at = index_[&op], tie = order * 2;
      Place src = placeOf(from.buffer), dst = placeOf(to.buffer);
      int64_t dstOff = dst.base + to.offset;
      if (g == p) {
        step(g, "re", -1, 0, src, dst, src.base + from.offset, dstOff, to.count,
             {at, 1, tie});
        continue;
      }
      // A get: the peer sends once the ops the reduce follows are done.
      step(p, "s", g, 1, src, dst, src.base + from.offset, dstOff, to.count,
           sendKey(&op, p, tie));
      step(g, "rrc", p, 1, dst, dst, dstOff, dstOff, to.count, {at, 1, tie});
    }
  }
  for (std::vector<Action> &gpu : steps_)
    std::stable_sort(
        gpu.begin(), gpu.end(),
        [](const Action &a, const Action &b) { return a.key < b.key; });
  return success();
}

void Exporter::write() {
  int channels = 1;
  for (const std::vector<Action> &gpu : steps_)
    for (const Action &a : gpu)
      channels = std::max(channels, a.channel + 1);
  int64_t perLoop = std::max(inputChunks_, outputChunks_);
  os_ << "<algo name=\"" << schedule_.getSymName()
      << "\" proto=\"Simple\" nchannels=\"" << channels
      << "\" nchunksperloop=\"" << perLoop << "\" ngpus=\"" << R_
      << "\" coll=\"" << collective_ << "\" inplace=\"" << int(inplace_)
      << "\" outofplace=\"" << int(!inplace_)
      << "\" minBytes=\"0\" maxBytes=\"0\">\n";
  for (int64_t g = 0; g < R_; ++g) {
    // Thread blocks: 0 local, then one per (peer, channel) in use.
    std::map<std::pair<int, int>, int> block{{{-1, 0}, 0}};
    for (const Action &a : steps_[g])
      if (a.peer >= 0)
        block.insert({{a.peer, a.channel}, 0});
    int next = 0;
    for (auto &[key, id] : block)
      id = next++;
    std::vector<std::vector<std::string>> lines(block.size());
    std::vector<std::vector<bool>> published(block.size());
    std::vector<std::tuple<int, int, int>> deps; // (tb, dep tb, dep step)
    int prevTb = -1, prevStep = -1;
    std::vector<std::pair<int, size_t>> where; // per action: (tb, step)
    for (const Action &a : steps_[g]) {
      int tb = block[{a.peer, a.channel}];
      int s = int(published[tb].size());
      published[tb].push_back(false);
      where.push_back({tb, size_t(s)});
      if (prevTb >= 0 && prevTb != tb)
        published[prevTb][prevStep] = true;
      deps.push_back(
          {tb, prevTb != tb ? prevTb : -1, prevTb != tb ? prevStep : -1});
      prevTb = tb;
      prevStep = s;
    }
    os_ << "  <gpu id=\"" << g << "\" i_chunks=\"" << inputChunks_
        << "\" o_chunks=\"" << outputChunks_ << "\" s_chunks=\""
        << scratchChunks_ << "\">\n";
    for (auto &[key, id] : block) {
      os_ << "    <tb id=\"" << id << "\" send=\"" << key.first << "\" recv=\""
          << key.first << "\" chan=\"" << key.second << "\">\n";
      for (size_t i = 0; i < steps_[g].size(); ++i) {
        if (where[i].first != id)
          continue;
        const Action &a = steps_[g][i];
        auto [tb, depTb, depStep] = deps[i];
        os_ << "      <step s=\"" << where[i].second << "\" type=\"" << a.type
            << "\" srcbuf=\"" << (a.srcOff < 0 ? 'i' : a.src.buffer)
            << "\" srcoff=\"" << a.srcOff << "\" dstbuf=\"" << a.dst.buffer
            << "\" dstoff=\"" << a.dstOff << "\" cnt=\"" << a.count
            << "\" depid=\"" << depTb << "\" deps=\"" << depStep
            << "\" hasdep=\"" << int(published[id][where[i].second])
            << "\"/>\n";
      }
      os_ << "    </tb>\n";
    }
    os_ << "  </gpu>\n";
  }
  os_ << "</algo>\n";
}

LogicalResult Exporter::run() {
  if (failed(placeBuffers()) || failed(programs()) || failed(clocks()) ||
      failed(actions()))
    return failure();
  write();
  return success();
}

} // namespace

void sdma::registerToMscclXmlTranslation() {
  TranslateFromMLIRRegistration registration(
      "sdma-to-msccl-xml",
      "write a flat sdma schedule as an MSCCL XML algorithm (RCCL, MSCCL)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
        if (schedules.size() != 1)
          return module.emitError("--sdma-to-msccl-xml writes one schedule; "
                                  "the input has ")
                 << schedules.size();
        if (!schedules[0].getRanks())
          return schedules[0].emitOpError(
              "has no fixed rank count: run sdma-unroll before "
              "--sdma-to-msccl-xml");
        return Exporter(schedules[0], os).run();
      },
      registerAllDialects);
}
