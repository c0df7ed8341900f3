//===- MscclAlgo.cpp - an MSCCL algorithm, read and checked ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "MscclAlgo.h"

#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace sdma;
using namespace sdma::msccl;

namespace {

struct TypeName {
  llvm::StringRef name;
  StepType type;
};
constexpr TypeName kTypes[] = {
    {"s", StepType::Send},
    {"r", StepType::Recv},
    {"rcs", StepType::RecvCopySend},
    {"rrs", StepType::RecvReduceSend},
    {"rrc", StepType::RecvReduceCopy},
    {"rrcs", StepType::RecvReduceCopySend},
    {"cpy", StepType::Copy},
    {"re", StepType::Reduce},
    {"nop", StepType::Nop},
};

/// The attributes of one element, read with their checks.
class Fields {
public:
  Fields(const xml::Element &e, const Report &report)
      : e_(e), report_(report) {}

  /// A required integer in [min, max].
  std::optional<int64_t> integer(llvm::StringRef name, int64_t min,
                                 int64_t max) {
    const xml::Attribute *a = need(name);
    if (!a)
      return std::nullopt;
    return parse(*a, a->value, min, max);
  }
  /// An optional integer (fallback when absent).
  std::optional<int64_t> integerOr(llvm::StringRef name, int64_t fallback,
                                   int64_t min, int64_t max) {
    const xml::Attribute *a = e_.find(name);
    return a ? parse(*a, a->value, min, max) : fallback;
  }
  std::optional<std::string> text(llvm::StringRef name) {
    const xml::Attribute *a = need(name);
    if (!a)
      return std::nullopt;
    return a->value;
  }
  const xml::Attribute *need(llvm::StringRef name) {
    if (const xml::Attribute *a = e_.find(name))
      return a;
    fail(nullptr, "<" + e_.name + "> has no '" + name.str() + "' attribute");
    return nullptr;
  }
  void fail(const xml::Attribute *a, const std::string &message) {
    ok = false;
    report_(e_, a, message);
  }
  const xml::Element &element() const { return e_; }
  bool ok = true;

private:
  std::optional<int64_t> parse(const xml::Attribute &a, llvm::StringRef text,
                               int64_t min, int64_t max) {
    int64_t v = 0;
    if (text.getAsInteger(10, v)) {
      fail(&a, "'" + a.name + "' must be an integer, not \"" + a.value + "\"");
      return std::nullopt;
    }
    if (v < min || v > max) {
      fail(&a, "'" + a.name + "' is " + std::to_string(v) + "; it must be " +
                   (max == INT32_MAX ? "at least " + std::to_string(min)
                                     : "in [" + std::to_string(min) + ", " +
                                           std::to_string(max) + "]"));
      return std::nullopt;
    }
    return v;
  }

