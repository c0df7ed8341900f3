//===- JsonFields.h - reading validated JSON with paths in errors -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the plan and packet-plan loaders share: typed field access that
// reports a JSON path ("$.streams[3].ops[1].flag: ...") on every error, and
// the buffers and collective both formats describe the same way.
// Internal to the runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_JSONFIELDS_H
#define SDMA_RUNTIME_LIB_JSONFIELDS_H

#include "sdma/runtime/Plan.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

namespace sdma::rt::jsonfields {

using json = nlohmann::json;

/// Thrown inside the parser only; parse() turns it into an error string.
struct PlanError {
  std::string message;
};

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
  int64_t v =
      value.is_number_unsigned() &&
              value.get<uint64_t>() >
                  static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
          ? std::numeric_limits<int64_t>::max()
          : value.get<int64_t>();
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

/// The whole of a file, or std::nullopt with "PATH: cannot open WHAT".
inline std::optional<std::string>
readFile(const std::string &path, const char *what, std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = path + ": cannot open " + what;
    return std::nullopt;
  }
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

/// $.buffers: [{"name", "chunks"}], names unique.
inline std::vector<Buffer> parseBuffers(const json &root, int64_t maxChunks) {
  std::vector<Buffer> result;
  const json &buffers = field(root, "$", "buffers");
  if (!buffers.is_array() || buffers.empty())
    fail("$.buffers", "expected a non-empty array");
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::string path = "$.buffers[" + std::to_string(i) + "]";
    Buffer buffer{stringField(buffers[i], path, "name"),
                  integerField(buffers[i], path, "chunks", 1, maxChunks)};
    for (const Buffer &other : result)
      if (other.name == buffer.name)
        fail(path + ".name", "buffer \"" + buffer.name + "\" appears twice");
    result.push_back(buffer);
  }
  return result;
}

/// $.collective: null or {"kind", "input", "output"[, "root"]}.
inline std::optional<Collective>
parseCollective(const json &root, const std::vector<Buffer> &buffers,
                int ranks) {
  const json &collective = field(root, "$", "collective");
  if (collective.is_null())
    return std::nullopt;
  auto find = [&](const std::string &name) {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].name == name)
        return static_cast<int>(i);
    return -1;
  };
  Collective c;
  c.kind = stringField(collective, "$.collective", "kind");
  if (c.kind != "all_gather" && c.kind != "all_to_all" &&
      c.kind != "broadcast" && c.kind != "scatter" && c.kind != "gather")
    fail("$.collective.kind", "unknown collective \"" + c.kind + "\"");
  for (auto [name, index] :
       {std::pair<const char *, int *>{"input", &c.input},
        std::pair<const char *, int *>{"output", &c.output}}) {
    std::string buffer = stringField(collective, "$.collective", name);
    *index = find(buffer);
    if (*index < 0)
      fail(std::string("$.collective.") + name,
           "unknown buffer \"" + buffer + "\"");
  }
  bool needsRoot =
      c.kind == "broadcast" || c.kind == "scatter" || c.kind == "gather";
  if (needsRoot)
    c.root = integerField(collective, "$.collective", "root", 0, ranks - 1);
  return c;
}

} // namespace sdma::rt::jsonfields

#endif // SDMA_RUNTIME_LIB_JSONFIELDS_H
