//===- CommLaunch.cpp - collectives and schedules on a communicator -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A launch is one kernel: the table of every rank's buffers, flags and
// barrier counters is built here from the symmetric regions (a peer's copy
// of a local buffer is at the same offset of the same region), bounds-
// checked for every buffer the rank's ops touch, and passed by value. The
// built-in collectives are embedded schedules (schedules/), compiled for
// the communicator's rank count on first use.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Communicator.h"

#include "comm/CommDevice.h"
#include "compile/KernelCache.h"
#include "sdma/runtime/ScheduleCompiler.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace sdma::rt;

namespace {
struct BuiltinSchedule {
  const char *name, *text;
};
const BuiltinSchedule kBuiltinSchedules[] = {
#include "BuiltinSchedules.inc"
};

const char *builtinText(const std::string &name) {
  for (const BuiltinSchedule &s : kBuiltinSchedules)
    if (name == s.name)
      return s.text;
  return nullptr;
}

constexpr size_t kControlAlign = 64;

/// A rooted built-in (root 0) with root `root`: `root 0`, every `on 0` and
/// every `sdma.rank_add 0` rewritten (the built-ins name rank 0 nowhere
/// else).
std::string withRoot(std::string text, int root) {
  if (root == 0)
    return text;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    for (const char *word : {"root 0", "on 0", "sdma.rank_add 0"}) {
      size_t n = std::strlen(word);
      if (text.compare(i, n, word) == 0 && i > 0 && text[i - 1] == ' ' &&
          (i + n == text.size() || !std::isalnum((unsigned char)text[i + n]))) {
        out += std::string(word, n - 1) + std::to_string(root);
        i += n;
        break;
      }
    }
    if (i < text.size())
      out += text[i];
  }
  return out;
}
} // namespace

const char *sdma::rt::commOpName(CommOp kind) {
  switch (kind) {
  case CommOp::AllGather:
    return "AllGather";
  case CommOp::AlltoAll:
    return "AlltoAll";
  case CommOp::Broadcast:
    return "Broadcast";
  case CommOp::Scatter:
    return "Scatter";
  case CommOp::Gather:
    return "Gather";
  }
  return "?";
}

namespace {
/// The bytes of file `path` in `text`; false if it cannot be read.
bool readFile(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return bool(in);
}

/// Compiles `text` (`name` in diagnostics) for `ranks` ranks into the text
/// of its load/store program.
bool compileToLdst(ScheduleCompiler &compiler, const std::string &text,
                   const std::string &name, int ranks, std::string &ldst,
                   std::string &error) {
  ScheduleCompileOptions options;
  options.ranks = ranks;
  options.name = name;
  ScheduleCompileResult result;
  if (!compiler.compile(text, options, result, error))
    return false;
  if (!result.ok) {
    error = name + " does not compile for " + std::to_string(ranks) +
            " ranks: " +
            (result.diagnostics.empty() ? result.error : result.diagnostics);
    return false;
  }
  ldst = std::move(result.ldst);
  return true;
}
} // namespace

bool Communicator::compileProgram(const std::string &text,
                                  const std::string &name, LdstProgram &program,
                                  std::string &error) {
  if (!compilerTried_) {
    compilerTried_ = true;
    compiler_ = ScheduleCompiler::load(compilerError_, options_.compilerLibrary,
                                       options_.cacheDirectory);
  }
  if (compiler_) {
    std::string ldst;
    if (!compileToLdst(*compiler_, text, name, ranks_, ldst, error))
      return false;
    std::optional<LdstProgram> parsed = LdstProgram::parse(ldst, error);
    if (!parsed)
      return false;
    program = std::move(*parsed);
    return true;
  }
  std::string path = options_.programDirectory + "/" + programName(name) + "-" +
                     std::to_string(ranks_) + ".hip";
  std::string loadError;
  std::optional<LdstProgram> loaded;
  if (options_.programDirectory.empty())
    loadError = "no program directory (SDMA_PROGRAM_DIR) is set";
  else if (name == "<schedule>")
    loadError = "a schedule given as text has no precompiled program (load "
                "it by its path, or load the program's text)";
  else if (!(loaded = LdstProgram::load(path, loadError)))
    loadError = "no precompiled program: " + loadError;
  if (!loaded) {
    error =
        "cannot compile " + name + ": " + compilerError_ + "; and " + loadError;
    return false;
  }
  program = std::move(*loaded);
  return true;
}

