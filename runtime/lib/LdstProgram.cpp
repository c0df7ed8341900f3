//===- LdstProgram.cpp - read a generated load/store kernel ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstProgram.h"
#include "JsonFields.h"

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

namespace {

constexpr int64_t kMaxRanks = 65536;
constexpr int64_t kMaxChunks = int64_t(1) << 40;
constexpr int64_t kMaxFlagSlots = int64_t(1) << 20;

/// The header's JSON, as a plan's: paths from "$" of the header object.
LdstProgram parseHeader(const json &meta) {
  if (!meta.is_object())
    fail("$", "expected an object");
  LdstProgram program;
  checkFormat(meta, "sdma.ldst", "load/store program", kLdstVersion);
  program.entry = stringField(meta, "$", "entry");
  // The entry is pasted into the host and device sources: an identifier.
  bool identifier = !program.entry.empty() && program.entry.size() <= 256 &&
                    !(program.entry[0] >= '0' && program.entry[0] <= '9');
  for (char c : program.entry)
    identifier &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_';
  if (!identifier)
    fail("$.entry", quote(program.entry) + " is not a C identifier");
  program.schedule = stringField(meta, "$", "schedule");
  program.ranks = integerField(meta, "$", "ranks", 1, kMaxRanks);
  program.flagSlots = integerField(meta, "$", "flag_slots", 1, kMaxFlagSlots);
  BufferIndex index;
  program.buffers = parseBuffers(meta, kMaxChunks, index);
  program.collective =
      parseCollective(meta, program.buffers, index, program.ranks);
  return program;
}

} // namespace

std::optional<LdstProgram> LdstProgram::parse(std::string source,
                                              std::string &error) {
  static const std::string kTag = "// sdma-ldst: ";
  if (source.compare(0, kTag.size(), kTag) != 0) {
    error = "not an sdma load/store program (no '// sdma-ldst:' first line)";
    return std::nullopt;
  }
  size_t eol = source.find('\n');
  std::string_view header(source);
  header =
      header.substr(kTag.size(), eol == std::string::npos ? std::string::npos
                                                          : eol - kTag.size());
  std::optional<LdstProgram> program = parseJson<LdstProgram>(
      header, "load/store program metadata", parseHeader, error);
  if (program)
    program->source = std::move(source);
  return program;
}

std::optional<LdstProgram> LdstProgram::load(const std::string &path,
                                             std::string &error) {
  std::optional<std::string> text = readFile(path, "load/store program", error);
  std::optional<LdstProgram> program =
      text ? parse(std::move(*text), error) : std::nullopt;
  if (text && !program)
    error = path + ": " + error;
  return program;
}

Plan LdstProgram::layout() const {
  Plan plan;
  plan.schedule = schedule;
  plan.ranks = ranks;
  plan.flags = 2;
  plan.buffers = buffers;
  plan.collective = collective;
  plan.done.assign(ranks, 0);
  return plan;
}
