//===- JsonFields.h - reading validated JSON with paths in errors -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What every JSON reader of the runtime shares (the plan, the packet plan,
// the load/store program's header, the NVIDIA and DMA timing profiles):
//   - typed field access that reports a JSON path ("$.streams[3].ops[1].flag:
//     ...") on every error, never a JSON library exception or abort;
//   - echoes of input text (names, keys) cut to kEchoChars characters, so an
//     error message is one short line whatever the input holds;
//   - hashed lookups and duplicate checks (linear in the input);
//   - file reading that refuses, before reading, a file whose parsed form
//     would not fit the memory budget;
//   - the buffers and collective both plan formats describe the same way,
//     with the collective's buffer sizes checked as sdma-verify checks them.
// Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_FORMAT_JSONFIELDS_H
#define SDMA_RUNTIME_LIB_FORMAT_JSONFIELDS_H

#include "sdma/runtime/CheckedMath.h"
#include "sdma/runtime/Limits.h"
#include "sdma/runtime/MemoryBudget.h"
#include "sdma/runtime/Plan.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sdma::rt::jsonfields {

using json = nlohmann::json;

/// Thrown inside the parser only; parseJson() turns it into an error string.
struct PlanError {
  std::string message;
};

/// The most characters of input text an error message repeats.
constexpr size_t kEchoChars = 64;
/// The longest error message a loader returns (a safety net: every echo is
/// already cut to kEchoChars).
constexpr size_t kMaxErrorChars = 1024;
/// Parsed JSON takes up to this many times the bytes of its text.
constexpr uint64_t kJsonExpansion = 16;

/// `text` as an error message may repeat it: control characters as '?', and
/// past `max` characters cut, with the length: "abc... (104857600 bytes)".
inline std::string echo(std::string_view text, size_t max = kEchoChars) {
  std::string out;
  size_t n = std::min(text.size(), max);
  out.reserve(n + 32);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  }
  if (text.size() > max)
    out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

/// `text` quoted for an error message, cut as echo() cuts it.
inline std::string quote(std::string_view text) {
  return "\"" + echo(text) + "\"";
}

[[noreturn]] inline void fail(const std::string &path,
                              const std::string &what) {
  throw PlanError{path + ": " + what};
}

inline const json &field(const json &object, const std::string &path,
                         const char *name) {
  if (!object.is_object())
    fail(path, "expected an object");
  auto it = object.find(name);
  if (it == object.end())
    fail(path, std::string("missing \"") + name + "\"");
  return *it;
}

inline int64_t integer(const json &value, const std::string &path, int64_t lo,
                       int64_t hi) {
  if (!value.is_number_integer())
    fail(path, "expected an integer");
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(path, "value " + std::to_string(value.get<uint64_t>()) +
                   " is out of range [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  int64_t v = value.get<int64_t>();
  if (v < lo || v > hi)
    fail(path, "value " + std::to_string(v) + " is out of range [" +
                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

inline int64_t integerField(const json &object, const std::string &path,
                            const char *name, int64_t lo, int64_t hi) {
  return integer(field(object, path, name), path + "." + name, lo, hi);
}

inline std::string stringField(const json &object, const std::string &path,
                               const char *name) {
  const json &value = field(object, path, name);
  if (!value.is_string())
    fail(path + "." + name, "expected a string");
  return value.get<std::string>();
}

inline bool booleanField(const json &object, const std::string &path,
                         const char *name) {
  const json &value = field(object, path, name);
  if (!value.is_boolean())
    fail(path + "." + name, "expected true or false");
  return value.get<bool>();
}

/// A finite number >= 0.
inline double nonNegative(const json &value, const std::string &path) {
  if (!value.is_number())
    fail(path, "expected a non-negative number");
  double v = value.get<double>();
  if (!(v >= 0) || v > std::numeric_limits<double>::max())
    fail(path, "expected a non-negative number");
  return v;
}

inline const json &arrayField(const json &object, const std::string &path,
                              const char *name) {
  const json &value = field(object, path, name);
  if (!value.is_array())
    fail(path + "." + name, "expected an array");
  return value;
}

/// An object key as a path component: `where.key`, the key cut as echo().
inline std::string keyPath(const std::string &where, std::string_view key) {
  return where + "." + echo(key);
}

/// The whole of a file, or std::nullopt with "PATH: cannot open WHAT" or,
/// if parsing it could need more than `budget` bytes, a refusal that says
/// so (before reading it).
inline std::optional<std::string>
readFile(const std::string &path, const char *what, std::string &error,
         const MemoryBudget &budget = MemoryBudget()) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) {
    error = path + ": cannot open " + what;
    return std::nullopt;
  }
  std::streamoff size = file.tellg();
  if (size > 0 &&
      !budget.admit(checkedMul(uint64_t(size), kJsonExpansion),
                    path + ": reading this " + std::to_string(size) + "-byte " +
                        what + " (parsed JSON: up to " +
                        std::to_string(kJsonExpansion) + " x its size)",
                    error))
    return std::nullopt;
  file.seekg(0);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

/// Parses `text` as JSON and hands it to `parse`, turning malformed JSON,
/// PlanError and JSON type errors into "invalid WHAT: ..." in `error`.
template <typename T, typename Parse>
std::optional<T> parseJson(std::string_view text, const std::string &what,
                           Parse parse, std::string &error) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = what + " is not valid JSON";
    return std::nullopt;
  }
  try {
    return parse(root);
  } catch (const PlanError &e) {
    error = "invalid " + what + ": " + e.message;
  } catch (const json::exception &e) {
    error = "invalid " + what + ": " + e.what();
  }
  if (error.size() > kMaxErrorChars)
    error = echo(error, kMaxErrorChars);
  return std::nullopt;
}

