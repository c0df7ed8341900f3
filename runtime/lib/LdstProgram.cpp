//===- LdstProgram.cpp - read a generated load/store kernel ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstProgram.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using json = nlohmann::json;
using namespace sdma::rt;

std::optional<LdstProgram> LdstProgram::parse(std::string source,
                                              std::string &error) {
  static const std::string kTag = "// sdma-ldst: ";
  if (source.compare(0, kTag.size(), kTag) != 0) {
    error = "not an sdma load/store program (no '// sdma-ldst:' first line)";
    return std::nullopt;
  }
  size_t eol = source.find('\n');
  json meta = json::parse(source.substr(kTag.size(), eol - kTag.size()),
                          nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded() || !meta.is_object()) {
    error = "load/store program metadata is not a JSON object";
    return std::nullopt;
  }
  try {
    if (meta.at("format") != "sdma.ldst") {
      error = "load/store program metadata: not an sdma.ldst program";
      return std::nullopt;
    }
    if (meta.at("version").get<int>() != kLdstVersion) {
      error = "load/store program version " +
              std::to_string(meta.at("version").get<int>()) +
              " but this runtime reads version " + std::to_string(kLdstVersion);
      return std::nullopt;
    }
    LdstProgram program;
    program.entry = meta.at("entry").get<std::string>();
    program.schedule = meta.at("schedule").get<std::string>();
    program.ranks = meta.at("ranks").get<int>();
    program.flagSlots = meta.at("flag_slots").get<int>();
    if (program.ranks < 1 || program.ranks > 65536 || program.flagSlots < 1) {
      error = "load/store program metadata: ranks or flag slots out of range";
      return std::nullopt;
    }
    for (const json &b : meta.at("buffers")) {
      Buffer buffer{b.at("name").get<std::string>(),
                    b.at("chunks").get<int64_t>()};
      if (buffer.chunks < 1) {
        error = "load/store program metadata: buffer \"" + buffer.name +
                "\" has no chunks";
        return std::nullopt;
      }
      program.buffers.push_back(buffer);
    }
    const json &c = meta.at("collective");
    if (!c.is_null()) {
      Collective collective;
      collective.kind = c.at("kind").get<std::string>();
      Plan layout;
      layout.buffers = program.buffers;
      collective.input = layout.findBuffer(c.at("input").get<std::string>());
      collective.output = layout.findBuffer(c.at("output").get<std::string>());
      if (collective.input < 0 || collective.output < 0) {
        error = "load/store program metadata: unknown collective buffer";
        return std::nullopt;
      }
      if (c.contains("root"))
        collective.root = c.at("root").get<int>();
      program.collective = collective;
    }
    program.source = std::move(source);
    return program;
  } catch (const json::exception &e) {
    error = std::string("load/store program metadata: ") + e.what();
    return std::nullopt;
  }
}

std::optional<LdstProgram> LdstProgram::load(const std::string &path,
                                             std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = path + ": cannot open load/store program";
    return std::nullopt;
  }
  std::stringstream text;
  text << file.rdbuf();
  std::optional<LdstProgram> program = parse(text.str(), error);
  if (!program)
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
