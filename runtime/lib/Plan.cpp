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
#include "JsonFields.h"

#include <limits>
#include <nlohmann/json.hpp>

using json = nlohmann::json;
using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

namespace {

constexpr int64_t kMaxRanks = 65536;
constexpr int64_t kMaxChunks = int64_t(1) << 40;
constexpr int64_t kMaxFlags = int64_t(1) << 20;

Slice parseSlice(const Plan &plan, const json &object,
                 const std::string &path) {
  Slice slice;
  slice.rank = integerField(object, path, "rank", 0, plan.ranks - 1);
  std::string name = stringField(object, path, "buffer");
  slice.buffer = plan.findBuffer(name);
  if (slice.buffer < 0)
    fail(path + ".buffer", "unknown buffer \"" + name + "\"");
  int64_t chunks = plan.buffers[slice.buffer].chunks;
  slice.offset = integerField(object, path, "offset", 0, chunks - 1);
  slice.count = integerField(object, path, "count", 1, chunks - slice.offset);
  return slice;
}

bool overlaps(const Slice &a, const Slice &b) {
  return a.rank == b.rank && a.buffer == b.buffer &&
         a.offset < b.offset + b.count && b.offset < a.offset + a.count;
}

Command parseCommand(const Plan &plan, const json &object,
                     const std::string &path) {
  Command command;
  std::string op = stringField(object, path, "op");
  if (op == "copy" || op == "bcast") {
    command.kind = op == "copy" ? Command::Kind::Copy : Command::Kind::Bcast;
    command.slices[0] =
        parseSlice(plan, field(object, path, "src"), path + ".src");
    const json &dst = field(object, path, "dst");
    if (op == "copy") {
      command.slices[1] = parseSlice(plan, dst, path + ".dst");
    } else {
      if (!dst.is_array() || dst.size() != 2)
        fail(path + ".dst", "expected an array of two slices");
      command.slices[1] = parseSlice(plan, dst[0], path + ".dst[0]");
      command.slices[2] = parseSlice(plan, dst[1], path + ".dst[1]");
    }
  } else if (op == "swap") {
    command.kind = Command::Kind::Swap;
    command.slices[0] = parseSlice(plan, field(object, path, "a"), path + ".a");
    command.slices[1] = parseSlice(plan, field(object, path, "b"), path + ".b");
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
    fail(path + ".op", "unknown command \"" + op + "\"");
  }
  int numSlices = command.kind == Command::Kind::Bcast ? 3 : 2;
  for (int i = 1; i < numSlices; ++i) {
    if (command.slices[i].count != command.slices[0].count)
      fail(path, "slices differ in size");
    for (int j = 0; j < i; ++j)
      if (overlaps(command.slices[i], command.slices[j]))
        fail(path, "slices overlap");
  }
  return command;
}

Plan parsePlan(const json &root) {
  Plan plan;
  checkFormat(root, "sdma.plan", "plan", kPlanVersion);
  plan.schedule = stringField(root, "$", "schedule");
  plan.ranks = integerField(root, "$", "ranks", 1, kMaxRanks);
  plan.engines = integerField(root, "$", "engines", 0, 1 << 16);
  plan.flags = integerField(root, "$", "flags", 2, kMaxFlags);
  const json &prelaunch = field(root, "$", "prelaunch");
  if (!prelaunch.is_boolean())
    fail("$.prelaunch", "expected true or false");
  plan.prelaunch = prelaunch.get<bool>();

  plan.buffers = parseBuffers(root, kMaxChunks);
  plan.collective = parseCollective(root, plan.buffers, plan.ranks);

  const json &done = field(root, "$", "done");
  if (!done.is_array() || done.size() != static_cast<size_t>(plan.ranks))
    fail("$.done", "expected one count per rank");
  for (size_t r = 0; r < done.size(); ++r)
    plan.done.push_back(integer(done[r], "$.done[" + std::to_string(r) + "]", 0,
                                std::numeric_limits<int32_t>::max()));

  const json &streams = field(root, "$", "streams");
  if (!streams.is_array())
    fail("$.streams", "expected an array");
  std::vector<int64_t> notifiesDone(plan.ranks, 0);
  for (size_t i = 0; i < streams.size(); ++i) {
    std::string path = "$.streams[" + std::to_string(i) + "]";
    Stream stream;
    stream.rank = integerField(streams[i], path, "rank", 0, plan.ranks - 1);
    stream.engine =
        integerField(streams[i], path, "engine", 0, plan.engines - 1);
    for (const Stream &other : plan.streams)
      if (other.rank == stream.rank && other.engine == stream.engine)
        fail(path, "a second queue for rank " + std::to_string(stream.rank) +
                       " engine " + std::to_string(stream.engine));
    const json &commands = field(streams[i], path, "ops");
    if (!commands.is_array())
      fail(path + ".ops", "expected an array");
    for (size_t j = 0; j < commands.size(); ++j) {
      std::string commandPath = path + ".ops[" + std::to_string(j) + "]";
      Command command = parseCommand(plan, commands[j], commandPath);
      if (command.kind != Command::Kind::Notify &&
          command.kind != Command::Kind::Poll &&
          command.slices[0].rank != stream.rank)
        fail(commandPath, "a queue of rank " + std::to_string(stream.rank) +
                              " issues a command of rank " +
                              std::to_string(command.slices[0].rank));
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
