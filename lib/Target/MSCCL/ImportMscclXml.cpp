//===- ImportMscclXml.cpp - an MSCCL XML algorithm as an sdma schedule ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// `sdma-translate --import-msccl-xml` reads an algorithm (MscclAlgo.h), puts
// its steps in one order every dependency allows (or reports the cycle that
// makes it deadlock, step by step), and writes them as a flat schedule
// whose ops carry the XML step's location, so that sdma-verify's races and
// wrong chunks point at the algorithm's lines:
//
//   MSCCL                       sdma (gpu g, thread block t = engine t)
//   s  (send src to P)          copy g.src -> P.landing {engine t};
//                               signal g -> P tag chan
//   r  (receive into dst)       wait g <- Q tag chan [; copy g.xfer -> g.dst]
//   rcs                         receive, then send g.dst
//   rrc / rrcs (dst = src op    wait; [copy g.src -> g.dst;]
//       received [; send dst])  reduce op g.dst <- g.xfer [; send g.dst]
//   rrs (send src op received)  wait; reduce op g.xfer <- g.src; send g.xfer
//   cpy / re                    copy / reduce op g.dst <- g.src
//   nop                         (ordering only)
//   depid/deps on another tb    fence on g before the step
//
// A send is a put into the receiver's memory. It lands in the receiving
// step's destination when nothing on the receiver touched those chunks
// before the receive; otherwise (and for every receive that reduces) in a
// landing buffer %xfer, a slot per message, copied or reduced at the
// receive: a put then never overwrites what the receiver still uses, and
// a send never waits for its receiver, as MSCCL's buffered connections do.
// Every op is ordered after the steps before it in the order chosen, so the
// added waits cannot deadlock a schedule MSCCL would complete.
//
// Buffers: i, o, s become %input, %output, %scratch (sizes the largest any
// gpu declares); the collective (coll) becomes `implements`: allgather,
// allreduce, alltoall, reduce_scatter. In place (inplace="1"): allreduce
// and alltoall use one buffer; an allgather's input is the output's chunk
// of its rank (copied there first); a reduce_scatter's output is the
// input's chunk of its rank (copied out last).
//
//===----------------------------------------------------------------------===//

#include "MscclAlgo.h"
#include "RaceCheck.h"
#include "ScheduleWriter.h"
#include "XmlReader.h"

#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/MSCCL.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <set>

using namespace mlir;
using namespace sdma;
using namespace sdma::msccl;

namespace {

class Importer {
public:
  Importer(const Algorithm &algo, std::string file, MLIRContext *context)
      : algo_(algo), writer_(context, std::move(file)) {}

  /// The schedule, or null after reporting why not.
  OwningOpRef<Operation *> run();

private:
  Location loc(const xml::Element &e, const xml::Attribute *a = nullptr) {
    return writer_.loc(a ? a->at : e.at);
  }
  bool checkShape();
  bool linearize();
  void chooseLandings();
  /// What step `r` reads and writes of its gpu's buffers.
  std::vector<Access<StepRef>> accesses(StepRef r) const;
  /// Races in the algorithm's own order (RaceCheck.h), reported.
  bool raceFree();
  std::pair<std::string, int64_t> where(int g, msccl::Slice s) const {
    return writer_.where(g, s.buffer, s.offset);
  }
  std::string slice(int g, msccl::Slice s, int64_t count) const {
    return writer_.slice(g, s.buffer, s.offset, count);
  }
  void emitStep(StepRef ref);
  void emit(int g, const xml::Element &e, const std::string &op) {
    writer_.emit(g, e.at, op);
  }

