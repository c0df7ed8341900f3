//===- CApi.cpp - the compile library's C entry ---------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Built without exceptions (as MLIR): the options JSON is parsed with
// exceptions off and every field checked for its type before it is read.
//
//===----------------------------------------------------------------------===//

#include "sdma/Compiler/CApi.h"
#include "sdma/Compiler/Compile.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

using json = nlohmann::ordered_json;

namespace {

/// Reads an options object field by field, checking each field's type
/// before reading it; the first error names the field.
class OptionReader {
public:
  explicit OptionReader(std::string &error) : error(error) {}

  /// False when `text` is not a JSON object; NULL or empty: no options.
  bool parse(const char *text) {
    if (!text || !*text) {
      j = json::object();
      return true;
    }
    j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      error = "options: not a JSON object";
      return false;
    }
    return true;
  }
  bool integer(const char *key, int64_t &value) {
    if (!j.contains(key))
      return true;
    if (!j[key].is_number_integer()) {
      error = std::string("options: '") + key + "' must be an integer";
      return false;
    }
    value = j[key].get<int64_t>();
    return true;
  }
  bool integer(const char *key, std::optional<int64_t> &value) {
    int64_t read = 0;
    if (!j.contains(key))
      return true;
    if (!integer(key, read))
      return false;
    value = read;
    return true;
  }
  bool boolean(const char *key, bool &value) {
    if (!j.contains(key))
      return true;
    if (!j[key].is_boolean()) {
      error = std::string("options: '") + key + "' must be true or false";
      return false;
    }
    value = j[key].get<bool>();
    return true;
  }
  /// A string, one of `allowed` unless that is empty.
  bool string(const char *key, std::string &value,
              std::initializer_list<const char *> allowed) {
    if (!j.contains(key))
      return true;
    if (!j[key].is_string()) {
      error = std::string("options: '") + key + "' must be a string";
      return false;
    }
    value = j[key].get<std::string>();
    for (const char *ok : allowed)
      if (value == ok)
        return true;
    if (allowed.size() == 0)
      return true;
    error = std::string("options: '") + key + "' has an unknown value '" +
            value.substr(0, 64) + "'";
    return false;
  }
  /// False naming the first field not in `known`.
  bool onlyKnown(std::initializer_list<const char *> known, const char *what) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (std::find_if(known.begin(), known.end(), [&](const char *key) {
            return it.key() == key;
          }) != known.end())
        continue;
      error =
          "options: '" + it.key().substr(0, 64) + "' is not an option " + what;
      return false;
    }
    return true;
  }

  json j;

private:
  std::string &error;
};

/// The options every compile takes (sdma::ProgramOptions).
bool readCommonOptions(OptionReader &reader, sdma::ProgramOptions &options) {
  return reader.integer("ranks", options.ranks) &&
         reader.integer("root", options.root) &&
         reader.integer("local_ranks", options.localRanks) &&
         reader.integer("experts", options.experts) &&
         reader.integer("major_align", options.majorAlign) &&
         reader.integer("max_ops", options.maxOps) &&
         reader.string("name", options.bufferName, {});
}

/// Reads the options of a whole compile; false with `error` naming the
/// field. Fields it does not know are ignored.
bool readOptions(const char *text, sdma::CompileOptions &options,
                 std::string &error) {
  OptionReader reader(error);
  if (!reader.parse(text) || !readCommonOptions(reader, options))
    return false;
  std::string policy, packets;
  if (!reader.boolean("prelaunch", options.prelaunch) ||
      !reader.integer("engines", options.engines) ||
      !reader.boolean("ldst", options.ldst) ||
      !reader.integer("max_chunk_bytes", options.maxChunkBytes) ||
      !reader.string("policy", policy, {"each", "first", "all"}) ||
      !reader.string("packets", packets, {"none", "primary", "all"}) ||
      !reader.string("packet_completion", options.packetCompletion,
                     {"atomic", "fence"}) ||
      !reader.string("sdma_target", options.sdmaTarget, {}))
    return false;
  std::vector<std::string> targets = sdma::sdmaTargets();
  if (!options.sdmaTarget.empty() &&
      std::find(targets.begin(), targets.end(), options.sdmaTarget) ==
          targets.end()) {
    error = "options: 'sdma_target' has an unknown value '" +
            options.sdmaTarget.substr(0, 64) + "'";
    return false;
  }
  using Policy = sdma::CompileOptions::VariantPolicy;
  if (!policy.empty())
    options.policy = policy == "each"    ? Policy::Each
                     : policy == "first" ? Policy::FirstThatCompiles
                                         : Policy::AllThatCompile;
  using Packets = sdma::CompileOptions::Packets;
  if (!packets.empty())
    options.packets = packets == "none"      ? Packets::None
                      : packets == "primary" ? Packets::Primary
                                             : Packets::All;
  const json &j = reader.j;
  if (j.contains("variants")) {
    const json &variants = j["variants"];
    if (!variants.is_array() || variants.empty()) {
      error = "options: 'variants' must be a non-empty array of strings";
      return false;
    }
    options.variants.clear();
    for (const json &variant : variants) {
      if (!variant.is_string()) {
        error = "options: 'variants' must be a non-empty array of strings";
        return false;
      }
      options.variants.push_back(variant.get<std::string>());
    }
  }
  return true;
}