  const xml::Element &e_;
  const Report &report_;
};

/// The children of `e` named `name`; any other child is reported.
std::vector<const xml::Element *> children(const xml::Element &e,
                                           llvm::StringRef name,
                                           const Report &report, bool &ok) {
  std::vector<const xml::Element *> out;
  for (const auto &c : e.children) {
    if (c->name == name) {
      out.push_back(c.get());
      continue;
    }
    ok = false;
    report(*c, nullptr,
           "<" + c->name + "> inside <" + e.name + "> (expected <" +
               name.str() + ">)");
  }
  return out;
}

std::optional<Step> readStep(const xml::Element &e, int index, const Gpu &gpu,
                             const ThreadBlock &tb, const Report &report) {
  Fields f(e, report);
  Step step;
  step.element = &e;
  std::optional<int64_t> s = f.integer("s", 0, INT32_MAX);
  if (s && *s != index)
    f.fail(e.find("s"), "step " + std::to_string(*s) + " is step " +
                            std::to_string(index) + " of its thread block");
  if (std::optional<std::string> t = f.text("type")) {
    bool known = false;
    for (const TypeName &k : kTypes)
      if (k.name == *t) {
        step.type = k.type;
        known = true;
      }
    if (!known)
      f.fail(e.find("type"),
             "unknown step type '" + *t +
                 "' (s, r, rcs, rrs, rrc, rrcs, cpy, re or nop)");
    else if (sends(step.type) && tb.send < 0)
      f.fail(e.find("type"), "a '" + *t + "' step sends, but thread block " +
                                 std::to_string(tb.id) +
                                 " has no send peer (send=\"-1\")");
    else if (receives(step.type) && tb.recv < 0)
      f.fail(e.find("type"), "a '" + *t + "' step receives, but thread block " +
                                 std::to_string(tb.id) +
                                 " has no receive peer (recv=\"-1\")");
  }
  std::optional<int64_t> count = f.integer("cnt", 1, INT32_MAX);
  step.count = count.value_or(1);
  bool readsSrc = readsSource(step.type);
  bool writesDst = writesDestination(step.type);
  auto slice = [&](const char *bufName, const char *offName, bool used,
                   Slice &out) {
    const xml::Attribute *b = f.need(bufName);
    // -1: no slice (msccl-tools writes it where a step has none).
    std::optional<int64_t> off = f.integer(offName, -1, INT32_MAX);
    if (!b || !off)
      return;
    if (*off < 0 && used) {
      f.fail(e.find(offName), std::string("a '") + stepTypeName(step.type) +
                                  "' step uses its " + offName +
                                  ", which is -1 (no slice)");
      return;
    }
    if (b->value != "i" && b->value != "o" && b->value != "s") {
      f.fail(b, std::string("'") + bufName + "' is \"" + b->value +
                    "\"; a buffer is i (input), o (output) or s (scratch)");
      return;
    }
    out.buffer = b->value[0];
    out.offset = *off;
    int64_t size = gpu.chunks(out.buffer);
    if (used && count && *off + *count > size)
      f.fail(e.find(offName),
             "chunks [" + std::to_string(*off) + ", " +
                 std::to_string(*off + *count) + ") of buffer " + b->value +
                 " are past its end: gpu " + std::to_string(gpu.id) + " has " +
                 std::to_string(size) + " chunks there");
  };
  slice("srcbuf", "srcoff", readsSrc, step.src);
  slice("dstbuf", "dstoff", writesDst, step.dst);
  std::optional<int64_t> depid = f.integer("depid", -1, INT32_MAX);
  std::optional<int64_t> deps = f.integer("deps", -1, INT32_MAX);
  step.hasdep = f.integer("hasdep", 0, 1).value_or(0) == 1;
  if (depid && deps && (*depid >= 0 || *deps >= 0)) {
    int64_t b = *depid, d = *deps;
    if (b < 0 || b >= int64_t(gpu.blocks.size()) || d < 0)
      f.fail(
          e.find(b < 0 || b >= int64_t(gpu.blocks.size()) ? "depid" : "deps"),
          "depends on step " + std::to_string(d) + " of thread block " +
              std::to_string(b) + ", which gpu " + std::to_string(gpu.id) +
              " does not have");
    else
      step.deps.push_back({int(b), int(d)});
  }
  if (!f.ok)
    return std::nullopt;
  return step;
}

} // namespace

const char *sdma::msccl::stepTypeName(StepType type) {
  for (const TypeName &k : kTypes)
    if (k.type == type)
      return k.name.data();
  return "?";
}

bool sdma::msccl::sends(StepType t) {
  return t == StepType::Send || t == StepType::RecvCopySend ||
         t == StepType::RecvReduceSend || t == StepType::RecvReduceCopySend;
}

bool sdma::msccl::receives(StepType t) {
  return t == StepType::Recv || t == StepType::RecvCopySend ||
         t == StepType::RecvReduceSend || t == StepType::RecvReduceCopy ||
         t == StepType::RecvReduceCopySend;
}

bool sdma::msccl::readsSource(StepType t) {
  return t != StepType::Recv && t != StepType::RecvCopySend &&
         t != StepType::Nop;
}

bool sdma::msccl::writesDestination(StepType t) {
  return t == StepType::Recv || t == StepType::RecvCopySend ||
         t == StepType::RecvReduceCopy || t == StepType::RecvReduceCopySend ||
         t == StepType::Copy || t == StepType::Reduce;
}

bool sdma::msccl::reducesReceived(StepType t) {
  return t == StepType::RecvReduceSend || t == StepType::RecvReduceCopy ||
         t == StepType::RecvReduceCopySend;
}

