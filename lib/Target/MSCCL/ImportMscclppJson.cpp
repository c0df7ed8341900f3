//===- ImportMscclppJson.cpp - an MSCCL++ execution plan as a schedule ----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// `sdma-translate --import-mscclpp-json` reads the JSON execution plan the
// MSCCL++ DSL writes and its executor runs:
//
//   {"name", "collective", "protocol", "inplace",
//    "gpus": [{"id", "input_chunks", "output_chunks", "scratch_chunks",
//              "channels": [{"channel_type", "connected_to": [peer...]}],
//              "remote_buffers": [{"rank", "type": "i|o|s", ...}],
//              "threadblocks": [{"id", "ops": [...],
//                                "channels": [{"channel_type",
//                                              "channel_ids": [...]}],
//                                "remote_buffer_refs": [...]}]}]}
//
// A gpu's channels of one type are numbered in order (entry, peer); the
// k-th channel from A to B pairs with the k-th from B to A. An op's
// channel_ids index its thread block's channels of its channel_type, and a
// remote buffer reference's buffer_id its thread block's remote buffers of
// that type. MSCCL++ moves data by direct writes and orders by semaphores,
// which is sdma's own model:
//
//   put / pws / pwsf     sdma.copy src -> the peer's dst {engine tb}
//                        (pws, pwsf: then a signal on each channel)
//   copy                 sdma.copy, local
//   re / rre             dst = src0 op src1...: [copy src0 -> dst;]
//                        sdma.reduce op dst <- src_i (rre: src_i remote)
//   res / rres           then copy dst to each remote dst
//   signal               sdma.signal g -> peer tag 2k (+1 on a port channel)
//   wait                 sdma.wait g <- peer tag 2k (+1)
//   barrier              sdma.fence on g, once every thread block of the
//                        barrier has reached it
//   nop, flush           (nothing: a thread block's ops are in order)
//
// The ops are written in one order every thread block, signal/wait pair
// and barrier allows (or the cycle that deadlocks the plan is reported);
// each op carries the position of its JSON object. First the plan is
// checked for races in its own order (RaceCheck.h): sdma's signals, waits
// and fences order a whole rank, more than MSCCL++'s order one thread
// block. Not imported, with the op named: get (a copy a peer reads, which
// sdma writes as the owner's put), relaxed signals and waits (they order no
// data), the LL packet ops, NVLS switch channels and their ops,
// semaphores, pipelines.
//
//===----------------------------------------------------------------------===//

#include "JsonReader.h"
#include "RaceCheck.h"
#include "ScheduleWriter.h"

#include "sdma/InitAllDialects.h"
#include "sdma/Target/MSCCL.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

#include <set>

using namespace mlir;
using namespace sdma;
using namespace sdma::msccl;
using json::Position;
using JValue = sdma::json::Value;

namespace {

/// A run of chunks of a buffer of some rank.
struct Ref {
  int rank = 0;
  char buffer = 'i';
  int64_t index = 0, size = 1;
  Position at;
};

struct Op {
  std::string name;
  Position at;
  std::vector<Ref> src, dst;
  /// signal / wait / pws: (peer, tag) per channel.
  std::vector<std::pair<int, int>> channels;
  int64_t barrier = -1, participants = 0;
};

struct Block {
  int id = 0;
  std::vector<Op> ops;
};

struct Gpu {
  int id = 0;
  int64_t input = 0, output = 0, scratch = 0;
  std::vector<Block> blocks;
  Position at;
};

/// Reads a plan, reporting at the JSON value at fault.
class PlanReader {
public:
  PlanReader(ScheduleWriter &writer) : writer_(writer) {}

  bool read(const JValue &root);

