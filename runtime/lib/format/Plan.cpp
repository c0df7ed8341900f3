//===- Plan.cpp - parse and validate a plan
//--------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every rule here mirrors runtime/plan.schema.json, plus the checks a schema
// cannot express (ranks, buffers and flags in range, slices in bounds,
// per-rank done counts that match the queues).
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Plan.h"
#include "format/JsonFields.h"
#include "sdma/runtime/Limits.h"

#include <limits>
#include <nlohmann/json.hpp>

using json = nlohmann::json;
using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

namespace {

/// What the parser keeps besides the plan.
struct Context {
  BufferIndex buffers;
};

Slice parseSlice(const Plan &plan, const Context &context, const json &object,
                 const std::string &path) {
  Slice slice;
  slice.rank = integerField(object, path, "rank", 0, plan.ranks - 1);
  slice.buffer = findBuffer(
      context.buffers, stringField(object, path, "buffer"), path + ".buffer");
  int64_t chunks = plan.buffers[slice.buffer].chunks;
  slice.offset = integerField(object, path, "offset", 0, chunks - 1);
  slice.count = integerField(object, path, "count", 1, chunks - slice.offset);
  return slice;
}

/// "rank 2 output[3, 5)", the name cut as echo() cuts it.
std::string describe(const Slice &s, const Plan &plan) {
  return "rank " + std::to_string(s.rank) + " " +
         echo(plan.buffers[s.buffer].name) + "[" + std::to_string(s.offset) +
         ", " + std::to_string(s.offset + s.count) + ")";
}

Command parseCommand(const Plan &plan, const Context &context,
                     const json &object, const std::string &path) {
  Command command;
  std::string op = stringField(object, path, "op");
  // Only a copy may be a pull (issued by its destination's rank): a
  // broadcast or a swap is its source's, a notify or poll moves nothing.
  if (op != "copy" && object.contains("pull") &&
      (op == "bcast" || op == "swap" || op == "notify" || op == "poll"))
    fail(path + ".pull", "a " + op +
                             " cannot be a pull (only a copy is issued by "
                             "its destination's rank)");
  if (op == "copy" || op == "bcast") {
    command.kind = op == "copy" ? Command::Kind::Copy : Command::Kind::Bcast;
    command.slices[0] =
        parseSlice(plan, context, field(object, path, "src"), path + ".src");
    const json &dst = field(object, path, "dst");
    if (op == "copy") {
      command.slices[1] = parseSlice(plan, context, dst, path + ".dst");
      command.pull =
          object.contains("pull") && booleanField(object, path, "pull");
    } else {
      if (!dst.is_array() || dst.size() != 2)
        fail(path + ".dst", "expected an array of two slices");
      command.slices[1] = parseSlice(plan, context, dst[0], path + ".dst[0]");
      command.slices[2] = parseSlice(plan, context, dst[1], path + ".dst[1]");
    }
  } else if (op == "swap") {
    command.kind = Command::Kind::Swap;
    command.slices[0] =
        parseSlice(plan, context, field(object, path, "a"), path + ".a");
    command.slices[1] =
        parseSlice(plan, context, field(object, path, "b"), path + ".b");
  } else if (op == "notify") {
    command.kind = Command::Kind::Notify;
    command.target = integerField(object, path, "rank", 0, plan.ranks - 1);
    command.flag = integerField(object, path, "flag", 1, plan.flags - 1);
    return command;
  } else if (op == "poll") {
    command.kind = Command::Kind::Poll;
    command.flag = integerField(object, path, "flag", 0, plan.flags - 1);
    command.value = integerField(object, path, "value", 1,
                                 std::numeric_limits<int32_t>::max());
    return command;
  } else {
    fail(path + ".op", "unknown command " + quote(op));
  }
  // Two slices of one command are disjoint or identical (a self-copy, a
  // no-op); a partial overlap has no defined result on a DMA engine.
  static const char *const names[3][3] = {
      {"src", "dst", ""}, {"src", "dst[0]", "dst[1]"}, {"a", "b", ""}};
  int row = command.kind == Command::Kind::Copy    ? 0
            : command.kind == Command::Kind::Bcast ? 1
                                                   : 2;
  int numSlices = command.kind == Command::Kind::Bcast ? 3 : 2;
  for (int i = 1; i < numSlices; ++i) {
    if (command.slices[i].count != command.slices[0].count)
      fail(path, "slices differ in size");
    for (int j = 0; j < i; ++j)
      if (command.slices[i].overlaps(command.slices[j]) &&
          command.slices[i] != command.slices[j])
        fail(path, std::string(names[row][j]) + " " +
                       describe(command.slices[j], plan) + " and " +
                       names[row][i] + " " + describe(command.slices[i], plan) +
                       " overlap partially (slices of one command must be "
                       "disjoint or identical)");
  }
  return command;
}

Plan parsePlan(const json &root) {
  Plan plan;
  checkFormat(root, "sdma.plan", "plan", kPlanVersion);
  plan.schedule = stringField(root, "$", "schedule");
  plan.ranks = integerField(root, "$", "ranks", 1, sdma::kMaxRanks);
  plan.engines =
      integerField(root, "$", "engines", 0, sdma::kMaxEnginesPerRank);
  plan.flags = integerField(root, "$", "flags", 2, sdma::kMaxFlagsPerRank);
  plan.prelaunch = booleanField(root, "$", "prelaunch");

  Context context;
  plan.buffers = parseBuffers(root, sdma::kMaxBufferChunks, context.buffers);
  plan.collective =
      parseCollective(root, plan.buffers, context.buffers, plan.ranks);

  const json &done = field(root, "$", "done");
  if (!done.is_array() || done.size() != static_cast<size_t>(plan.ranks))
    fail("$.done", "expected one count per rank");
  for (size_t r = 0; r < done.size(); ++r)
    plan.done.push_back(integer(done[r], "$.done[" + std::to_string(r) + "]", 0,
                                std::numeric_limits<int32_t>::max()));

  const json &streams = arrayField(root, "$", "streams");
  std::vector<int64_t> notifiesDone(plan.ranks, 0);
  QueueSet queues;
  plan.streams.reserve(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    std::string path = "$.streams[" + std::to_string(i) + "]";
    Stream stream;
    stream.rank = integerField(streams[i], path, "rank", 0, plan.ranks - 1);
    stream.engine =
        integerField(streams[i], path, "engine", 0, plan.engines - 1);
    queues.insert(stream.rank, stream.engine, path);
    const json &commands = arrayField(streams[i], path, "ops");
    stream.commands.reserve(commands.size());
    for (size_t j = 0; j < commands.size(); ++j) {
      std::string commandPath = path + ".ops[" + std::to_string(j) + "]";
      Command command = parseCommand(plan, context, commands[j], commandPath);
      if (command.kind != Command::Kind::Notify &&
          command.kind != Command::Kind::Poll &&
          command.issuer().rank != stream.rank)
        fail(commandPath,
             "a queue of rank " + std::to_string(stream.rank) +
                 " issues a command of rank " +
                 std::to_string(command.issuer().rank) +
                 (command.pull ? " (a pull: its destination's)" : ""));
      if (command.kind == Command::Kind::Notify && command.flag == kDoneFlag)
        ++notifiesDone[command.target];
      stream.commands.push_back(command);
    }
    plan.streams.push_back(std::move(stream));
  }
  for (int r = 0; r < plan.ranks; ++r)
    if (notifiesDone[r] != plan.done[r])
      fail("$.done[" + std::to_string(r) + "]",
           "says " + std::to_string(plan.done[r]) +
               " completions but the queues send " +
               std::to_string(notifiesDone[r]));
  return plan;
}

} // namespace