  const Algorithm &algo_;
  ScheduleWriter writer_;
  std::vector<StepRef> order_;
  std::map<StepRef, const Message *> sentBy_, receivedBy_;
  /// Per message (by index): its slot in the receiver's %xfer, or -1 when
  /// it lands in the receiving step's destination.
  std::map<const Message *, int64_t> landing_;
  /// Each step's predecessors in the algorithm's order.
  std::map<StepRef, std::vector<StepRef>> pred_;
  /// Per step, the ops written before it.
  std::map<StepRef, int64_t> emitted_;
};

bool Importer::checkShape() {
  bool reduces = false;
  for (const Gpu &gpu : algo_.gpuList)
    for (const ThreadBlock &tb : gpu.blocks)
      for (const Step &s : tb.steps)
        reduces |= s.type == StepType::Reduce || reducesReceived(s.type);
  std::vector<int64_t> in, out;
  int64_t scratch = 0;
  for (const Gpu &gpu : algo_.gpuList) {
    in.push_back(gpu.inputChunks);
    out.push_back(gpu.outputChunks);
    scratch = std::max(scratch, gpu.scratchChunks);
  }
  writer_.setShape(algo_.collective, algo_.inplace, reduces, in, out, scratch);
  // The runtime cuts a call into nchunksperloop chunks of the larger of
  // the collective's buffers (an allgather's output, the others' input):
  // another value would chunk the buffers otherwise than they say.
  int64_t largest = 0;
  for (const Gpu &gpu : algo_.gpuList)
    largest = std::max({largest, gpu.inputChunks, gpu.outputChunks});
  if (!writer_.kind().empty() && algo_.chunksPerLoop &&
      algo_.chunksPerLoop != largest) {
    const xml::Element &root = *algo_.element;
    emitError(loc(root, root.find("nchunksperloop")))
        << "nchunksperloop is " << algo_.chunksPerLoop
        << ", but the buffers of this " << algo_.collective << " have "
        << largest
        << " chunks: the MSCCL runtime would cut them into other chunks";
    return false;
  }
  for (const Gpu &gpu : algo_.gpuList) {
    bool blameInput = false;
    std::string what = writer_.misfit(gpu.id, blameInput);
    if (what.empty())
      continue;
    emitError(loc(*gpu.element,
                  gpu.element->find(blameInput ? "i_chunks" : "o_chunks")))
        << "gpu " << gpu.id << " has " << gpu.inputChunks << " input and "
        << gpu.outputChunks << " output chunks, but " << what;
    return false;
  }
  return true;
}

bool Importer::linearize() {
  std::map<StepRef, std::vector<StepRef>> succ;
  std::map<StepRef, std::vector<StepRef>> &pred = pred_;
  std::map<StepRef, int> indegree;
  auto edge = [&](StepRef a, StepRef b) {
    succ[a].push_back(b);
    pred[b].push_back(a);
    ++indegree[b];
  };
  std::vector<StepRef> all;
  for (const Gpu &gpu : algo_.gpuList)
    for (const ThreadBlock &tb : gpu.blocks)
      for (size_t s = 0; s < tb.steps.size(); ++s) {
        StepRef ref{gpu.id, tb.id, int(s)};
        all.push_back(ref);
        indegree[ref];
        if (s > 0)
          edge({gpu.id, tb.id, int(s) - 1}, ref);
        for (auto [b, d] : tb.steps[s].deps)
          edge({gpu.id, b, d}, ref);
      }
  for (const Message &m : algo_.messages) {
    edge(m.from, m.to);
    sentBy_[m.from] = &m;
    receivedBy_[m.to] = &m;
  }
  // Ready steps, the earliest step index first (then gpu, thread block):
  // the order reads like the algorithm's rounds.
  auto key = [](StepRef r) { return std::tuple(r.step, r.gpu, r.block); };
  std::set<std::tuple<int, int, int>> ready;
  for (StepRef r : all)
    if (!indegree[r])
      ready.insert(key(r));
  while (!ready.empty()) {
    auto [s, g, b] = *ready.begin();
    ready.erase(ready.begin());
    StepRef r{g, b, s};
    order_.push_back(r);
    for (StepRef n : succ[r])
      if (--indegree[n] == 0)
        ready.insert(key(n));
  }
  if (order_.size() == all.size())
    return true;
  std::vector<StepRef> cycle =
      leftoverCycle(all, indegree, pred, [](StepRef) { return true; });
  auto name = [&](StepRef r) {
    return "gpu " + std::to_string(r.gpu) + " thread block " +
           std::to_string(r.block) + " step " + std::to_string(r.step) +
           " (line " + std::to_string(algo_.step(r).element->at.line) + ")";
  };
  std::string chain;
  for (size_t i = 0; i < cycle.size(); ++i) {
    StepRef waiter = cycle[i], on = cycle[(i + 1) % cycle.size()];
    auto m = receivedBy_.find(waiter);
    bool message = m != receivedBy_.end() && m->second->from == on;
    chain += "\n  " + name(waiter) + " waits for " + name(on) +
             (message ? " (its message)"
              : on.gpu == waiter.gpu && on.block == waiter.block
                  ? " (the step before it)"
                  : " (a dependency)");
  }
  const xml::Element &e = *algo_.step(cycle.front()).element;
  emitError(loc(e)) << "the algorithm deadlocks: its steps wait on each "
                       "other in a cycle:"
                    << chain;
  return false;
}

std::vector<Access<StepRef>> Importer::accesses(StepRef r) const {
  const Step &s = algo_.step(r);
  std::vector<Access<StepRef>> out;
  auto add = [&](msccl::Slice slice, bool write) {
    auto [name, offset] = where(r.gpu, slice);
    out.push_back({r, r.gpu, name, offset, offset + s.count, write});
  };
  if (readsSource(s.type))
    add(s.src, false);
  if (writesDestination(s.type))
    add(s.dst, true);
  return out;
}

bool Importer::raceFree() {
  std::vector<Access<StepRef>> all;
  for (StepRef r : order_)
    for (Access<StepRef> &a : accesses(r))
      all.push_back(a);
  auto race = findRace(order_, pred_, all);
  if (!race)
    return true;
  auto [a, b] = *race;
  auto name = [&](StepRef r) {
    return "step " + std::to_string(r.step) + " of thread block " +
           std::to_string(r.block) + " of gpu " + std::to_string(r.gpu);
  };
  auto what = [&](const Access<StepRef> &x) {
    return std::string(x.write ? "writes" : "reads") + " " +
           x.buffer.substr(1) + "[" + std::to_string(x.lo) + ", " +
           std::to_string(x.hi) + ")";
  };
  InFlightDiagnostic d = emitError(loc(*algo_.step(a.node).element))
                         << name(a.node) << " " << what(a) << " while "
                         << name(b.node) << " " << what(b)
                         << ", and nothing orders the two (thread-block "
                            "order, a dependency or a message): a race";
  d.attachNote(loc(*algo_.step(b.node).element)) << "the other step";
  return false;
}

void Importer::chooseLandings() {
  // What each gpu's steps have touched so far, in the order chosen: a
  // receive lands in place only where nothing touched its chunks before.
  std::map<int, std::vector<Access<StepRef>>> touched;
  auto overlaps = [&](int g, const std::string &b, int64_t lo, int64_t hi) {
    for (const Access<StepRef> &t : touched[g])
      if (t.buffer == b && t.lo < hi && lo < t.hi)
        return true;
    return false;
  };
  for (StepRef r : order_) {
    const Step &s = algo_.step(r);
    if (auto m = receivedBy_.find(r); m != receivedBy_.end()) {
      auto [dstName, dstOff] = where(r.gpu, s.dst);
      bool inPlace = !reducesReceived(s.type) &&
                     !overlaps(r.gpu, dstName, dstOff, dstOff + s.count);
      landing_[m->second] = inPlace ? -1 : writer_.xferSlot(r.gpu, s.count);
    }
    for (Access<StepRef> &a : accesses(r))
      touched[r.gpu].push_back(a);
  }
}

void Importer::emitStep(StepRef ref) {
  const Step &s = algo_.step(ref);
  const ThreadBlock &tb = algo_.block(ref);
  const xml::Element &e = *s.element;
  int g = ref.gpu;
  std::string engine = " {engine = " + std::to_string(tb.id) + " : i64}";
  const std::string &op = reduceOpOption();
  // A dependency on another thread block: a fence on this gpu, unless one
  // already follows that step.
  bool unfenced = false;
  for (auto [b, d] : s.deps)
    unfenced |= b != tb.id && !writer_.fencedSince(g, emitted_[{g, b, d}] + 1);
  if (unfenced)
    emit(g, e, "sdma.fence on " + std::to_string(g));
  emitted_[ref] = writer_.mark();
  // What the step sends, once it has received and combined.
  std::string sendFrom;
  if (s.type == StepType::Send)
    sendFrom = slice(g, s.src, s.count);
  if (auto m = receivedBy_.find(ref); m != receivedBy_.end()) {
    const Message &msg = *m->second;
    emit(g, e,
         "sdma.wait " + std::to_string(g) + " <- " +
             std::to_string(msg.from.gpu) + " tag " +
             std::to_string(msg.channel));
    int64_t slot = landing_[&msg];
    std::string landed = writer_.xferSlice(g, slot, s.count);
    std::string dst = slice(g, s.dst, s.count);
    switch (s.type) {
    case StepType::Recv:
    case StepType::RecvCopySend:
      if (slot >= 0)
        emit(g, e, "sdma.copy " + landed + " -> " + dst + engine);
      sendFrom = dst;
      break;
    case StepType::RecvReduceSend:
      emit(g, e,
           "sdma.reduce " + op + " " + landed + " <- " +
               slice(g, s.src, s.count) + engine);
      sendFrom = landed;
      break;
    default: // rrc, rrcs: dst = src op received
      if (where(g, s.src) != where(g, s.dst))
        emit(g, e,
             "sdma.copy " + slice(g, s.src, s.count) + " -> " + dst + engine);
      emit(g, e, "sdma.reduce " + op + " " + dst + " <- " + landed + engine);
      sendFrom = dst;
      break;
    }
  }
  if (s.type == StepType::Copy && where(g, s.src) != where(g, s.dst))
    emit(g, e,
         "sdma.copy " + slice(g, s.src, s.count) + " -> " +
             slice(g, s.dst, s.count) + engine);
  if (s.type == StepType::Reduce)
    emit(g, e,
         "sdma.reduce " + op + " " + slice(g, s.dst, s.count) + " <- " +
             slice(g, s.src, s.count) + engine);
  if (auto m = sentBy_.find(ref); m != sentBy_.end()) {
    const Message &msg = *m->second;
    const Step &to = algo_.step(msg.to);
    int64_t slot = landing_[&msg];
    std::string target = slot >= 0
                             ? writer_.xferSlice(msg.to.gpu, slot, s.count)
                             : slice(msg.to.gpu, to.dst, s.count);
    emit(g, e, "sdma.copy " + sendFrom + " -> " + target + engine);
    emit(g, e,
         "sdma.signal " + std::to_string(g) + " -> " +
             std::to_string(msg.to.gpu) + " tag " +
             std::to_string(msg.channel));
  }
}

OwningOpRef<Operation *> Importer::run() {
  if (!checkShape() || !linearize() || !raceFree())
    return nullptr;
  chooseLandings();
  const xml::Element &root = *algo_.element;
  writer_.prologue(root.at);
  for (StepRef r : order_)
    emitStep(r);
  writer_.epilogue(root.at);
  return writer_.finish(algo_.name, root.at);
}

/// The algorithm in `sourceMgr`'s main buffer, imported.
OwningOpRef<Operation *> importMscclXml(llvm::SourceMgr &sourceMgr,
                                        MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::string file = buffer->getBufferIdentifier().str();
  auto at = [&](xml::Position p) {
    return FileLineColLoc::get(context, file, p.line, p.column);
  };
  if (!checkOptions(context))
    return nullptr;
  std::string why;
  xml::Position where;
  std::unique_ptr<xml::Element> root =
      xml::parse(buffer->getBuffer(), why, where);
  if (!root) {
    emitError(at(where)) << why;
    return nullptr;
  }
  std::optional<Algorithm> algo =
      read(*root, [&](const xml::Element &e, const xml::Attribute *a,
                      const std::string &message) {
        emitError(at(a ? a->at : e.at)) << message;
      });
  if (!algo)
    return nullptr;
  return Importer(*algo, file, context).run();
}

} // namespace

void sdma::registerImportMscclXmlTranslation() {
  TranslateToMLIRRegistration registration(
      "import-msccl-xml",
      "read an MSCCL XML algorithm (msccl-tools, RCCL) as an sdma schedule",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return importMscclXml(sourceMgr, context);
      },
      registerAllDialects);
}
