//===- ProgramCache.cpp - the communicator's loaded schedules -------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/ProgramCache.h"

#include "compile/KernelCache.h"
#include "exec/FileBytes.h"
#include "sdma/runtime/ScheduleCompiler.h"

#include <cstring>
#include <fstream>

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

bool isRooted(const std::string &schedule) {
  return schedule == "broadcast" || schedule == "scatter" ||
         schedule == "gather" || schedule == "reduce";
}
bool isMoe(const std::string &schedule) {
  return schedule.rfind("all_to_allv_2d", 0) == 0;
}
/// The parameters a built-in binds: a rooted one its root, an MoE one its
/// experts and alignment; nullopt: none.
std::optional<ProgramParams> boundParams(const std::string &schedule,
                                         const ProgramParams &params) {
  if (isRooted(schedule))
    return ProgramParams{params.root, 0, 0};
  if (isMoe(schedule)) // the combine's offsets are the caller's: no padding
    return ProgramParams{0, params.experts,
                         schedule == "all_to_allv_2d" ? params.majorAlign : 1};
  return std::nullopt;
}

/// Compiles `text` (`name` in diagnostics) for `ranks` ranks, rooted at
/// `root` where it is a rooted schedule, into the text of its load/store
/// program alone (no DMA plan: the communicator runs kernels). The root is
/// a compile option bound to the schedule's `sdma.root`, never a text edit.
bool compileToLdst(ScheduleCompiler &compiler, const std::string &text,
                   const std::string &name, int ranks,
                   std::optional<ProgramParams> params, std::string &ldst,
                   Error &error) {
  ProgramCompileOptions options;
  options.ranks = ranks;
  options.name = name;
  if (params && !params->experts)
    options.root = params->root;
  if (params && params->experts) {
    options.experts = params->experts;
    options.majorAlign = params->majorAlign;
  }
  ScheduleCompileResult result;
  std::string why;
  if (!compiler.compileProgram(text, options, result, why))
    return error.fail(ErrorKind::System, why);
  if (!result.ok)
    return error.fail(
        ErrorKind::InvalidArgument,
        name + " does not compile for " + std::to_string(ranks) + " ranks: " +
            (result.diagnostics.empty() ? result.error : result.diagnostics));
  ldst = std::move(result.ldst);
  return true;
}

bool writeProgram(const std::string &directory, const std::string &name,
                  int ranks, const std::string &ldst, Error &error) {
  std::string path =
      directory + "/" + name + "-" + std::to_string(ranks) + ".hip";
  std::ofstream out(path, std::ios::binary);
  out << ldst;
  if (!out.flush())
    return error.fail(ErrorKind::System, "cannot write " + path);
  return true;
}

/// Writes NAME-R.VARIANT.plan.json, the DMA plan of `text`, where it has
/// one (a schedule that reduces or reads counts at run time has none).
/// Writes NAME-R.VARIANT.plan.json and, with a packet target,
/// NAME-R.VARIANT.TARGET.packets.json (kernel submission's packets).
bool writePlan(ScheduleCompiler &compiler, const std::string &directory,
               const std::string &text, const std::string &name, int ranks,
               std::optional<int> root, const std::string &variant,
               const std::string &packetTarget, Error &error) {
  ScheduleCompileOptions options;
  options.ranks = ranks;
  options.root = root;
  options.variants = {variant};
  options.name = name;
  if (!packetTarget.empty()) {
    options.packets = "primary";
    options.sdmaTarget = packetTarget;
  }
  ScheduleCompileResult result;
  std::string why;
  if (!compiler.compile(text, options, result, why))
    return error.fail(ErrorKind::System, why);
  if (!result.ok || result.variants.empty())
    return true;
  std::string stem = directory + "/" + ProgramCache::programName(name) + "-" +
                     std::to_string(ranks) + "." + variant;
  auto write = [&](const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    return out.flush() ? true
                       : error.fail(ErrorKind::System, "cannot write " + path);
  };
  return write(stem + ".plan.json", result.variants[0].plan) &&
         (packetTarget.empty() ||
          write(stem + "." + packetTarget + ".packets.json",
                result.variants[0].packets));
}