namespace {

/// Reads the gpus' thread blocks (without their steps) and checks the
/// connections: one sender and one receiver per (from, to, channel).
bool readBlocks(Algorithm &algo, const Report &report) {
  bool ok = true;
  for (Gpu &gpu : algo.gpuList) {
    std::vector<const xml::Element *> tbs =
        children(*gpu.element, "tb", report, ok);
    gpu.blocks.resize(tbs.size());
    std::vector<bool> seen(tbs.size(), false);
    for (const xml::Element *e : tbs) {
      Fields f(*e, report);
      std::optional<int64_t> id = f.integer("id", 0, int64_t(tbs.size()) - 1);
      std::optional<int64_t> send = f.integer("send", -1, algo.gpus - 1);
      std::optional<int64_t> recv = f.integer("recv", -1, algo.gpus - 1);
      std::optional<int64_t> chan =
          f.integerOr("chan", 0, 0, std::max(0, algo.channels - 1));
      for (auto [v, name] : {std::pair{send, "send"}, {recv, "recv"}})
        if (v && *v == gpu.id)
          f.fail(e->find(name), std::string("thread block ") + name +
                                    "s to its own gpu " +
                                    std::to_string(gpu.id));
      if (id && seen[*id])
        f.fail(e->find("id"), "thread block " + std::to_string(*id) +
                                  " of gpu " + std::to_string(gpu.id) +
                                  " appears twice");
      if (!f.ok) {
        ok = false;
        continue;
      }
      seen[*id] = true;
      ThreadBlock &tb = gpu.blocks[*id];
      tb.id = int(*id);
      tb.send = int(*send);
      tb.recv = int(*recv);
      tb.channel = int(*chan);
      tb.element = e;
    }
    if (!ok)
      continue;
    // One thread block per connection end.
    std::map<std::pair<int, int>, int> sender, receiver;
    for (const ThreadBlock &tb : gpu.blocks)
      for (auto [peer, ends, name] : {std::tuple{tb.send, &sender, "send"},
                                      std::tuple{tb.recv, &receiver, "recv"}}) {
        if (peer < 0)
          continue;
        auto [it, fresh] = ends->insert({{peer, tb.channel}, tb.id});
        if (fresh)
          continue;
        ok = false;
        report(*tb.element, tb.element->find(name),
               "thread blocks " + std::to_string(it->second) + " and " +
                   std::to_string(tb.id) + " of gpu " + std::to_string(gpu.id) +
                   " both " +
                   (std::string(name) == "send" ? "send to" : "receive from") +
                   " gpu " + std::to_string(peer) + " on channel " +
                   std::to_string(tb.channel));
      }
  }
  return ok;
}

/// Pairs every sending step with its receiving step, connection by
/// connection, in order.
bool matchMessages(Algorithm &algo, const Report &report) {
  bool ok = true;
  // (from, to, channel) -> the steps that send / receive on it, in order.
  std::map<std::tuple<int, int, int>, std::vector<StepRef>> out, in;
  for (const Gpu &gpu : algo.gpuList)
    for (const ThreadBlock &tb : gpu.blocks)
      for (size_t s = 0; s < tb.steps.size(); ++s) {
        StepRef ref{gpu.id, tb.id, int(s)};
        if (sends(tb.steps[s].type))
          out[{gpu.id, tb.send, tb.channel}].push_back(ref);
        if (receives(tb.steps[s].type))
          in[{tb.recv, gpu.id, tb.channel}].push_back(ref);
      }
  auto where = [&](StepRef r) {
    return "gpu " + std::to_string(r.gpu) + " thread block " +
           std::to_string(r.block) + " step " + std::to_string(r.step) +
           " (line " + std::to_string(algo.step(r).element->at.line) + ")";
  };
  auto unmatched = [&](StepRef r, bool sending, const std::string &why) {
    ok = false;
    report(*algo.step(r).element, algo.step(r).element->find("type"),
           std::string(sending ? "this send" : "this receive") +
               " has no match: " + why);
  };
  for (auto &[key, senders] : out) {
    auto [from, to, chan] = key;
    std::vector<StepRef> &receivers = in[key];
    std::string connection = "gpu " + std::to_string(from) + " to gpu " +
                             std::to_string(to) + " on channel " +
                             std::to_string(chan);
    for (size_t k = 0; k < senders.size(); ++k) {
      if (k >= receivers.size()) {
        unmatched(senders[k], true,
                  connection + " carries " + std::to_string(senders.size()) +
                      " sends but " + std::to_string(receivers.size()) +
                      " receives");
        break;
      }
      int64_t sent = algo.step(senders[k]).count,
              got = algo.step(receivers[k]).count;
      if (sent != got) {
        ok = false;
        const xml::Element &r = *algo.step(receivers[k]).element;
        report(r, r.find("cnt"),
               "receives " + std::to_string(got) +
                   " chunks where the matching send (" + where(senders[k]) +
                   ") sends " + std::to_string(sent));
        continue;
      }
      algo.messages.push_back({senders[k], receivers[k], chan, sent});
    }
  }
  for (auto &[key, receivers] : in) {
    size_t sent = out.count(key) ? out[key].size() : 0;
    if (receivers.size() > sent)
      unmatched(receivers[sent], false,
                "gpu " + std::to_string(std::get<0>(key)) + " to gpu " +
                    std::to_string(std::get<1>(key)) + " on channel " +
                    std::to_string(std::get<2>(key)) + " carries " +
                    std::to_string(sent) + " sends but " +
                    std::to_string(receivers.size()) + " receives");
  }
  return ok;
}

} // namespace