  std::string name, collective;
  bool inplace = false;
  std::vector<Gpu> gpus;

private:
  bool fail(Position at, const Twine &message) {
    emitError(writer_.loc(at)) << message;
    return false;
  }
  const JValue *member(const JValue &object, StringRef key, JValue::Kind kind,
                       bool required, const char *what);
  std::optional<int64_t> integer(const JValue &object, StringRef key,
                                 int64_t min, int64_t max, bool required,
                                 int64_t fallback = 0);
  bool readGpu(const JValue &v, size_t index);
  bool readOp(const JValue &v, Gpu &gpu, const JValue &tb, Op &op);
  bool readRef(const JValue &v, const Gpu &gpu, const JValue &tb,
               StringRef channelType, Ref &ref);

  ScheduleWriter &writer_;
  /// Per gpu, per channel type: the peer and pair index of each channel.
  std::vector<std::map<std::string, std::vector<std::pair<int, int>>>>
      channels_;
  /// Per gpu: the remote buffers (rank, type).
  std::vector<std::vector<std::pair<int, char>>> remote_;
};

const JValue *PlanReader::member(const JValue &object, StringRef key,
                                 JValue::Kind kind, bool required,
                                 const char *what) {
  const JValue *v = object.find(key);
  if (!v) {
    if (required)
      fail(object.at, "this object has no \"" + key + "\" (" + what + ")");
    return nullptr;
  }
  if (v->kind != kind) {
    JValue want;
    want.kind = kind;
    fail(v->at, "\"" + key + "\" is " + v->describe() + "; it must be " +
                    want.describe());
    return nullptr;
  }
  return v;
}

std::optional<int64_t> PlanReader::integer(const JValue &object, StringRef key,
                                           int64_t min, int64_t max,
                                           bool required, int64_t fallback) {
  const JValue *v = object.find(key);
  if (!v) {
    if (required)
      fail(object.at, "this object has no \"" + key + "\"");
    return required ? std::nullopt : std::optional<int64_t>(fallback);
  }
  std::optional<int64_t> n = v->integer();
  if (!n || *n < min || *n > max) {
    fail(v->at, "\"" + key + "\" must be an integer in [" +
                    std::to_string(min) + ", " + std::to_string(max) + "]");
    return std::nullopt;
  }
  return n;
}

bool PlanReader::read(const JValue &root) {
  if (root.kind != JValue::Object)
    return fail(root.at, "an execution plan is a JSON object, not " +
                             std::string(root.describe()));
  if (const JValue *n = member(root, "name", JValue::String, false, ""))
    name = n->text;
  const JValue *c = member(root, "collective", JValue::String, true,
                           "allgather, allreduce, reducescatter, alltoall...");
  if (!c)
    return false;
  collective = c->text;
  if (const JValue *p = root.find("inplace")) {
    if (p->kind != JValue::Bool)
      return fail(p->at, "\"inplace\" must be true or false");
    inplace = p->boolean;
  }
  const JValue *list =
      member(root, "gpus", JValue::Array, true, "one per rank");
  if (!list)
    return false;
  if (list->items.empty())
    return fail(list->at, "the plan has no gpus");
  gpus.resize(list->items.size());
  channels_.resize(gpus.size());
  remote_.resize(gpus.size());
  // Channels and remote buffers first: ops refer to every gpu's.
  for (size_t g = 0; g < list->items.size(); ++g)
    if (!readGpu(list->items[g], g))
      return false;
  // Every slice inside its buffer, now that every gpu's sizes are known.
  for (const Gpu &gpu : gpus)
    for (const Block &b : gpu.blocks)
      for (const Op &op : b.ops)
        for (const std::vector<Ref> *side : {&op.src, &op.dst})
          for (const Ref &r : *side) {
            const Gpu &owner = gpus[r.rank];
            int64_t chunks = r.buffer == 'i'   ? owner.input
                             : r.buffer == 'o' ? owner.output
                                               : owner.scratch;
            if (r.index + r.size > chunks)
              return fail(r.at, "chunks [" + std::to_string(r.index) + ", " +
                                    std::to_string(r.index + r.size) + ") of " +
                                    std::string(1, r.buffer) + " on rank " +
                                    std::to_string(r.rank) +
                                    " are past its end (" +
                                    std::to_string(chunks) + " chunks)");
          }
  return true;
}

bool PlanReader::readGpu(const JValue &v, size_t index) {
  if (v.kind != JValue::Object)
    return fail(v.at, "a gpu is an object");
  int64_t R = int64_t(gpus.size());
  Gpu &gpu = gpus[index];
  gpu.at = v.at;
  std::optional<int64_t> id = integer(v, "id", 0, R - 1, true);
  if (!id)
    return false;
  if (*id != int64_t(index))
    return fail(v.find("id")->at, "gpu " + std::to_string(index) +
                                      " of the list has id " +
                                      std::to_string(*id));
  gpu.id = int(*id);
  std::optional<int64_t> in = integer(v, "input_chunks", 0, INT32_MAX, true),
                         out = integer(v, "output_chunks", 0, INT32_MAX, true),
                         s = integer(v, "scratch_chunks", 0, INT32_MAX, false);
  if (!in || !out || !s)
    return false;
  gpu.input = *in;
  gpu.output = *out;
  gpu.scratch = *s;
  if (const JValue *chans = member(v, "channels", JValue::Array, false, "")) {
    std::map<std::pair<std::string, int>, int> pairs;
    for (const JValue &ch : chans->items) {
      const JValue *type =
          member(ch, "channel_type", JValue::String, true, "memory or port");
      if (!type)
        return false;
      if (type->text != "memory" && type->text != "port")
        return fail(type->at, "channel type \"" + type->text +
                                  "\" is not imported (memory and port are; "
                                  "switch channels are NVLS multicast)");
      const JValue *to =
          member(ch, "connected_to", JValue::Array, true, "peer ranks");
      if (!to)
        return false;
      for (const JValue &peer : to->items) {
        std::optional<int64_t> p = peer.integer();
        if (!p || *p < 0 || *p >= R || *p == gpu.id)
          return fail(peer.at, "a channel connects to another rank of the "
                               "plan (0.." +
                                   std::to_string(R - 1) + ", not " +
                                   std::to_string(gpu.id) + " itself)");
        int k = pairs[{type->text, int(*p)}]++;
        channels_[index][type->text].push_back({int(*p), k});
      }
    }
  }
  if (const JValue *bufs =
          member(v, "remote_buffers", JValue::Array, false, "")) {
    for (const JValue &b : bufs->items) {
      std::optional<int64_t> rank = integer(b, "rank", 0, R - 1, true);
      const JValue *type = member(b, "type", JValue::String, true, "i, o or s");
      if (!rank || !type)
        return false;
      if (type->text != "i" && type->text != "o" && type->text != "s")
        return fail(type->at,
                    "a buffer type is i, o or s, not \"" + type->text + "\"");
      remote_[index].push_back({int(*rank), type->text[0]});
    }
  }
  const JValue *tbs =
      member(v, "threadblocks", JValue::Array, true, "the gpu's programs");
  if (!tbs)
    return false;
  for (const JValue &tb : tbs->items) {
    if (tb.kind != JValue::Object)
      return fail(tb.at, "a thread block is an object");
    Block block;
    block.id = int(gpu.blocks.size());
    const JValue *ops = member(tb, "ops", JValue::Array, true, "its program");
    if (!ops)
      return false;
    for (const JValue &o : ops->items) {
      Op op;
      if (!readOp(o, gpu, tb, op))
        return false;
      block.ops.push_back(std::move(op));
    }
    gpu.blocks.push_back(std::move(block));
  }
  return true;
}

bool PlanReader::readRef(const JValue &v, const Gpu &gpu, const JValue &tb,
                         StringRef channelType, Ref &ref) {
  if (v.kind != JValue::Object)
    return fail(v.at, "a buffer reference is an object");
  std::optional<int64_t> index = integer(v, "index", 0, INT32_MAX, true),
                         size = integer(v, "size", 1, INT32_MAX, true);
  if (!index || !size)
    return false;
  ref.index = *index;
  ref.size = *size;
  if (const JValue *type = v.find("type")) {
    if (type->kind != JValue::String ||
        (type->text != "i" && type->text != "o" && type->text != "s"))
      return fail(type->at, "a buffer type is \"i\", \"o\" or \"s\"");
    ref.rank = gpu.id;
    ref.buffer = type->text[0];
  } else {
    std::optional<int64_t> id = integer(v, "buffer_id", 0, INT32_MAX, true);
    if (!id)
      return false;
    // The thread block's remote buffers of the op's channel type.
    const JValue *refs = tb.find("remote_buffer_refs");
    const JValue *ids = nullptr;
    for (size_t i = 0; refs && i < refs->items.size(); ++i) {
      const JValue *t = refs->items[i].find("access_channel_type");
      if (t && t->text == channelType)
        ids = refs->items[i].find("remote_buffer_ids");
    }
    std::optional<int64_t> remote = ids && *id < int64_t(ids->items.size())
                                        ? ids->items[*id].integer()
                                        : std::nullopt;
    if (!remote || *remote < 0 || *remote >= int64_t(remote_[gpu.id].size()))
      return fail(v.find("buffer_id")->at,
                  "buffer_id " + std::to_string(*id) +
                      " names no remote buffer of this thread block for " +
                      channelType + " channels");
    ref.rank = remote_[gpu.id][*remote].first;
    ref.buffer = remote_[gpu.id][*remote].second;
  }
  ref.at = v.at;
  return true;
}

bool PlanReader::readOp(const JValue &v, Gpu &gpu, const JValue &tb, Op &op) {
  op.at = v.at;
  const JValue *name = member(v, "name", JValue::String, true, "the op");
  if (!name)
    return false;
  op.name = name->text;
  static const std::set<std::string> known = {
      "nop",   "barrier", "signal", "wait", "put", "pws", "pwsf",
      "flush", "copy",    "re",     "res",  "rre", "rres"};
  static const std::set<std::string> refused = {
      "get",    "rlxsignal", "rlxwait",     "ppkt",        "rppkt",   "cpkt",
      "upkt",   "repkt",     "respkt",      "recpkt",      "recspkt", "glres",
      "gstore", "gstorepkt", "sem_acquire", "sem_release", "pipeline"};
  if (refused.count(op.name))
    return fail(name->at,
                "op \"" + op.name + "\" is not imported: " +
                    (op.name == "get"
                         ? std::string("a copy that reads a peer (sdma "
                                       "writes copies as their owner's put)")
                     : op.name.rfind("rlx", 0) == 0
                         ? std::string("a relaxed signal orders no data, "
                                       "and sdma's signals do")
                     : op.name.find("pkt") != std::string::npos
                         ? std::string("LL packets carry data and flags "
                                       "together")
                     : op.name[0] == 'g'
                         ? std::string("NVLS multicast")
                         : std::string("semaphores and pipelines are not "
                                       "modelled")));
  if (!known.count(op.name))
    return fail(name->at, "unknown op \"" + op.name + "\"");
  std::string channelType = "memory";
  if (const JValue *t = v.find("channel_type"))
    channelType = t->text;
  auto refs = [&](const char *key, std::vector<Ref> &out) {
    const JValue *list = v.find(key);
    if (!list)
      return true;
    if (list->kind != JValue::Array)
      return fail(list->at, std::string("\"") + key + "\" is an array");
    for (const JValue &r : list->items) {
      Ref ref;
      if (!readRef(r, gpu, tb, channelType, ref))
        return false;
      out.push_back(ref);
    }
    return true;
  };
  if (!refs("src_buff", op.src) || !refs("dst_buff", op.dst))
    return false;
  // Channels: the thread block's of this type, then the gpu's.
  if (const JValue *ids = v.find("channel_ids")) {
    const JValue *table = nullptr;
    if (const JValue *tchans = tb.find("channels"))
      for (const JValue &tc : tchans->items) {
        const JValue *t = tc.find("channel_type");
        if (t && t->text == channelType)
          table = tc.find("channel_ids");
      }
    for (const JValue &id : ids->items) {
      std::optional<int64_t> local = id.integer();
      std::optional<int64_t> global =
          table && local && *local >= 0 && *local < int64_t(table->items.size())
              ? table->items[*local].integer()
              : std::nullopt;
      const auto &all = channels_[gpu.id][channelType];
      if (!global || *global < 0 || *global >= int64_t(all.size()))
        return fail(id.at, "channel " + id.text +
                               " is not one of this thread block's " +
                               channelType + " channels");
      auto [peer, k] = all[*global];
      op.channels.push_back({peer, 2 * k + (channelType == "port")});
    }
  }
  if (op.name == "barrier") {
    std::optional<int64_t> b = integer(v, "barrier_id", 0, INT32_MAX, true),
                           n = integer(v, "num_threadblocks", 1, INT32_MAX,
                                       true);
    if (!b || !n)
      return false;
    op.barrier = *b;
    op.participants = *n;
  }
  bool puts = op.name == "put" || op.name == "pws" || op.name == "pwsf";
  bool reduces = op.name == "re" || op.name == "res" || op.name == "rre" ||
                 op.name == "rres";
  if ((puts && (op.src.size() != op.dst.size() || op.src.empty())) ||
      (op.name == "copy" && (op.src.size() != 1 || op.dst.size() != 1)) ||
      (reduces && (op.src.size() < 2 || op.dst.empty())))
    return fail(op.at, "op \"" + op.name + "\" has " +
                           std::to_string(op.src.size()) + " sources and " +
                           std::to_string(op.dst.size()) + " destinations");
  bool moves = puts || reduces || op.name == "copy";
  if (!moves && (!op.src.empty() || !op.dst.empty()))
    return fail(op.at, "op \"" + op.name +
                           "\" moves no data; it takes no "
                           "src_buff or dst_buff");
  // What each op reads and writes locally: a put's and a copy's source, a
  // copy's and a reduction's destination, a reduction's first operand.
  auto local = [&](const std::vector<Ref> &side, size_t upTo) {
    for (size_t i = 0; i < side.size() && i < upTo; ++i)
      if (side[i].rank != gpu.id)
        return false;
    return true;
  };
  if ((puts && !local(op.src, op.src.size())) ||
      (op.name == "copy" && (!local(op.src, 1) || !local(op.dst, 1))) ||
      (reduces && (!local(op.src, 1) || !local(op.dst, 1))) ||
      ((op.name == "re" || op.name == "res") && !local(op.src, op.src.size())))
    return fail(op.at, "op \"" + op.name +
                           "\" names another rank's buffer "
                           "where it reads or writes its own");
  for (const std::vector<Ref> *side : {&op.src, &op.dst})
    for (const Ref &r : *side)
      if (r.size != op.src.front().size)
        return fail(op.at,
                    "the buffers of op \"" + op.name + "\" differ in size");
  return true;
}

} // namespace