const char *typeName(DataType type) {
  switch (type) {
  case DataType::Float32:
    return "f32";
  case DataType::Float16:
    return "f16";
  case DataType::Bfloat16:
    return "bf16";
  case DataType::Int32:
    return "i32";
  case DataType::Int64:
    return "i64";
  case DataType::Uint32:
    return "ui32";
  case DataType::Uint64:
    return "ui64";
  case DataType::Float64:
    return "f64";
  case DataType::Int8:
    return "i8";
  case DataType::Uint8:
    return "ui8";
  }
  return "?";
}
} // namespace

bool sdma::rt::setReduceArithmetic(LdstProgram &program,
                                   const Arithmetic &arithmetic, Error &error) {
  std::string why;
  if (!program.setReduction(typeName(arithmetic.type),
                            arithmeticOpName(arithmetic), why,
                            arithmetic.partOf))
    return error.fail(program.collective ? ErrorKind::Internal
                                         : ErrorKind::InvalidArgument,
                      why);
  return true;
}

ProgramCache::ProgramCache(int rank, int ranks, const CommOptions &options,
                           CommDevice &device, Agreement &agreement,
                           size_t controlBytes)
    : rank_(rank), ranks_(ranks), options_(options), device_(device),
      agreement_(agreement), controlBytes_(controlBytes) {}

ProgramCache::~ProgramCache() = default;

std::string ProgramParams::name(const std::string &schedule) const {
  if (experts)
    return schedule + "_e" + std::to_string(experts) + "_a" +
           std::to_string(majorAlign);
  return root ? schedule + "_root" + std::to_string(root) : schedule;
}

std::string ProgramCache::key(const std::string &schedule,
                              const ProgramParams &params,
                              const Arithmetic *arithmetic) {
  std::string key = params.name(schedule) + "@" + std::to_string(params.root);
  if (arithmetic)
    key += " " + arithmeticName(*arithmetic);
  return key;
}

int ProgramCache::find(const std::string &key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : it->second;
}

std::string ProgramCache::programName(const std::string &path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".mlir") == 0)
    stem.resize(stem.size() - 5);
  return stem;
}

ScheduleCompiler *ProgramCache::compiler() {
  // Two threads may call one communicator: the library loads once.
  std::lock_guard<std::mutex> lock(compilerMutex_);
  if (!compilerTried_) {
    compilerTried_ = true;
    compiler_ = ScheduleCompiler::load(compilerError_, options_.compilerLibrary,
                                       options_.cacheDirectory);
  }
  return compiler_.get();
}