namespace {
bool isRooted(const std::string &schedule) {
  return schedule == "broadcast" || schedule == "scatter" ||
         schedule == "gather" || schedule == "reduce";
}
std::string rootedName(const std::string &schedule, int root) {
  return root ? schedule + "_root" + std::to_string(root) : schedule;
}
} // namespace

std::string Communicator::programName(const std::string &path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".mlir") == 0)
    stem.resize(stem.size() - 5);
  return stem;
}

namespace {
bool writeProgram(const std::string &directory, const std::string &name,
                  int ranks, const std::string &ldst, std::string &error) {
  std::string path =
      directory + "/" + name + "-" + std::to_string(ranks) + ".hip";
  std::ofstream out(path, std::ios::binary);
  out << ldst;
  if (!out.flush()) {
    error = "cannot write " + path;
    return false;
  }
  return true;
}
} // namespace

bool Communicator::precompile(const std::string &directory, int ranks,
                              const std::vector<std::string> &schedules,
                              const CommOptions &options, std::string &error) {
  std::unique_ptr<ScheduleCompiler> compiler = ScheduleCompiler::load(
      error, options.compilerLibrary, options.cacheDirectory);
  if (!compiler)
    return false;
  for (const BuiltinSchedule &builtin : kBuiltinSchedules) {
    std::string schedule = builtin.name;
    for (int root = 0; root < (isRooted(schedule) ? ranks : 1); ++root) {
      std::string name = rootedName(schedule, root);
      std::string ldst;
      if (!compileToLdst(*compiler, withRoot(builtin.text, root), name, ranks,
                         ldst, error) ||
          !writeProgram(directory, name, ranks, ldst, error))
        return false;
    }
  }
  for (const std::string &path : schedules) {
    std::string text, ldst;
    if (!readFile(path, text)) {
      error = "cannot read schedule " + path;
      return false;
    }
    if (!compileToLdst(*compiler, text, path, ranks, ldst, error) ||
        !writeProgram(directory, programName(path), ranks, ldst, error))
      return false;
  }
  return true;
}

bool Communicator::addInstance(LdstProgram program, int &index,
                               std::string &error) {
  if (program.ranks != ranks_) {
    error = program.schedule + " is compiled for " +
            std::to_string(program.ranks) + " ranks, the communicator has " +
            std::to_string(ranks_);
    return false;
  }
  if (instances_.size() >= size_t(kMaxInstances)) {
    error = "a communicator runs at most " + std::to_string(kMaxInstances) +
            " schedules";
    return false;
  }
  auto take = [&](size_t bytes, size_t &offset) {
    offset = controlUsed_;
    controlUsed_ += (bytes + kControlAlign - 1) / kControlAlign * kControlAlign;
    return controlUsed_ <= controlBytes_;
  };
  Instance instance;
  if (!take(std::max(1, program.flagSlots) * 8, instance.flagsOffset) ||
      !take(8, instance.syncOffset) || !take(16, instance.epochsOffset) ||
      !take(2 * ranks_ * 8, instance.arriveOffset) ||
      !take(kRecordWords * 8, instance.errorOffset) ||
      (program.collective && program.collective->sendCounts >= 0 &&
       !take(2 * ranks_ * 8, instance.countsOffset))) {
    error = "the control area is full (" + std::to_string(controlBytes_) +
            " bytes of flags): too many schedules on one communicator";
    return false;
  }
  instance.kernel = device_->load(program, error);
  if (!instance.kernel)
    return false;
  instance.touched.resize(ranks_);
  instance.remote.assign(program.buffers.size(), 0);
  for (int q = 0; q < ranks_; ++q)
    for (const auto &pair : program.touched(q)) {
      instance.touched[q].insert(pair);
      if (pair.first != q)
        instance.remote[pair.second] = 1;
    }
  instance.program = std::move(program);
  index = static_cast<int>(instances_.size());
  instances_.push_back(std::move(instance));
  return true;
}

