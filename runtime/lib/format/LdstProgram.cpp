//===- LdstProgram.cpp - read a generated load/store kernel ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/LdstProgram.h"
#include "format/JsonFields.h"
#include "sdma/runtime/Limits.h"

#include <algorithm>
#include <cstdlib>

using namespace sdma::rt;
using namespace sdma::rt::jsonfields;

namespace {

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
  program.ranks = integerField(meta, "$", "ranks", 1, sdma::kMaxRanks);
  program.flagSlots =
      integerField(meta, "$", "flag_slots", 1, sdma::kMaxFlagsPerRank);
  // Optional: programs from before specialised kernels are table kernels.
  if (meta.contains("kernel")) {
    std::string kernel = stringField(meta, "$", "kernel");
    if (kernel != "specialised" && kernel != "table")
      fail("$.kernel", quote(kernel) + " is neither \"specialised\" nor "
                                       "\"table\"");
    program.specialised = kernel == "specialised";
  }
  BufferIndex index;
  program.buffers = parseBuffers(meta, sdma::kMaxBufferChunks, index);
  program.collective =
      parseCollective(meta, program.buffers, index, program.ranks);
  if (meta.contains("low_latency")) {
    const json &ll = meta["low_latency"];
    if (!ll.is_object())
      fail("$.low_latency", "expected an object");
    program.lowLatencyPairChunks = integerField(
        ll, "$.low_latency", "pair_chunks", 0, sdma::kMaxBufferChunks);
  }
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
  // The kernel's table has the low-latency words exactly where the header
  // says it has the tables (a launch passes the table by size).
  if (program &&
      (program->lowLatencyPairChunks >= 0) !=
          (source.find("\n#define SDMA_LL 1\n") != std::string::npos)) {
    error = "load/store program metadata: $.low_latency " +
            std::string(program->lowLatencyPairChunks >= 0
                            ? "is set but the kernel has no SDMA_LL tables"
                            : "is missing but the kernel has SDMA_LL tables");
    return std::nullopt;
  }
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
  plan.hasQueues = false;
  plan.ranks = ranks;
  plan.flags = 2;
  plan.buffers = buffers;
  plan.collective = collective;
  plan.done.assign(ranks, 0);
  return plan;
}

namespace {
/// The integers of `static ... name[] = {...};` in `source`.
std::vector<long long> intTable(const std::string &source,
                                const std::string &name) {
  std::vector<long long> values;
  size_t at = source.find(" " + name + "[] = {");
  if (at == std::string::npos)
    return values;
  size_t end = source.find("};", at);
  const char *p = source.c_str() + source.find('{', at) + 1;
  const char *stop = source.c_str() + end;
  while (p < stop) {
    char *next = nullptr;
    long long v = std::strtoll(p, &next, 10);
    if (next == p) {
      ++p;
      continue;
    }
    values.push_back(v);
    p = next;
  }
  return values;
}
} // namespace

std::vector<int> LdstProgram::signalers(int rank, int slot) const {
  std::vector<long long> steps = intTable(source, "sdma_steps");
  std::vector<long long> begin = intTable(source, "sdma_rank_begin");
  std::vector<int> found;
  if (begin.size() != size_t(ranks) + 1)
    return found;
  for (int r = 0; r < ranks; ++r)
    for (long long s = begin[r]; s < begin[r + 1]; ++s) {
      if (3 * s + 2 >= (long long)steps.size())
        return {};
      long long kind = steps[3 * s], a = steps[3 * s + 1], b = steps[3 * s + 2];
      // 2: signal flag b of rank a; 4: signal flag a of every rank.
      if ((kind == 2 && a == rank && b == slot) || (kind == 4 && a == slot)) {
        found.push_back(r);
        break;
      }
    }
  return found;
}