/// $.format must be `format` and $.version `version` ("WHAT version N but
/// this runtime reads version M: recompile ...").
inline void checkFormat(const json &root, const char *format,
                        const std::string &what, int64_t version) {
  if (stringField(root, "$", "format") != format)
    fail("$.format", "not an sdma " + what);
  int64_t found = integerField(root, "$", "version", 0,
                               std::numeric_limits<int32_t>::max());
  if (found != version)
    fail("$.version", what + " version " + std::to_string(found) +
                          " but this runtime reads version " +
                          std::to_string(version) +
                          ": recompile the schedule with a matching sdma");
}

/// Buffer name -> index.
using BufferIndex = std::unordered_map<std::string, int>;

/// $.buffers: [{"name", "chunks"}], names unique (checked by hashing).
inline std::vector<Buffer> parseBuffers(const json &root, int64_t maxChunks,
                                        BufferIndex &index) {
  std::vector<Buffer> result;
  const json &buffers = field(root, "$", "buffers");
  if (!buffers.is_array() || buffers.empty())
    fail("$.buffers", "expected a non-empty array");
  if (buffers.size() > size_t(std::numeric_limits<int32_t>::max()))
    fail("$.buffers", "more than 2^31 - 1 buffers");
  index.clear();
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::string path = "$.buffers[" + std::to_string(i) + "]";
    Buffer buffer{stringField(buffers[i], path, "name"),
                  integerField(buffers[i], path, "chunks", 1, maxChunks)};
    if (buffers[i].contains("counts")) {
      const json &counts = buffers[i]["counts"];
      if (!counts.is_boolean())
        fail(path + ".counts", "expected true or false");
      buffer.counts = counts.get<bool>();
    }
    if (buffers[i].contains("type")) {
      buffer.type = stringField(buffers[i], path, "type");
      if (buffer.elementBytes() == 0)
        fail(path + ".type", "unknown element type " + quote(buffer.type) +
                                 " (expected f16, bf16, f32, f64, i8, ui8, "
                                 "i32, ui32, i64 or ui64)");
      if (buffer.counts)
        fail(path + ".type", "a count table has no element type");
    }
    if (!index.emplace(buffer.name, static_cast<int>(i)).second)
      fail(path + ".name", "buffer " + quote(buffer.name) + " appears twice");
    result.push_back(std::move(buffer));
  }
  return result;
}

/// The index of buffer `name`, or a failure at `path`.
inline int findBuffer(const BufferIndex &index, const std::string &name,
                      const std::string &path) {
  auto it = index.find(name);
  if (it == index.end())
    fail(path, "unknown buffer " + quote(name));
  return it->second;
}