int Plan::findBuffer(std::string_view name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::optional<Plan> Plan::parse(std::string_view text, std::string &error) {
  return parseJson<Plan>(text, "plan", parsePlan, error);
}

std::optional<Plan> Plan::load(const std::string &path, std::string &error) {
  std::optional<std::string> text = readFile(path, "plan file", error);
  std::optional<Plan> plan = text ? parse(*text, error) : std::nullopt;
  if (text && !plan)
    error = path + ": " + error;
  return plan;
}

bool Plan::check(std::string &error) const {
  auto bad = [&](const std::string &where, const std::string &what) {
    error = "invalid plan " + echo(schedule) + ": " + where + ": " + what;
    return false;
  };
  if (ranks < 1 || flags < 2 || buffers.empty() || done.size() != size_t(ranks))
    return bad("$", "needs at least one rank and buffer, two flags and one "
                    "done count per rank");
  for (size_t b = 0; b < buffers.size(); ++b)
    if (buffers[b].chunks < 1 || buffers[b].chunks > sdma::kMaxBufferChunks)
      return bad("$.buffers[" + std::to_string(b) + "]", "chunks out of range");
  auto sliceOk = [&](const Slice &s) {
    return s.rank >= 0 && s.rank < ranks && s.buffer >= 0 &&
           size_t(s.buffer) < buffers.size() && s.offset >= 0 && s.count >= 1 &&
           s.offset < buffers[s.buffer].chunks &&
           s.count <= buffers[s.buffer].chunks - s.offset;
  };
  for (size_t q = 0; q < streams.size(); ++q) {
    const Stream &stream = streams[q];
    if (stream.rank < 0 || stream.rank >= ranks)
      return bad("$.streams[" + std::to_string(q) + "]", "rank out of range");
    for (size_t i = 0; i < stream.commands.size(); ++i) {
      const Command &c = stream.commands[i];
      std::string where =
          "$.streams[" + std::to_string(q) + "].ops[" + std::to_string(i) + "]";
      switch (c.kind) {
      case Command::Kind::Notify:
        if (c.target < 0 || c.target >= ranks || c.flag < 1 || c.flag >= flags)
          return bad(where, "notify target or flag out of range");
        continue;
      case Command::Kind::Poll:
        if (c.flag < 0 || c.flag >= flags || c.value < 0)
          return bad(where, "poll flag or value out of range");
        continue;
      default:
        break;
      }
      int n = c.sliceCount();
      for (int k = 0; k < n; ++k) {
        if (!sliceOk(c.slices[k]))
          return bad(where, "a slice out of range");
        if (c.slices[k].count != c.slices[0].count)
          return bad(where, "slices differ in size");
        for (int j = 0; j < k; ++j)
          if (c.slices[k].overlaps(c.slices[j]) && c.slices[k] != c.slices[j])
            return bad(where, "slices overlap partially");
      }
    }
  }
  return true;
}