namespace {

/// An op of the plan, or (block -1) the n-th instance of a barrier.
struct Node {
  int gpu = 0, block = 0, op = 0;
  bool operator<(const Node &o) const {
    return std::tie(gpu, block, op) < std::tie(o.gpu, o.block, o.op);
  }
};

class PlanImporter {
public:
  PlanImporter(PlanReader &plan, ScheduleWriter &writer)
      : plan_(plan), writer_(writer) {}
  OwningOpRef<Operation *> run(Position at);

private:
  const Op &op(Node n) const {
    return plan_.gpus[n.gpu].blocks[n.block].ops[n.op];
  }
  bool graph();
  bool linearize();
  /// Races in the plan's own order (RaceCheck.h), reported.
  bool raceFree();
  void emit(Node n);
  std::string slice(const Ref &r) const {
    return writer_.slice(r.rank, r.buffer, r.index, r.size);
  }

  PlanReader &plan_;
  ScheduleWriter &writer_;
  std::map<Node, std::vector<Node>> succ_, pred_;
  std::map<Node, int> indegree_;
  std::vector<Node> nodes_, order_;
  /// Barrier instances: (gpu, barrier id, n) -> node (block -1).
  std::map<std::tuple<int, int64_t, int>, Node> barriers_;
};

bool PlanImporter::graph() {
  auto edge = [&](Node a, Node b) {
    succ_[a].push_back(b);
    pred_[b].push_back(a);
    ++indegree_[b];
  };
  // (from, to, tag) -> the signalling ops in order; waits likewise.
  std::map<std::tuple<int, int, int>, std::vector<Node>> signals, waits;
  std::map<std::tuple<int, int64_t, int>, int64_t> arrived;
  int instances = 0;
  for (const Gpu &gpu : plan_.gpus)
    for (const Block &b : gpu.blocks) {
      std::map<int64_t, int> seen; // barrier id -> instances so far
      for (size_t i = 0; i < b.ops.size(); ++i) {
        Node n{gpu.id, b.id, int(i)};
        nodes_.push_back(n);
        indegree_[n];
        if (i > 0)
          edge({gpu.id, b.id, int(i) - 1}, n);
        const Op &o = b.ops[i];
        bool signals_ =
            o.name == "signal" || o.name == "pws" || o.name == "pwsf";
        bool waits_ = o.name == "wait";
        for (auto [peer, tag] : o.channels) {
          if (signals_)
            signals[{gpu.id, peer, tag}].push_back(n);
          if (waits_)
            waits[{peer, gpu.id, tag}].push_back(n);
        }
        if (o.name == "barrier") {
          auto key = std::tuple(gpu.id, o.barrier, seen[o.barrier]++);
          auto [it, fresh] =
              barriers_.insert({key, Node{gpu.id, -1, instances}});
          if (fresh)
            ++instances;
          ++arrived[key];
          // Every participant's earlier ops, then the instance, then its
          // later ones (through the barrier op itself).
          if (i > 0)
            edge({gpu.id, b.id, int(i) - 1}, it->second);
          edge(it->second, n);
        }
      }
    }
  for (auto &[key, node] : barriers_) {
    nodes_.push_back(node);
    indegree_[node];
    const Op *first = nullptr;
    for (Node p : succ_[node])
      first = &op(p);
    if (arrived[key] != first->participants) {
      emitError(writer_.loc(first->at))
          << "barrier " << std::get<1>(key) << " of gpu " << std::get<0>(key)
          << " (occurrence " << std::get<2>(key) << ") is reached by "
          << arrived[key] << " thread blocks but waits for "
          << first->participants << ": it never opens";
      return false;
    }
  }
  for (auto &[key, ws] : waits) {
    std::vector<Node> &ss = signals[key];
    for (size_t k = 0; k < ws.size(); ++k) {
      if (k >= ss.size()) {
        emitError(writer_.loc(op(ws[k]).at))
            << "this wait of gpu " << std::get<1>(key) << " is number " << k + 1
            << " on its channel from gpu " << std::get<0>(key)
            << ", which signals that channel " << ss.size()
            << " times: it never returns";
        return false;
      }
      edge(ss[k], ws[k]);
    }
  }
  return true;
}

bool PlanImporter::linearize() {
  std::set<std::tuple<int, int, int, int>> ready; // (op, gpu, block, node)
  auto key = [](Node n) { return std::tuple(n.op, n.gpu, n.block, 0); };
  std::map<std::tuple<int, int, int, int>, Node> byKey;
  for (Node n : nodes_) {
    byKey[key(n)] = n;
    if (!indegree_[n])
      ready.insert(key(n));
  }
  while (!ready.empty()) {
    Node n = byKey[*ready.begin()];
    ready.erase(ready.begin());
    order_.push_back(n);
    for (Node m : succ_[n])
      if (--indegree_[m] == 0)
        ready.insert(key(m));
  }
  if (order_.size() == nodes_.size())
    return true;
  std::vector<Node> cycle = leftoverCycle(nodes_, indegree_, pred_,
                                          [](Node n) { return n.block >= 0; });
  std::string chain;
  for (Node n : cycle) {
    if (n.block < 0) {
      chain += "\n  a barrier of gpu " + std::to_string(n.gpu);
      continue;
    }
    chain += "\n  gpu " + std::to_string(n.gpu) + " thread block " +
             std::to_string(n.block) + " op " + std::to_string(n.op) + " (" +
             op(n).name + ", line " + std::to_string(op(n).at.line) + ")";
  }
  // A barrier's node is never alone in a cycle: name the first op's place.
  Node first = cycle.front();
  for (Node n : cycle)
    if (n.block >= 0) {
      first = n;
      break;
    }
  emitError(writer_.loc(op(first).at))
      << "the plan deadlocks: its ops wait on each other in a cycle "
         "(each waits for the next):"
      << chain;
  return false;
}

void PlanImporter::emit(Node n) {
  int g = n.gpu;
  if (n.block < 0) {
    // Once every thread block has reached it: everything before first.
    const Op *any = nullptr;
    for (Node s : succ_[n])
      any = &op(s);
    writer_.emit(g, any->at, "sdma.fence on " + std::to_string(g));
    return;
  }
  const Op &o = op(n);
  std::string engine = " {engine = " + std::to_string(n.block) + " : i64}";
  const std::string &kind = reduceOpOption();
  if (o.name == "put" || o.name == "pws" || o.name == "pwsf" ||
      o.name == "copy")
    for (size_t i = 0; i < o.src.size(); ++i)
      writer_.emit(g, o.at,
                   "sdma.copy " + slice(o.src[i]) + " -> " + slice(o.dst[i]) +
                       engine);
  if (o.name == "re" || o.name == "res" || o.name == "rre" ||
      o.name == "rres") {
    // dst = src0 op src1 op ...: reduce into dst the operands it is not
    // (copying src0 first where dst is none of them).
    const Ref &dst = o.dst.front();
    auto same = [](const Ref &a, const Ref &b) {
      return a.rank == b.rank && a.buffer == b.buffer && a.index == b.index;
    };
    size_t in = o.src.size();
    for (size_t i = 0; i < o.src.size(); ++i)
      if (same(o.src[i], dst))
        in = i;
    if (in == o.src.size())
      writer_.emit(g, o.at,
                   "sdma.copy " + slice(o.src.front()) + " -> " + slice(dst) +
                       engine);
    for (size_t i = 0; i < o.src.size(); ++i)
      if (i != in && (in != o.src.size() || i > 0))
        writer_.emit(g, o.at,
                     "sdma.reduce " + kind + " " + slice(dst) + " <- " +
                         slice(o.src[i]) + engine);
    for (size_t i = 1; i < o.dst.size(); ++i)
      writer_.emit(g, o.at,
                   "sdma.copy " + slice(dst) + " -> " + slice(o.dst[i]) +
                       engine);
  }
  bool signal = o.name == "signal" || o.name == "pws" || o.name == "pwsf";
  bool wait = o.name == "wait";
  for (auto [peer, tag] : o.channels) {
    if (signal)
      writer_.emit(g, o.at,
                   "sdma.signal " + std::to_string(g) + " -> " +
                       std::to_string(peer) + " tag " + std::to_string(tag));
    if (wait)
      writer_.emit(g, o.at,
                   "sdma.wait " + std::to_string(g) + " <- " +
                       std::to_string(peer) + " tag " + std::to_string(tag));
  }
}

bool PlanImporter::raceFree() {
  std::vector<Access<Node>> all;
  for (Node n : order_) {
    if (n.block < 0)
      continue;
    const Op &o = op(n);
    bool moves = o.name == "put" || o.name == "pws" || o.name == "pwsf" ||
                 o.name == "copy" || o.name == "re" || o.name == "res" ||
                 o.name == "rre" || o.name == "rres";
    if (!moves)
      continue;
    auto add = [&](const Ref &r, bool write) {
      auto [name, offset] = writer_.where(r.rank, r.buffer, r.index);
      all.push_back({n, r.rank, name, offset, offset + r.size, write});
    };
    for (const Ref &r : o.src)
      add(r, false);
    for (const Ref &r : o.dst)
      add(r, true);
  }
  auto race = findRace(order_, pred_, all);
  if (!race)
    return true;
  auto [a, b] = *race;
  auto name = [&](Node n) {
    return "op " + std::to_string(n.op) + " (" + op(n).name +
           ") of thread block " + std::to_string(n.block) + " of gpu " +
           std::to_string(n.gpu);
  };
  auto what = [&](const Access<Node> &x) {
    return std::string(x.write ? "writes" : "reads") + " " +
           x.buffer.substr(1) + "[" + std::to_string(x.lo) + ", " +
           std::to_string(x.hi) + ") of rank " + std::to_string(x.rank);
  };
  InFlightDiagnostic d = emitError(writer_.loc(op(a.node).at))
                         << name(a.node) << " " << what(a) << " while "
                         << name(b.node) << " " << what(b)
                         << ", and nothing orders the two (thread-block "
                            "order, a signal and its wait, or a barrier): a "
                            "race";
  d.attachNote(writer_.loc(op(b.node).at)) << "the other op";
  return false;
}

OwningOpRef<Operation *> PlanImporter::run(Position at) {
  bool reduces = false;
  std::vector<int64_t> in, out;
  int64_t scratch = 0;
  for (const Gpu &gpu : plan_.gpus) {
    in.push_back(gpu.input);
    out.push_back(gpu.output);
    scratch = std::max(scratch, gpu.scratch);
    for (const Block &b : gpu.blocks)
      for (const Op &o : b.ops)
        reduces |= o.name == "re" || o.name == "res" || o.name == "rre" ||
                   o.name == "rres";
  }
  writer_.setShape(plan_.collective, plan_.inplace, reduces, in, out, scratch);
  for (const Gpu &gpu : plan_.gpus) {
    bool blameInput = false;
    std::string what = writer_.misfit(gpu.id, blameInput);
    if (!what.empty()) {
      emitError(writer_.loc(gpu.at))
          << "gpu " << gpu.id << " has " << gpu.input << " input and "
          << gpu.output << " output chunks, but " << what;
      return nullptr;
    }
  }
  if (!graph() || !linearize() || !raceFree())
    return nullptr;
  writer_.prologue(at);
  for (Node n : order_)
    emit(n);
  writer_.epilogue(at);
  return writer_.finish(plan_.name.empty() ? "mscclpp" : plan_.name, at);
}

OwningOpRef<Operation *> importMscclppJson(llvm::SourceMgr &sourceMgr,
                                           MLIRContext *context) {
  if (!checkOptions(context))
    return nullptr;
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  ScheduleWriter writer(context, buffer->getBufferIdentifier().str());
  std::string why;
  Position where;
  std::optional<JValue> root = json::parse(buffer->getBuffer(), why, where);
  if (!root) {
    emitError(writer.loc(where)) << why;
    return nullptr;
  }
  PlanReader plan(writer);
  if (!plan.read(*root))
    return nullptr;
  return PlanImporter(plan, writer).run(root->at);
}

} // namespace

void sdma::registerImportMscclppJsonTranslation() {
  TranslateToMLIRRegistration registration(
      "import-mscclpp-json",
      "read an MSCCL++ execution plan (JSON) as an sdma schedule",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return importMscclppJson(sourceMgr, context);
      },
      registerAllDialects);
}