bool Communicator::instanceFor(const std::string &schedule, int root,
                               int &index, std::string &error,
                               const Arithmetic *arithmetic) {
  std::string key = schedule + "@" + std::to_string(root);
  if (arithmetic)
    key += std::string(" ") + dataTypeName(arithmetic->type) + " " +
           reduceOpName(arithmetic->op);
  auto it = instanceIndex_.find(key);
  if (it != instanceIndex_.end()) {
    index = it->second;
    return true;
  }
  const char *builtin = builtinText(schedule);
  if (!builtin) {
    error = "internal: no built-in schedule " + schedule;
    return false;
  }
  LdstProgram program;
  if (!compileProgram(withRoot(builtin, root), rootedName(schedule, root),
                      program, error) ||
      (arithmetic && !setReduceArithmetic(program, arithmetic->type,
                                          arithmetic->op, error)) ||
      !addInstance(std::move(program), index, error))
    return false;
  instanceIndex_[key] = index;
  return true;
}

bool Communicator::checkSignature(const std::string &signature,
                                  std::string &error) {
  if (!options_.checkCalls || checkedSignatures_.count(signature))
    return true;
  if (!agree(signature, "the call", error))
    return false;
  checkedSignatures_.insert(signature);
  return true;
}

void Communicator::readKernelError(std::string &error) {
  const unsigned long long *records = device_->errorRecord();
  for (size_t i = 0; i < instances_.size(); ++i) {
    const unsigned long long *r = records + i * kRecordWords;
    if (uint64_t kind = *(volatile const unsigned long long *)(r + 5)) {
      // sdma.copyv's count error (SdmaTable::error words 5-7; kind + 4:
      // the rank's packed counts were all zeroed, see LdstPhases.hip).
      int64_t count = static_cast<int64_t>(r[7]);
      uint64_t what = kind & 3;
      error = "rank " + std::to_string(r[6] / 65536) + " (" +
              instances_[i].program.schedule + ") was to send " +
              std::to_string(count) + " rows to rank " +
              std::to_string(r[6] % 65536) + ", " +
              (what == 1   ? "more than the capacity"
               : what == 2 ? "past the end of a packed buffer"
                           : "a negative count") +
              (kind & 4    ? ": it sent nothing in this call (its packed rows "
                             "are no longer where its counts say; every "
                             "receive count from it is 0)"
               : what == 2 ? ": nothing was sent for it"
                           : ": nothing was sent for it (its receive count "
                             "is 0)");
      return;
    }
    if (!*(volatile const unsigned long long *)r)
      continue;
    const Instance &instance = instances_[i];
    int programRank = static_cast<int>(r[1]);
    std::string where = "rank " + std::to_string(programRank) + " (" +
                        instance.program.schedule + ")";
    int64_t slot = static_cast<int64_t>(r[2]);
    if (slot == -2 || slot == -3) {
      error = where + " timed out after " + std::to_string(options_.timeoutMs) +
              " ms waiting for rank " + std::to_string(r[3]) +
              (slot == -2 ? " to start the call" : " to finish the call") +
              ": it did not arrive, exited, or made a different call";
      return;
    }
    if (slot < 0) {
      error = where + ": its blocks did not all reach a rank barrier within " +
              std::to_string(options_.timeoutMs) + " ms";
      return;
    }
    std::string peers;
    for (int q : instance.program.signalers(programRank, int(slot)))
      peers += (peers.empty() ? "" : ", ") + std::to_string(q);
    error = where + " timed out after " + std::to_string(options_.timeoutMs) +
            " ms waiting for rank " + (peers.empty() ? "?" : peers) +
            " (flag slot " + std::to_string(slot) + " reached " +
            std::to_string(r[4]) + " of " + std::to_string(r[3]) +
            "): it did not arrive, exited, or made a different call";
    return;
  }
}