/// Reads the options of a compile to the load/store program; every field
/// must be one of its four.
bool readProgramOptions(const char *text, sdma::ProgramOptions &options,
                        std::string &error) {
  OptionReader reader(error);
  return reader.parse(text) &&
         reader.onlyKnown({"ranks", "root", "local_ranks", "experts",
                           "major_align", "max_ops", "name"},
                          "of a program compile (ranks, root, local_ranks, "
                          "experts, major_align, max_ops, name)") &&
         readCommonOptions(reader, options);
}

json toJson(const sdma::Artifacts &out) {
  json variants = json::array(), skipped = json::array();
  for (const sdma::VariantArtifacts &variant : out.variants)
    variants.push_back({{"variant", variant.variant},
                        {"plan", variant.plan},
                        {"packets", variant.packets}});
  for (const sdma::SkippedVariant &skip : out.skipped)
    skipped.push_back({{"variant", skip.variant}, {"reason", skip.reason}});
  return {{"format", "sdma.compile-result"},
          {"version", SDMA_COMPILER_ABI_VERSION},
          {"ok", out.ok},
          {"error", out.error},
          {"diagnosed", out.diagnosed},
          {"ranks_open", out.ranksOpen},
          {"diagnostics", out.diagnostics},
          {"schedule", out.schedule},
          {"ranks", out.ranks},
          {"proof", out.proof},
          {"declares_collective", out.declaresCollective},
          {"ldst", out.ldstProgram},
          {"node_plan", out.nodePlan},
          {"variants", variants},
          {"skipped", skipped}};
}

} // namespace

extern "C" int sdmaCompilerAbiVersion(void) {
  return SDMA_COMPILER_ABI_VERSION;
}

namespace {
/// The result as a malloc()ed NUL-terminated JSON text (NULL when memory
/// runs out). Invalid UTF-8 in a diagnostic (a quoted input byte) is
/// replaced, not an abort.
char *resultText(const sdma::Artifacts &out) {
  std::string text =
      toJson(out).dump(-1, ' ', false, json::error_handler_t::replace);
  char *result = static_cast<char *>(std::malloc(text.size() + 1));
  if (result)
    std::memcpy(result, text.c_str(), text.size() + 1);
  return result;
}
} // namespace

extern "C" char *sdmaCompilerCompile(const char *schedule, size_t length,
                                     const char *optionsJson) {
  sdma::CompileOptions options;
  sdma::Artifacts out;
  std::string error;
  if (!schedule)
    out.error = "no schedule text";
  else if (!readOptions(optionsJson, options, error))
    out.error = error;
  else
    out = sdma::compile(std::string_view(schedule, length), options);
  return resultText(out);
}

extern "C" char *sdmaCompilerCompileProgram(const char *schedule, size_t length,
                                            const char *optionsJson) {
  sdma::ProgramOptions options;
  sdma::Artifacts out;
  std::string error;
  if (!schedule)
    out.error = "no schedule text";
  else if (!readProgramOptions(optionsJson, options, error))
    out.error = error;
  else
    out = sdma::compileProgram(std::string_view(schedule, length), options);
  return resultText(out);
}

extern "C" void sdmaCompilerFree(char *result) { std::free(result); }