std::vector<std::pair<int, int>> LdstProgram::touched(int rank) const {
  std::vector<std::pair<int, int>> all, found;
  int B = static_cast<int>(buffers.size());
  for (int r = 0; r < ranks; ++r)
    for (int b = 0; b < B; ++b)
      all.push_back({r, b});
  std::vector<long long> ops = intTable(source, "sdma_ops");
  std::vector<long long> steps = intTable(source, "sdma_steps");
  std::vector<long long> begin = intTable(source, "sdma_rank_begin");
  std::vector<long long> vops = intTable(source, "sdma_vops");
  std::vector<long long> rsrc = intTable(source, "sdma_rsrc");
  std::vector<long long> fwd; // read at the first forwarded side
  size_t at = source.find("#define SDMA_OP_STRIDE ");
  long long stride =
      at == std::string::npos ? 0 : std::atoll(source.c_str() + at + 23);
  // sdma.copyv's two sides in sdma_vops: (table or -1, rank, index) each,
  // and since the expert-major forms a fourth word, the form.
  at = source.find("#define SDMA_VOP_STRIDE ");
  long long vstride =
      at == std::string::npos ? 6 : std::atoll(source.c_str() + at + 24);
  if (begin.size() != size_t(ranks) + 1 || stride < 12 || rank < 0 ||
      rank >= ranks)
    return all;
  std::vector<char> seen(all.size(), 0);
  auto add = [&](long long r, long long b) {
    if (r >= 0 && r < ranks && b >= 0 && b < B)
      seen[r * B + b] = 1;
    return r >= 0 && r < ranks && b >= 0 && b < B;
  };
  for (long long s = begin[rank]; s < begin[rank + 1]; ++s) {
    if (3 * s + 2 >= (long long)steps.size())
      return all;
    if (steps[3 * s] != 0)
      continue;
    for (long long i = 0; i < steps[3 * s + 2]; ++i) {
      long long o = (steps[3 * s + 1] + i) * stride;
      if (o + 11 >= (long long)ops.size())
        return all;
      if (ops[o] == 4) {
        // sdma.reduce: the destination, then (rank, buffer, offset) of
        // each of its sources and extra destinations in sdma_rsrc.
        long long first = ops[o + 7], n = ops[o + 8] + ops[o + 10];
        if (!add(ops[o + 1], ops[o + 2]) || first < 0 || n < 0 ||
            3 * (first + n) > (long long)rsrc.size())
          return all;
        for (long long k = first; k < first + n; ++k)
          if (!add(rsrc[3 * k], rsrc[3 * k + 1]))
            return all;
        continue;
      }
      // kind; a: rank, buffer, offset; count; b: ...; c (broadcasts): ...
      if (!add(ops[o + 1], ops[o + 2]) || !add(ops[o + 5], ops[o + 6]) ||
          (ops[o] == 1 && !add(ops[o + 8], ops[o + 9])))
        return all;
      if (ops[o] != 3)
        continue;
      // sdma.copyv: its count's table entry, and its sides' offset tables.
      long long v = ops[o + 11] * vstride;
      if (!add(ops[o + 8], ops[o + 9]) || v < 0 || vstride < 6 || vstride % 2 ||
          v + vstride > (long long)vops.size())
        return all;
      for (long long side = v; side < v + vstride; side += vstride / 2) {
        if (vops[side] < 0)
          continue;
        // A forwarded side (form + 4) reads entries [0, index) of its row
        // where sdma_fwd says ((rank * B + buffer) << 32 | entry), from the
        // row's first (its rank word).
        if (vstride >= 8 && vops[side + 3] >= 4) {
          if (fwd.empty())
            fwd = intTable(source, "sdma_fwd");
          long long first = vops[side + 1], n = vops[side + 2];
          if (first < 0 || n < 0 || first + n > (long long)fwd.size())
            return all;
          for (long long k = first; k < first + n; ++k)
            if (!add((fwd[k] >> 32) / B, (fwd[k] >> 32) % B))
              return all;
        } else if (!add(vops[side + 1], vops[side])) {
          return all;
        }
      }
    }
  }
  // A low-latency call: what the rank pushes, copies in place, receives
  // into and reduces (its own buffers: sdma_ll_* rows name a buffer at
  // column `col`; a reduce source, a rank and buffer).
  if (lowLatencyPairChunks >= 0) {
    struct Table {
      const char *rows, *begin;
      int stride;
      std::vector<int> columns;
    };
    for (const Table &t :
         {Table{"sdma_ll_push", "sdma_ll_push_begin", 5, {0}},
          Table{"sdma_ll_local", "sdma_ll_local_begin", 5, {0, 3}},
          Table{"sdma_ll_recv", "sdma_ll_recv_begin", 5, {1}},
          Table{"sdma_ll_red", "sdma_ll_red_begin", 6, {0}}}) {
      std::vector<long long> rows = intTable(source, t.rows);
      std::vector<long long> begins = intTable(source, t.begin);
      if (begins.size() != size_t(ranks) + 1)
        return all;
      for (long long i = begins[rank]; i < begins[rank + 1]; ++i)
        for (int c : t.columns)
          if (i < 0 || t.stride * i + t.stride > (long long)rows.size() ||
              !add(rank, rows[t.stride * i + c]))
            return all;
    }
    // A reduction's sources read in place (pair offset -1).
    std::vector<long long> red = intTable(source, "sdma_ll_red");
    std::vector<long long> redBegin = intTable(source, "sdma_ll_red_begin");
    std::vector<long long> rsrcs = intTable(source, "sdma_ll_rsrc");
    for (long long i = redBegin[rank]; i < redBegin[rank + 1]; ++i)
      for (long long k = red[6 * i + 5]; k < red[6 * i + 5] + red[6 * i + 4];
           ++k) {
        if (k < 0 || 4 * k + 4 > (long long)rsrcs.size())
          return all;
        if (rsrcs[4 * k + 3] < 0 && !add(rsrcs[4 * k], rsrcs[4 * k + 1]))
          return all;
      }
  }
  for (size_t i = 0; i < all.size(); ++i)
    if (seen[i])
      found.push_back(all[i]);
  return found;
}