std::optional<Algorithm> sdma::msccl::read(const xml::Element &root,
                                           const Report &report) {
  if (root.name != "algo") {
    report(root, nullptr,
           "the root element is <" + root.name +
               ">; an MSCCL algorithm's "
               "is <algo>");
    return std::nullopt;
  }
  Algorithm algo;
  algo.element = &root;
  Fields f(root, report);
  algo.name = f.text("name").value_or("");
  algo.collective = f.text("coll").value_or("");
  algo.protocol = root.find("proto") ? root.find("proto")->value : "Simple";
  algo.gpus = int(f.integer("ngpus", 1, 65536).value_or(0));
  algo.channels = int(f.integerOr("nchannels", 1, 1, 1024).value_or(1));
  algo.chunksPerLoop =
      f.integerOr("nchunksperloop", 0, 0, INT32_MAX).value_or(0);
  algo.inplace = f.integerOr("inplace", 0, 0, 1).value_or(0) == 1;
  if (!f.ok)
    return std::nullopt;
  bool ok = true;
  std::vector<const xml::Element *> gpus = children(root, "gpu", report, ok);
  if (int(gpus.size()) != algo.gpus) {
    report(root, root.find("ngpus"),
           "ngpus is " + std::to_string(algo.gpus) + " but the algorithm has " +
               std::to_string(gpus.size()) + " <gpu> elements");
    return std::nullopt;
  }
  algo.gpuList.resize(algo.gpus);
  std::vector<bool> seen(algo.gpus, false);
  for (const xml::Element *e : gpus) {
    Fields g(*e, report);
    std::optional<int64_t> id = g.integer("id", 0, algo.gpus - 1);
    std::optional<int64_t> in = g.integer("i_chunks", 0, INT32_MAX);
    std::optional<int64_t> out = g.integer("o_chunks", 0, INT32_MAX);
    std::optional<int64_t> scratch = g.integerOr("s_chunks", 0, 0, INT32_MAX);
    if (id && seen[*id])
      g.fail(e->find("id"), "gpu " + std::to_string(*id) + " appears twice");
    if (!g.ok) {
      ok = false;
      continue;
    }
    seen[*id] = true;
    Gpu &gpu = algo.gpuList[*id];
    gpu.id = int(*id);
    gpu.inputChunks = *in;
    gpu.outputChunks = *out;
    gpu.scratchChunks = *scratch;
    gpu.element = e;
  }
  if (!ok || !readBlocks(algo, report))
    return std::nullopt;
  for (Gpu &gpu : algo.gpuList)
    for (ThreadBlock &tb : gpu.blocks) {
      std::vector<const xml::Element *> steps =
          children(*tb.element, "step", report, ok);
      for (size_t s = 0; s < steps.size(); ++s) {
        std::optional<Step> step = readStep(*steps[s], int(s), gpu, tb, report);
        if (!step) {
          ok = false;
          continue;
        }
        tb.steps.push_back(std::move(*step));
      }
    }
  if (!ok)
    return std::nullopt;
  // A dependency names a step that exists.
  for (Gpu &gpu : algo.gpuList)
    for (ThreadBlock &tb : gpu.blocks)
      for (Step &step : tb.steps)
        for (auto [b, d] : step.deps) {
          const std::vector<Step> &theirs = gpu.blocks[b].steps;
          if (d >= int(theirs.size())) {
            ok = false;
            report(*step.element, step.element->find("deps"),
                   "depends on step " + std::to_string(d) +
                       " of thread block " + std::to_string(b) +
                       ", which has " + std::to_string(theirs.size()) +
                       " steps");
            continue;
          }
          // The runtime's waiter reads the block's published progress.
          bool published = false;
          for (size_t k = d; k < theirs.size(); ++k)
            published |= theirs[k].hasdep;
          if (!published) {
            ok = false;
            report(*step.element, step.element->find("depid"),
                   "depends on step " + std::to_string(d) +
                       " of thread block " + std::to_string(b) +
                       ", but neither it nor a later step of that block "
                       "has hasdep=\"1\": the MSCCL runtime would wait "
                       "forever");
          }
        }
  if (!ok || !matchMessages(algo, report))
    return std::nullopt;
  return algo;
}
