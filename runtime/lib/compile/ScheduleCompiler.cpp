//===- ScheduleCompiler.cpp - compile schedules from the runtime ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/ScheduleCompiler.h"

#include "compile/KernelCache.h"
#include "sdma/runtime/Version.h"

#include <dlfcn.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

using namespace sdma::rt;
using json = nlohmann::ordered_json;

namespace {
/// The C entry's ABI version this runtime speaks (CApi.h).
constexpr int kCompilerAbiVersion = 4;

/// The directory of the running executable ("" if unknown).
std::string executableDirectory() {
  char buffer[4096];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0)
    return "";
  std::string path(buffer, n);
  return path.substr(0, path.rfind('/'));
}

/// Size and modification time: a rebuilt library gets new cache keys.
std::string fileIdentity(const std::string &path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return path;
  return path + ":" + std::to_string(info.st_size) + ":" +
         std::to_string(info.st_mtim.tv_sec) + "." +
         std::to_string(info.st_mtim.tv_nsec);
}

/// Parses the C entry's result; false with `error` if it is not one.
bool readResult(const std::string &text, ScheduleCompileResult &result,
                std::string &error) {
  try {
    json j = json::parse(text);
    if (j.value("format", "") != "sdma.compile-result" ||
        j.value("version", 0) != kCompilerAbiVersion) {
      error = "not an sdma.compile-result, version " +
              std::to_string(kCompilerAbiVersion);
      return false;
    }
    result.ok = j.at("ok").get<bool>();
    result.error = j.at("error").get<std::string>();
    result.diagnostics = j.at("diagnostics").get<std::string>();
    result.ranksOpen = j.at("ranks_open").get<bool>();
    result.schedule = j.at("schedule").get<std::string>();
    result.proof = j.at("proof").get<std::string>();
    result.ranks = j.at("ranks").get<int64_t>();
    result.declaresCollective = j.at("declares_collective").get<bool>();
    result.ldst = j.at("ldst").get<std::string>();
    result.nodePlan = j.at("node_plan").get<std::string>();
    result.variants.clear();
    for (const json &v : j.at("variants"))
      result.variants.push_back({v.at("variant").get<std::string>(),
                                 v.at("plan").get<std::string>(),
                                 v.at("packets").get<std::string>()});
    result.skipped.clear();
    for (const json &s : j.at("skipped"))
      result.skipped.emplace_back(s.at("variant").get<std::string>(),
                                  s.at("reason").get<std::string>());
    return true;
  } catch (const json::exception &e) {
    error = std::string("the compiler's answer is not valid: ") + e.what();
    return false;
  }
}
} // namespace

std::string ScheduleCompileOptions::toJson() const {
  json j = {{"variants", variants},
            {"policy", policy},
            {"prelaunch", prelaunch},
            {"engines", engines},
            {"ldst", ldst},
            {"packets", packets},
            {"packet_completion", packetCompletion},
            {"name", name}};
  if (ranks)
    j["ranks"] = *ranks;
  if (root)
    j["root"] = *root;
  if (!sdmaTarget.empty())
    j["sdma_target"] = sdmaTarget;
  return j.dump();
}

std::string ProgramCompileOptions::toJson() const {
  json j = {{"name", name}};
  if (ranks)
    j["ranks"] = *ranks;
  if (root)
    j["root"] = *root;
  if (localRanks)
    j["local_ranks"] = *localRanks;
  if (experts)
    j["experts"] = *experts;
  if (majorAlign)
    j["major_align"] = *majorAlign;
  return j.dump();
}

std::optional<CompiledSchedule>
ScheduleCompileResult::load(size_t index, std::string &error) const {
  if (index >= variants.size()) {
    error = "no compiled variant " + std::to_string(index);
    return std::nullopt;
  }
  const Variant &v = variants[index];
  return CompiledSchedule::parse(v.plan, ldst, v.packets, error);
}