bool LdstProgram::setReduction(const std::string &type, const std::string &op,
                               std::string &error, int partOf) {
  // LdstReduce.hip's SDMA_REDUCE_TYPE and SDMA_REDUCE_OP codes.
  static const char *const kTypes[] = {"f32",  "f16",  "bf16", "i32", "i64",
                                       "ui32", "ui64", "f64",  "i8",  "ui8"};
  static const char *const kOps[] = {"sum",  "max", "min",
                                     "prod", "avg", "premulsum"};
  auto code = [](const auto &names, const std::string &name) {
    for (size_t i = 0; i < std::size(names); ++i)
      if (name == names[i])
        return int(i);
    return -1;
  };
  // premulsum_device: premulsum whose scalar each launch passes as the
  // address of a value in device memory (SDMA_PREMUL_DEVICE).
  const bool deviceScalar = op == "premulsum_device";
  int t = code(kTypes, type), o = code(kOps, deviceScalar ? "premulsum" : op);
  // A program that declares no collective (a hierarchical schedule's node
  // part) may still reduce.
  if ((collective && !collective->isReduction()) || !reduces()) {
    error = schedule + " does not reduce: it has no element type or "
                       "operator to set";
    return false;
  }
  if (t < 0 || o < 0) {
    error = "cannot reduce " + type + " with " + op +
            " (types: f16, bf16, f32, f64, i8, ui8, i32, ui32, i64, ui64; "
            "operators: sum, prod, max, min, avg, premulsum, "
            "premulsum_device)";
    return false;
  }
  // avg divides what a reduce row stores: right only where each output
  // element is stored by one reduce, once (not a ring's partial sums).
  static const char *const kOnce[] = {
      "all_reduce_one_shot", "all_reduce_two_shot", "all_reduce_in_place",
      "reduce_scatter_direct", "reduce"};
  // premulsum multiplies each operand of a reduce: right only where every
  // operand is a rank's input.
  const bool vouched = partOf > 0;
  if ((op == "avg" || o == 5) && !vouched &&
      (!collective || std::find(std::begin(kOnce), std::end(kOnce), schedule) ==
                          std::end(kOnce))) {
    error = op +
            " needs a schedule that reduces each element once (one-shot, "
            "two-shot or in-place all-reduce, direct reduce-scatter, "
            "reduce); " +
            schedule + " stores partial results";
    return false;
  }
  // (premulsum's scalars come with each launch: SdmaTable::rowBytes.)
  std::string finish;
  if (op == "avg")
    finish = "#define SDMA_AVG_DIVISOR " +
             std::to_string(vouched ? partOf : ranks) + "\n";
  else if (deviceScalar)
    finish = "#define SDMA_PREMUL_DEVICE 1\n";
  source = "#define SDMA_REDUCE_TYPE " + std::to_string(t) +
           "\n#define SDMA_REDUCE_OP " + std::to_string(o) + "\n" + finish +
           source;
  for (Buffer &buffer : buffers)
    if (!buffer.type.empty())
      buffer.type = type;
  if (collective)
    collective->op = op;
  return true;
}

LdstProgram sdma::rt::sizeClassProgram(const LdstProgram &program,
                                       uint64_t chunkBytes) {
  LdstProgram fixed = program;
  fixed.source = "#define SDMA_CHUNK_BYTES " + std::to_string(chunkBytes) +
                 "ull\n" + program.source;
  return fixed;
}