bool Communicator::run(int index, const std::vector<const void *> &buffers,
                       size_t chunkBytes, void *stream,
                       const std::string &signature, std::string &error,
                       std::vector<size_t> stride, size_t rowBytes,
                       std::vector<const void *> counts) {
  if (failed_.empty())
    readKernelError(failed_);
  if (!failed_.empty()) {
    error = "the communicator has failed: " + failed_;
    return false;
  }
  Instance &instance = instances_[index];
  const LdstProgram &program = instance.program;
  size_t B = program.buffers.size();
  stride.resize(B, 0);
  if (buffers.size() != B || chunkBytes == 0) {
    error = program.schedule + " takes " + std::to_string(B) +
            " buffers and a chunk of at least one byte; got " +
            std::to_string(buffers.size()) + " and " +
            std::to_string(chunkBytes);
    return false;
  }
  // Where each buffer lives; the same offset of the same region on every
  // rank (symmetric memory).
  std::vector<int> region(B, -1);
  std::vector<size_t> offset(B, 0);
  std::string problem;
  for (size_t b = 0; b < B && problem.empty(); ++b) {
    if (!buffers[b])
      continue;
    size_t bytes = program.buffers[b].bytes(chunkBytes);
    std::string what = "buffer '" + program.buffers[b].name + "'";
    if (!locate(buffers[b], bytes, what.c_str(), region[b], offset[b], problem))
      break;
  }
  // Where each buffer is, for the ranks to agree on: those another rank
  // reaches (a buffer only its own rank touches may differ, or be null).
  std::string fullSignature = signature;
  for (size_t b = 0; b < B; ++b)
    fullSignature +=
        !instance.remote[b]
            ? std::string(" local")
            : " " + std::to_string(region[b]) + "+" +
                  std::to_string(region[b] < 0 ? 0 : offset[b]) +
                  (stride[b] ? "/" + std::to_string(stride[b]) : "");
  if (!problem.empty()) {
    error = problem;
    return false;
  }
  if (!checkSignature(fullSignature, error))
    return false;

  KernelLaunch launch;
  std::vector<uint64_t> &t = launch.table;
  t.assign(ranks_ * B, 0);
  for (const auto &[r, b] : instance.touched[rank_]) {
    const std::string &name = program.buffers[b].name;
    if (region[b] < 0) {
      error = program.schedule + " on rank " + std::to_string(rank_) +
              " needs buffer '" + name + "' (null here)";
      return false;
    }
    const Region &at = regions_[region[b]];
    // A heap allocation has the same size everywhere (locate checked it);
    // a registration has each rank's own.
    size_t need = program.buffers[b].bytes(chunkBytes);
    size_t has = at.peerBytes[r];
    size_t start = offset[b] + r * stride[b];
    if ((region[b] != 0 || stride[b]) && start + need > has) {
      error = "rank " + std::to_string(r) + "'s buffer '" + name +
              "' is too small: " + program.schedule + " needs " +
              std::to_string(need) + " bytes at offset " +
              std::to_string(offset[b]) + " of its registration, which has " +
              std::to_string(has);
      return false;
    }
    t[r * B + b] = reinterpret_cast<uint64_t>(at.peer[r] + start);
  }
  const Region &heap = regions_[0];
  for (int q = 0; q < ranks_; ++q)
    t.push_back(
        reinterpret_cast<uint64_t>(heap.peer[q] + instance.flagsOffset));
  for (int q = 0; q < ranks_; ++q)
    t.push_back(reinterpret_cast<uint64_t>(heap.peer[q] + instance.syncOffset));
  uint64_t record = device_->errorRecordDevice() + index * kRecordWords * 8;
  bool mirrored = device_->errorMirrored();
  t.push_back(
      mirrored ? reinterpret_cast<uint64_t>(heap.local + instance.errorOffset)
               : record);
  t.push_back(options_.timeoutMs * 1000000ull);
  t.push_back(reinterpret_cast<uint64_t>(heap.local + instance.epochsOffset));
  for (int q = 0; q < ranks_; ++q)
    t.push_back(
        reinterpret_cast<uint64_t>(heap.peer[q] + instance.arriveOffset));
  t.push_back(mirrored ? record : 0);
  t.push_back(rowBytes);
  counts.resize(4, nullptr); // SdmaTable::countsIn, countsOut
  for (const void *p : counts)
    t.push_back(reinterpret_cast<uint64_t>(p));
  launch.chunkBytes = chunkBytes;
  launch.programRank = rank_;
  launch.stream = stream;
  if (instance.kernel->launch(launch, error))
    return true;
  // A CPU run reports a timeout itself; the record names the missing rank.
  readKernelError(failed_);
  if (!failed_.empty())
    error = failed_;
  return false;
}