/// Whether the collective's buffers have the sizes its checks assume
/// (checkOutputs): the rules of sdma-verify's postcondition. Fails at
/// $.collective otherwise.
inline void checkCollectiveSizes(const Collective &c,
                                 const std::vector<Buffer> &buffers,
                                 int ranks) {
  int64_t in = buffers[c.input].chunks, out = buffers[c.output].chunks;
  bool perRankIn = c.kind == "all_to_all" || c.kind == "scatter" ||
                   c.kind == "reduce_scatter";
  int64_t per = c.kind == "all_to_all" ? out / ranks
                : c.kind == "scatter" || c.kind == "reduce_scatter" ? out
                                                                    : in;
  std::optional<uint64_t> ranksPer = checkedMul(uint64_t(ranks), uint64_t(per));
  uint64_t expectIn = perRankIn ? ranksPer.value_or(0) : uint64_t(per);
  uint64_t expectOut =
      c.kind == "all_gather" || c.kind == "gather" || c.kind == "all_to_all"
          ? ranksPer.value_or(0)
          : uint64_t(per);
  if (per < 1 || !ranksPer || uint64_t(in) != expectIn ||
      uint64_t(out) != expectOut)
    fail("$.collective",
         c.kind + " over " + std::to_string(ranks) +
             " ranks needs an input of " + std::to_string(expectIn) +
             " and an output of " + std::to_string(expectOut) +
             " chunks, but " + quote(buffers[c.input].name) + " has " +
             std::to_string(in) + " and " + quote(buffers[c.output].name) +
             " " + std::to_string(out));
  // The dialect's rule (ScheduleOp.cpp): these may name one buffer twice.
  if (c.input == c.output && c.kind != "all_to_all" && c.kind != "broadcast" &&
      c.kind != "all_reduce" && c.kind != "reduce")
    fail("$.collective", c.kind + " cannot be in place (input and output "
                                  "are one buffer)");
}

/// $.collective: null or {"kind", "input", "output"[, "root"]}.
inline std::optional<Collective>
parseCollective(const json &root, const std::vector<Buffer> &buffers,
                const BufferIndex &index, int ranks) {
  const json &collective = field(root, "$", "collective");
  if (collective.is_null())
    return std::nullopt;
  Collective c;
  c.kind = stringField(collective, "$.collective", "kind");
  bool dynamic = c.kind == "all_to_allv" || c.kind == "all_to_allv_packed" ||
                 c.kind == "all_to_allv_2d" ||
                 c.kind == "all_to_allv_2d_offset";
  if (c.kind != "all_gather" && c.kind != "all_to_all" &&
      c.kind != "broadcast" && c.kind != "scatter" && c.kind != "gather" &&
      !c.isReduction() && !dynamic)
    fail("$.collective.kind", "unknown collective " + quote(c.kind));
  c.input = findBuffer(index, stringField(collective, "$.collective", "input"),
                       "$.collective.input");
  c.output =
      findBuffer(index, stringField(collective, "$.collective", "output"),
                 "$.collective.output");
  bool needsRoot = c.kind == "broadcast" || c.kind == "scatter" ||
                   c.kind == "gather" || c.kind == "reduce";
  if (needsRoot)
    c.root = integerField(collective, "$.collective", "root", 0, ranks - 1);
  if (c.isReduction()) {
    // One operator on one element type (the kernel computes in it).
    c.op = stringField(collective, "$.collective", "op");
    if (c.op != "sum" && c.op != "max" && c.op != "min" && c.op != "prod")
      fail("$.collective.op", "unknown operator " + quote(c.op) +
                                  " (expected sum, max, min or prod)");
    if (buffers[c.input].type.empty() ||
        buffers[c.input].type != buffers[c.output].type)
      fail("$.collective", c.kind + " needs an input and an output of one "
                                    "element type");
  }
  if (!dynamic) {
    checkCollectiveSizes(c, buffers, ranks);
    return c;
  }
  // all_to_allv: its count tables (the compiler checked the layout).
  for (auto [key, at] :
       {std::pair<const char *, int *>{"send_counts", &c.sendCounts},
        {"recv_counts", &c.recvCounts}}) {
    if (!collective.contains(key))
      continue;
    std::string path = std::string("$.collective.") + key;
    *at = findBuffer(index, stringField(collective, "$.collective", key), path);
    if (!buffers[*at].counts)
      fail(path, quote(buffers[*at].name) + " is not a count table");
  }
  if (c.sendCounts < 0)
    fail("$.collective", c.kind + " needs \"send_counts\"");
  if (c.kind.rfind("all_to_allv_2d", 0) == 0) {
    c.experts = integerField(collective, "$.collective", "experts", 1,
                             sdma::kMaxExperts);
    c.majorAlign =
        integerField(collective, "$.collective", "major_align", 1, 1 << 20);
    if (c.recvCounts < 0)
      fail("$.collective", c.kind + " needs \"recv_counts\"");
  }
  return c;
}

/// Duplicate (rank, engine) queues, found by hashing.
class QueueSet {
public:
  /// Fails at `path` if (rank, engine) was inserted before.
  void insert(int rank, int engine, const std::string &path) {
    uint64_t key = uint64_t(uint32_t(rank)) << 32 | uint32_t(engine);
    if (!seen_.insert(key).second)
      fail(path, "a second queue for rank " + std::to_string(rank) +
                     " engine " + std::to_string(engine));
  }

private:
  std::unordered_set<uint64_t> seen_;
};

} // namespace sdma::rt::jsonfields

#endif // SDMA_RUNTIME_LIB_FORMAT_JSONFIELDS_H