bool ProgramCache::compile(const std::string &text, const std::string &name,
                           std::optional<ProgramParams> params,
                           LdstProgram &program, Error &error) {
  if (ScheduleCompiler *compiler = this->compiler()) {
    std::string ldst, why;
    if (!compileToLdst(*compiler, text, name, ranks_, params, ldst, error))
      return false;
    std::optional<LdstProgram> parsed = LdstProgram::parse(ldst, why);
    if (!parsed)
      return error.fail(ErrorKind::Internal, why);
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
  if (!loaded)
    return error.fail(ErrorKind::System, "cannot compile " + name + ": " +
                                             compilerError_ + "; and " +
                                             loadError);
  program = std::move(*loaded);
  return true;
}

bool ProgramCache::reserve(size_t bytes, size_t &offset) {
  offset = controlUsed_;
  controlUsed_ += (bytes + kControlAlign - 1) / kControlAlign * kControlAlign;
  return controlUsed_ <= controlBytes_;
}

bool ProgramCache::placeControl(const LdstProgram &program,
                                const std::string &programKey,
                                Instance &instance, Error &error) {
  bool counted = program.collective && program.collective->sendCounts >= 0;
  // An all-to-allv's two count tables (its last buffers), side by side.
  uint64_t countEntries = 0;
  int B = int(program.buffers.size());
  if (counted && (program.collective->sendCounts != B - 2 ||
                  program.collective->recvCounts != B - 1))
    return error.fail(ErrorKind::InvalidArgument,
                      program.schedule +
                          ": a communicator runs an all-to-allv whose count "
                          "tables are its last two buffers, the send table "
                          "then the receive table (counts(%send -> %recv))");
  if (counted)
    for (int table :
         {program.collective->sendCounts, program.collective->recvCounts})
      if (table >= 0)
        countEntries += program.buffers[table].chunks;
  auto shared = programRecord_.find(programKey);
  if (shared != programRecord_.end()) {
    const Instance &first = instances_[recordOwner_[shared->second]];
    // A variant differs in its arithmetic only (setReduceArithmetic).
    if (first.program.flagSlots == program.flagSlots &&
        (first.countsOffset != 0) == counted) {
      instance.record = shared->second;
      instance.flagsOffset = first.flagsOffset;
      instance.syncOffset = first.syncOffset;
      instance.epochsOffset = first.epochsOffset;
      instance.arriveOffset = first.arriveOffset;
      instance.errorOffset = first.errorOffset;
      instance.tagsOffset = first.tagsOffset;
      instance.countsOffset = first.countsOffset;
      return true;
    }
  }
  if (recordOwner_.size() >= size_t(kMaxPrograms))
    return error.fail(ErrorKind::InvalidUsage,
                      "a communicator runs at most " +
                          std::to_string(kMaxPrograms) +
                          " programs (distinct schedules and roots)");
  instance.record = static_cast<int>(recordOwner_.size());
  if (!reserve(std::max(1, program.flagSlots) * 8, instance.flagsOffset) ||
      !reserve(8, instance.syncOffset) || !reserve(16, instance.epochsOffset) ||
      !reserve(2 * ranks_ * 8, instance.arriveOffset) ||
      !reserve(kRecordWords * 8, instance.errorOffset) ||
      // The call tags, then a premulsum's scalars (LdstKernel.hip).
      !reserve(2 * ranks_ * 8, instance.tagsOffset) ||
      (counted && !reserve(std::max<uint64_t>(countEntries, 2 * ranks_) * 8,
                           instance.countsOffset)))
    return error.fail(ErrorKind::InvalidUsage,
                      "the control area is full (" +
                          std::to_string(controlBytes_) +
                          " bytes of flags): too many schedules on one "
                          "communicator");
  return true;
}

bool ProgramCache::add(std::optional<LdstProgram> program, const Error &refused,
                       const std::string &what, const std::string &programKey,
                       int &index, Error &error) {
  size_t usedBefore = controlUsed_;
  Instance instance;
  Error local = refused;
  if (!program && local.empty())
    local.fail(ErrorKind::Internal, "no program for " + what);
  if (program && program->ranks != ranks_) {
    local.fail(ErrorKind::InvalidArgument,
               program->schedule + " is compiled for " +
                   std::to_string(program->ranks) +
                   " ranks, the communicator has " + std::to_string(ranks_));
  } else if (program && placeControl(*program, programKey, instance, local)) {
    std::string why;
    instance.kernel = device_.load(*program, why);
    if (!instance.kernel)
      local.fail(options_.device == "cpu" ? ErrorKind::System
                                          : ErrorKind::Device,
                 why);
  }
  // Every rank adds it, or none does (unless calls are not checked: then
  // the ranks promise to make the same calls).
  bool agreed = options_.checkCalls
                    ? agreement_.agreeUnless(local, "add " + what,
                                             "adding " + what, error)
                    : local.empty() || (error = local, false);
  if (!agreed) {
    controlUsed_ = usedBefore;
    return false;
  }
  instance.touched.resize(ranks_);
  instance.remote.assign(program->buffers.size(), 0);
  for (int q = 0; q < ranks_; ++q)
    for (const auto &pair : program->touched(q)) {
      instance.touched[q].insert(pair);
      if (pair.first != q)
        instance.remote[pair.second] = 1;
    }
  instance.program = std::move(*program);
  std::lock_guard<std::mutex> lock(recordsMutex_);
  index = static_cast<int>(instances_.size());
  if (size_t(instance.record) == recordOwner_.size()) {
    recordOwner_.push_back(index);
    programRecord_[programKey] = instance.record;
  }
  instances_.push_back(std::move(instance));
  return true;
}

std::vector<size_t> ProgramCache::errorOffsets() const {
  std::lock_guard<std::mutex> lock(recordsMutex_);
  std::vector<size_t> offsets;
  for (int owner : recordOwner_)
    offsets.push_back(instances_[owner].errorOffset);
  return offsets;
}

bool ProgramCache::addBuiltin(const std::string &schedule,
                              const ProgramParams &params,
                              const Arithmetic *arithmetic, int &index,
                              Error &error) {
  std::string name = key(schedule, params, arithmetic);
  const char *builtin = builtinText(schedule);
  std::optional<LdstProgram> program;
  Error refused;
  LdstProgram compiled;
  if (!builtin)
    refused.fail(ErrorKind::Internal, "no built-in schedule " + schedule);
  else if (compile(builtin, params.name(schedule),
                   boundParams(schedule, params), compiled, refused) &&
           (!arithmetic || setReduceArithmetic(compiled, *arithmetic, refused)))
    program = std::move(compiled);
  // The variants of a reduction (type, operator) share their program's
  // control words.
  if (!add(std::move(program), refused, name, key(schedule, params, nullptr),
           index, error))
    return false;
  index_[name] = index;
  Instance &added = instances_[index];
  added.text = builtin;
  added.name = params.name(schedule);
  if (isRooted(schedule))
    added.root = params.root;
  return true;
}

bool ProgramCache::addSchedule(const std::string &text, const std::string &name,
                               const Arithmetic *arithmetic, int &index,
                               Error &error) {
  std::optional<LdstProgram> program;
  Error refused;
  if (text.rfind("// sdma-ldst: ", 0) == 0) {
    std::string why;
    program = LdstProgram::parse(text, why);
    if (!program)
      refused.fail(ErrorKind::InvalidArgument, why);
  } else {
    LdstProgram compiled;
    if (compile(text, name, std::nullopt, compiled, refused))
      program = std::move(compiled);
  }
  // Only a program that reduces has arithmetic to set.
  if (program && arithmetic && !program->reduces())
    arithmetic = nullptr;
  if (program && arithmetic &&
      !setReduceArithmetic(*program, *arithmetic, refused))
    program.reset();
  std::string what = "schedule " + std::to_string(hashBytes(text));
  std::string variant =
      arithmetic ? what + " " + arithmeticName(*arithmetic) : what;
  if (!add(std::move(program), refused, variant, what, index, error))
    return false;
  if (text.rfind("// sdma-ldst: ", 0) != 0) {
    instances_[index].text = text;
    instances_[index].name = name;
  }
  return true;
}

std::string ProgramCache::dmaInapplicable(int index) const {
  const Instance &instance = instances_[index];
  const LdstProgram &program = instance.program;
  if (program.collective && program.collective->isReduction())
    return program.schedule + " reduces, and DMA engines cannot add";
  if (instance.countsOffset)
    return program.schedule +
           " reads its counts at run time, and a DMA plan needs every size "
           "when it is built";
  if (instance.text.empty())
    return program.schedule +
           " was loaded as a load/store program: there is no schedule to "
           "build a DMA plan from";
  return "";
}

bool ProgramCache::compilePlan(const Instance &instance, Plan &plan,
                               std::optional<PacketPlan> &packets,
                               Error &error) {
  const std::string &variant = options_.dmaVariant;
  std::string why, target;
  const bool kernel = options_.dmaSubmit == "kernel";
  if (kernel && (target = device_.dmaPacketTarget(why)).empty())
    return error.fail(ErrorKind::InvalidUsage,
                      "SDMA_DMA_SUBMIT=kernel: " + why);
  // A GPU takes its own packets or the conservative gfx9 subset; the CPU
  // device's engines run any target's.
  if (kernel && !options_.dmaPacketTarget.empty() &&
      options_.dmaPacketTarget != target &&
      options_.dmaPacketTarget != "gfx9" && options_.device != "cpu")
    return error.fail(ErrorKind::InvalidUsage,
                      "SDMA_DMA_PACKET_TARGET=" + options_.dmaPacketTarget +
                          ": this GPU's SDMA engines take " + target +
                          " (or gfx9) packets");
  if (kernel && !options_.dmaPacketTarget.empty())
    target = options_.dmaPacketTarget;
  if (ScheduleCompiler *compiler = this->compiler()) {
    ScheduleCompileOptions options;
    options.ranks = ranks_;
    options.root = instance.root;
    options.variants = {variant};
    options.name = instance.name;
    if (kernel) {
      options.packets = "primary";
      options.sdmaTarget = target;
    }
    ScheduleCompileResult result;
    if (!compiler->compile(instance.text, options, result, why))
      return error.fail(ErrorKind::System, why);
    if (!result.ok || result.variants.empty())
      return error.fail(
          ErrorKind::InvalidArgument,
          instance.name + " has no " + variant + " DMA plan for " +
              std::to_string(ranks_) + " ranks: " +
              (!result.skipped.empty()      ? result.skipped[0].second
               : result.diagnostics.empty() ? result.error
                                            : result.diagnostics));
    std::optional<Plan> parsed = Plan::parse(result.variants[0].plan, why);
    if (!parsed)
      return error.fail(ErrorKind::Internal, why);
    plan = std::move(*parsed);
    if (!kernel)
      return true;
    if (!(packets = PacketPlan::parse(result.variants[0].packets, why)))
      return error.fail(ErrorKind::InvalidArgument,
                        instance.name + " has no " + target +
                            " SDMA packets for its " + variant +
                            " DMA plan: " + why);
    return true;
  }
  // Precompiled (sdma-precompile --dma-variants=V [--dma-packets=TARGET]).
  std::string stem = options_.programDirectory + "/" +
                     programName(instance.name) + "-" + std::to_string(ranks_) +
                     "." + variant;
  std::optional<Plan> loaded;
  if (options_.programDirectory.empty())
    why = "no program directory (SDMA_PROGRAM_DIR) is set";
  else if (!(loaded = Plan::load(stem + ".plan.json", why)))
    why = "no precompiled DMA plan: " + why;
  else if (kernel && !(packets = PacketPlan::load(
                           stem + "." + target + ".packets.json", why)))
    why = "no precompiled " + target + " SDMA packets: " + why;
  if (!loaded || (kernel && !packets))
    return error.fail(ErrorKind::System, "cannot compile the DMA plan of " +
                                             instance.name + ": " +
                                             compilerError_ + "; and " + why);
  if (kernel && packets->target.name != target)
    return error.fail(ErrorKind::InvalidArgument,
                      stem + "." + target + ".packets.json is built for " +
                          packets->target.name + ", not " + target);
  plan = std::move(*loaded);
  return true;
}

bool ProgramCache::addDma(int index, Error &error) {
  Instance &instance = instances_[index];
  if (instance.dma)
    return true;
  if (instance.dmaTried) {
    error = instance.dmaRefused;
    return false;
  }
  size_t usedBefore = controlUsed_;
  Error local;
  Plan plan;
  std::optional<PacketPlan> packets;
  std::shared_ptr<const DmaProgram> program;
  std::unique_ptr<CommKernel> kernel;
  size_t flagsOffset = 0, epochsOffset = 0, arriveOffset = 0;
  if (std::string no = dmaInapplicable(index); !no.empty()) {
    local.fail(ErrorKind::InvalidUsage, no);
  } else if (compilePlan(instance, plan, packets, local)) {
    std::string why;
    std::optional<DmaProgram> made = DmaProgram::create(
        std::move(plan), options_.dmaVariant, instance.program, rank_,
        device_.dmaValueWaits(), why);
    if (!made || (packets && !made->attachPackets(std::move(*packets), why)))
      local.fail(ErrorKind::Internal, why);
    else if (!reserve(std::max(1, made->flagSlots()) * 8, flagsOffset) ||
             !reserve(16, epochsOffset) ||
             !reserve(2 * ranks_ * 8, arriveOffset))
      local.fail(ErrorKind::InvalidUsage,
                 "the control area is full (" + std::to_string(controlBytes_) +
                     " bytes of flags): no room for the DMA flags of " +
                     instance.program.schedule);
    else if (program = std::make_shared<const DmaProgram>(std::move(*made)),
             !(kernel = device_.loadDma(program, why)))
      local.fail(options_.device == "cpu" ? ErrorKind::System
                                          : ErrorKind::Device,
                 why);
  }
  std::string what = "the DMA path of " + instance.program.schedule;
  // What the ranks reserve must be alike: the plan's flag count with it.
  std::string shape =
      program
          ? " flags " + std::to_string(program->flagSlots()) + " commands " +
                std::to_string(program->plan.commandCount()) +
                program->submission() +
                (program->packets
                     ? " align " +
                           std::to_string(program->packets->chunkAlign) + "/" +
                           std::to_string(program->packetBaseAlign) + " max " +
                           std::to_string(program->packets->maxChunkBytes)
                     : std::string())
          : std::string();
  bool agreed = options_.checkCalls
                    ? agreement_.agreeUnless(local,
                                             "dma " + instance.name + " " +
                                                 options_.dmaVariant + " " +
                                                 options_.dmaSubmit + shape,
                                             "adding " + what, error)
                    : local.empty() || (error = local, false);
  instance.dmaTried = true;
  if (!agreed) {
    controlUsed_ = usedBefore;
    instance.dmaRefused = error;
    return false;
  }
  std::lock_guard<std::mutex> lock(recordsMutex_);
  instance.dma = std::move(program);
  instance.dmaKernel = std::move(kernel);
  instance.dmaFlagsOffset = flagsOffset;
  instance.dmaEpochsOffset = epochsOffset;
  instance.dmaArriveOffset = arriveOffset;
  return true;
}

bool ProgramCache::precompile(const std::string &directory, int ranks,
                              const std::vector<std::string> &schedules,
                              const CommOptions &options, Error &error,
                              const std::vector<int> &experts, int majorAlign) {
  std::string why;
  std::unique_ptr<ScheduleCompiler> compiler = ScheduleCompiler::load(
      why, options.compilerLibrary, options.cacheDirectory);
  if (!compiler)
    return error.fail(ErrorKind::System, why);
  std::string variant =
      options.dmaVariant.empty() ? std::string("pcpy") : options.dmaVariant;
  // Kernel submission's packets where a target is named.
  std::string packetTarget =
      options.dmaSubmit == "kernel" ? options.dmaPacketTarget : std::string();
  for (const BuiltinSchedule &builtin : kBuiltinSchedules) {
    std::string schedule = builtin.name;
    // Each root of a rooted built-in; each expert count of an MoE one
    // (which has no DMA plan: its counts are read at run time).
    std::vector<ProgramParams> instances;
    if (isMoe(schedule))
      for (int e : experts)
        instances.push_back(*boundParams(schedule, {0, e, majorAlign}));
    else
      for (int root = 0; root < (isRooted(schedule) ? ranks : 1); ++root)
        instances.push_back({root, 0, 0});
    for (const ProgramParams &params : instances) {
      std::string name = params.name(schedule);
      std::string ldst;
      std::optional<ProgramParams> bound = boundParams(schedule, params);
      if (!compileToLdst(*compiler, builtin.text, name, ranks, bound, ldst,
                         error) ||
          !writeProgram(directory, name, ranks, ldst, error) ||
          (!isMoe(schedule) &&
           !writePlan(*compiler, directory, builtin.text, name, ranks,
                      bound ? std::optional<int>(bound->root) : std::nullopt,
                      variant, packetTarget, error)))
        return false;
    }
  }
  for (const std::string &path : schedules) {
    std::string text, ldst;
    if (!readFileBytes(path, text))
      return error.fail(ErrorKind::InvalidArgument,
                        "cannot read schedule " + path);
    if (!compileToLdst(*compiler, text, path, ranks, std::nullopt, ldst,
                       error) ||
        !writeProgram(directory, programName(path), ranks, ldst, error) ||
        !writePlan(*compiler, directory, text, path, ranks, std::nullopt,
                   variant, packetTarget, error))
      return false;
  }
  return true;
}