bool Communicator::collective(CommOp kind, const void *send, void *recv,
                              size_t count, DataType type, int root,
                              void *stream, std::string &error) {
  size_t bytes = dataTypeBytes(type);
  std::string name = commOpName(kind);
  if (!bytes) {
    error =
        name + ": invalid data type " + std::to_string(static_cast<int>(type));
    return false;
  }
  bool rooted = kind == CommOp::Broadcast || kind == CommOp::Scatter ||
                kind == CommOp::Gather;
  if (rooted && (root < 0 || root >= ranks_)) {
    error = name + ": root " + std::to_string(root) + " is not a rank (0.." +
            std::to_string(ranks_ - 1) + ")";
    return false;
  }
  if (!rooted)
    root = 0;
  if (count == 0)
    return true; // as NCCL: nothing to move
  std::string schedule;
  std::vector<const void *> buffers{send, recv};
  std::vector<size_t> stride;
  size_t chunk = count * bytes;
  switch (kind) {
  case CommOp::AllGather:
    schedule = "all_gather_direct";
    // In place (NCCL: sendbuff == recvbuff + rank * count): each rank's
    // input is its own slot of its output, a different offset per rank.
    if (static_cast<const char *>(send) ==
        static_cast<const char *>(recv) + rank_ * chunk) {
      buffers = {recv, recv};
      stride = {chunk, 0};
    }
    break;
  case CommOp::AlltoAll:
    schedule = send == recv ? "all_to_all_swap" : "all_to_all_direct";
    if (send == recv)
      buffers = {recv};
    break;
  case CommOp::Broadcast:
    schedule = "broadcast";
    break;
  case CommOp::Scatter:
    schedule = "scatter";
    break;
  case CommOp::Gather:
    schedule = "gather";
    break;
  }
  // Buffers a rank does not use may be null (NCCL: a non-root's sendbuff).
  int index = -1;
  if (!instanceFor(schedule, root, index, error))
    return false;
  std::string signature = name + " count " + std::to_string(count) + " " +
                          dataTypeName(type) + " root " + std::to_string(root);
  return run(index, buffers, chunk, stream, signature, error, stride);
}

bool Communicator::loadSchedule(const std::string &textOrPath,
                                Schedule &schedule, std::string &error) {
  std::string text = textOrPath, name = "<schedule>";
  bool inlineText = textOrPath.find("sdma.schedule") != std::string::npos ||
                    textOrPath.rfind("// sdma-ldst: ", 0) == 0;
  if (!inlineText) {
    if (!readFile(textOrPath, text))
      error = "cannot read schedule " + textOrPath;
    name = textOrPath;
  }
  // Every rank must load the same text (an error on every rank if not).
  std::string mine = error.empty()
                         ? "schedule " + std::to_string(hashBytes(text))
                         : "unreadable schedule";
  std::string agreeError;
  if (!agree(mine, "the loaded schedule", agreeError)) {
    if (error.empty())
      error = agreeError;
    return false;
  }
  if (!error.empty())
    return false;
  LdstProgram program;
  if (text.rfind("// sdma-ldst: ", 0) == 0) {
    std::optional<LdstProgram> parsed = LdstProgram::parse(text, error);
    if (!parsed)
      return false;
    program = std::move(*parsed);
  } else if (!compileProgram(text, name, program, error)) {
    return false;
  }
  schedule.name = program.schedule;
  schedule.buffers = program.buffers;
  return addInstance(std::move(program), schedule.instance, error);
}

bool Communicator::launch(const Schedule &schedule,
                          const std::vector<void *> &buffers, size_t chunkBytes,
                          void *stream, std::string &error) {
  if (schedule.instance < 0 || size_t(schedule.instance) >= instances_.size()) {
    error = "the schedule was not loaded on this communicator";
    return false;
  }
  std::vector<const void *> pointers(buffers.begin(), buffers.end());
  return run(schedule.instance, pointers, chunkBytes, stream,
             "launch " + schedule.name + " chunk " + std::to_string(chunkBytes),
             error);
}