std::unique_ptr<ScheduleCompiler>
ScheduleCompiler::load(std::string &error, const std::string &path,
                       std::string cacheDirectory) {
  std::vector<std::string> candidates;
  if (!path.empty())
    candidates.push_back(path);
  else if (const char *env = std::getenv("SDMA_COMPILER_LIBRARY"))
    candidates.push_back(env);
  else {
    candidates.push_back("libsdma-compiler.so");
    std::string here = executableDirectory();
    if (!here.empty())
      candidates.push_back(here + "/../lib/libsdma-compiler.so");
    // Beside the shared object this code is in (libsdma.so, loaded by
    // Python or a program elsewhere): the build's lib/ holds both.
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&executableDirectory), &info) &&
        info.dli_fname) {
      std::string self = info.dli_fname;
      size_t slash = self.rfind('/');
      if (slash != std::string::npos &&
          self.compare(slash + 1, 10, "libsdma.so") == 0)
        candidates.push_back(self.substr(0, slash) + "/libsdma-compiler.so");
    }
  }
  std::string why;
  for (const std::string &candidate : candidates) {
    void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      why += (why.empty() ? "" : "; ") + std::string(dlerror());
      continue;
    }
    auto abi =
        reinterpret_cast<int (*)()>(dlsym(handle, "sdmaCompilerAbiVersion"));
    std::unique_ptr<ScheduleCompiler> compiler(new ScheduleCompiler());
    compiler->handle_ = handle;
    compiler->compile_ =
        reinterpret_cast<EntryPoint>(dlsym(handle, "sdmaCompilerCompile"));
    compiler->compileProgram_ = reinterpret_cast<EntryPoint>(
        dlsym(handle, "sdmaCompilerCompileProgram"));
    compiler->free_ =
        reinterpret_cast<void (*)(char *)>(dlsym(handle, "sdmaCompilerFree"));
    if (!abi || !compiler->compile_ || !compiler->compileProgram_ ||
        !compiler->free_) {
      why += (why.empty() ? "" : "; ") + candidate +
             " lacks the sdmaCompiler* entry points";
      continue;
    }
    if (abi() != kCompilerAbiVersion) {
      why += (why.empty() ? "" : "; ") + candidate + " speaks ABI version " +
             std::to_string(abi()) + ", this runtime " +
             std::to_string(kCompilerAbiVersion);
      continue;
    }
    Dl_info info;
    compiler->path_ =
        dladdr(reinterpret_cast<void *>(compiler->compile_), &info) &&
                info.dli_fname
            ? info.dli_fname
            : candidate;
    compiler->identity_ = fileIdentity(compiler->path_);
    compiler->cacheDirectory_ = std::move(cacheDirectory);
    return compiler;
  }
  error = "no compiler: cannot load libsdma-compiler.so (" + why +
          "); set SDMA_COMPILER_LIBRARY, or load precompiled plans";
  return nullptr;
}

ScheduleCompiler::~ScheduleCompiler() {
  // Not dlclose()d: MLIR registers static state (command-line options,
  // dialect registries) that must outlive every use in the process.
}

bool ScheduleCompiler::compile(const std::string &text,
                               const ScheduleCompileOptions &options,
                               ScheduleCompileResult &result,
                               std::string &error) const {
  return compileJson(text, options.toJson(), result, error);
}

bool ScheduleCompiler::compileJson(const std::string &text,
                                   const std::string &optionsJson,
                                   ScheduleCompileResult &result,
                                   std::string &error) const {
  return run(compile_, "sdma-compile-result", text, optionsJson, result, error);
}

bool ScheduleCompiler::compileProgram(const std::string &text,
                                      const ProgramCompileOptions &options,
                                      ScheduleCompileResult &result,
                                      std::string &error) const {
  return run(compileProgram_, "sdma-program-result", text, options.toJson(),
             result, error);
}

bool ScheduleCompiler::run(EntryPoint entry, const char *kind,
                           const std::string &text,
                           const std::string &optionsJson,
                           ScheduleCompileResult &result,
                           std::string &error) const {
  result = ScheduleCompileResult();
  KernelCache cache(cacheDirectory_);
  uint64_t key = KernelCache::key(text, optionsJson, kind,
                                  std::string(kSdmaVersion) + " " + identity_);
  std::string cached;
  KernelCache::Lookup lookup = cache.get(key, cached);
  if (lookup == KernelCache::Lookup::Hit) {
    std::string ignored;
    if (readResult(cached, result, ignored) && result.ok) {
      result.cacheHit = true;
      return true;
    }
    lookup = KernelCache::Lookup::Corrupt;
  }
  char *answer = entry(text.data(), text.size(), optionsJson.c_str());
  if (!answer) {
    error = "the compiler ran out of memory";
    return false;
  }
  std::string json(answer);
  free_(answer);
  if (!readResult(json, result, error))
    return false;
  result.cacheWasCorrupt = lookup == KernelCache::Lookup::Corrupt;
  if (result.ok)
    cache.put(key, json); // only successes: a failure is cheap to redo
  return true;
}
