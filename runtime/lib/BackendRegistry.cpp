//===- BackendRegistry.cpp - every backend and every communicator device --===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The one file that names every vendor: the executors tools pick by name
// and the devices a communicator runs on. Everything else reaches a vendor
// through Executor or CommDevice.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/BackendRegistry.h"

#include "comm/CommDevice.h"

#include "cuda/CudaCeExecutor.h"
#include "cuda/CudaLdstExecutor.h"
#include "host/HostExecutors.h"
#ifdef SDMA_HAVE_HIP
#include "hip/HipDmaExecutor.h"
#include "hip/HipLdstExecutor.h"
#endif

using namespace sdma::rt;

namespace {
using Factory = std::unique_ptr<Executor> (*)(const CompiledSchedule &,
                                              const ExecutorOptions &,
                                              std::string &);

std::unique_ptr<Executor> createCudaLdst(const CompiledSchedule &compiled,
                                         const ExecutorOptions &options,
                                         std::string &error) {
  return CudaLdstExecutor::create(*compiled.ldst, options.cuda, error);
}

std::unique_ptr<Executor> createCudaCe(const CompiledSchedule &compiled,
                                       const ExecutorOptions &options,
                                       std::string &error) {
  return CudaCeExecutor::create(compiled.plan, options.cuda, error, options.ce);
}

#ifdef SDMA_HAVE_HIP
std::unique_ptr<Executor> createHipLdst(const CompiledSchedule &compiled,
                                        const ExecutorOptions &options,
                                        std::string &error) {
  return HipLdstExecutor::create(*compiled.ldst, options.hip, error);
}

std::unique_ptr<Executor> createHipDma(const CompiledSchedule &compiled,
                                       const ExecutorOptions &options,
                                       std::string &error) {
  return HipDmaExecutor::create(compiled.plan, options.hip, error);
}
#endif

struct Backend {
  BackendInfo info;
  Factory create; // null: not in this build
};

const std::vector<Backend> &table() {
  static const std::vector<Backend> backends = [] {
    std::vector<Backend> list;
    auto add = [&](std::string_view name, std::string_view summary, bool ldst,
                   bool packets, bool gpu, Factory create) {
      BackendInfo info;
      info.name = name;
      info.summary = summary;
      info.needsLdst = ldst;
      info.needsPackets = packets;
      info.gpu = gpu;
      // The simulator with its DMA model is deterministic; the other host
      // backends vary per run.
      info.checkEveryRun = !gpu && name != "sdma-sim";
      info.modelTimed = name == "sdma-sim" || name == "sdma-packets";
      list.push_back({info, create});
    };
    add("sim", "the CPU reference simulator", false, false, false,
        createSimExecutor);
    add("sdma-sim", "the simulator, timed by the DMA model", false, false,
        false, createDmaModelExecutor);
    add("sdma-packets",
        "the AMD packet program on the packet simulator, checked against the "
        "reference simulator",
        false, true, false, createPacketSimExecutor);
    add("ldst-cpu",
        "the load/store kernel itself on the CPU, checked against the "
        "reference simulator",
        true, false, false, createLdstCpuExecutor);
    add("cuda-ldst", "the load/store kernel on NVIDIA GPUs (NVRTC)", true,
        false, true, createCudaLdst);
    add("cuda-ce", "the plan's queues on CUDA streams (copy engines)", false,
        false, true, createCudaCe);
#ifdef SDMA_HAVE_HIP
    Factory hipLdst = createHipLdst, hipDma = createHipDma;
#else
    Factory hipLdst = nullptr, hipDma = nullptr;
#endif
    add("hip-ldst", "the load/store kernel on AMD GPUs (hipRTC)", true, false,
        true, hipLdst);
    add("hip-dma", "the plan's queues on HIP streams (SDMA engines)", false,
        false, true, hipDma);
    return list;
  }();
  return backends;
}

const Backend *find(std::string_view name) {
  for (const Backend &backend : table())
    if (backend.info.name == name)
      return &backend;
  return nullptr;
}
} // namespace

const std::vector<BackendInfo> &sdma::rt::backends() {
  static const std::vector<BackendInfo> infos = [] {
    std::vector<BackendInfo> list;
    for (const Backend &backend : table())
      list.push_back(backend.info);
    return list;
  }();
  return infos;
}

const BackendInfo *sdma::rt::findBackend(std::string_view name) {
  for (const BackendInfo &info : backends())
    if (info.name == name)
      return &info;
  return nullptr;
}

std::string sdma::rt::backendNames() {
  std::string names;
  const std::vector<BackendInfo> &list = backends();
  for (size_t i = 0; i < list.size(); ++i)
    names += (i == 0                 ? ""
              : i + 1 == list.size() ? " or "
                                     : ", ") +
             std::string(list[i].name);
  return names;
}

bool sdma::rt::backendBuilt(std::string_view name) {
  const Backend *backend = find(name);
  return backend && backend->create;
}

std::unique_ptr<Executor>
sdma::rt::createExecutor(std::string_view name,
                         const CompiledSchedule &compiled,
                         const ExecutorOptions &options, std::string &error) {
  const Backend *backend = find(name);
  if (!backend) {
    error = "unknown backend '" + std::string(name.substr(0, 64)) + "' (" +
            backendNames() + ")";
    return nullptr;
  }
  if (!backend->create) {
    error = "this build has no HIP executors (HIP headers were not found at "
            "configure time)";
    return nullptr;
  }
  if (!backend->info.needsLdst && !compiled.plan.hasQueues) {
    error = std::string(name) + " runs DMA plans, and '" +
            compiled.plan.schedule.substr(0, 64) +
            "' has none (it reduces, which DMA engines cannot, or reads "
            "counts at run time): run it with ldst-cpu, cuda-ldst or "
            "hip-ldst";
    return nullptr;
  }
  if (backend->info.needsLdst && !compiled.ldst) {
    error = std::string(name) + " needs the load/store kernel, and none was "
                                "compiled or loaded";
    return nullptr;
  }
  if (backend->info.needsPackets && !compiled.packets) {
    error = std::string(name) + " needs the AMD SDMA packet plan, and none "
                                "was compiled or loaded";
    return nullptr;
  }
  return backend->create(compiled, options, error);
}

#ifndef SDMA_HAVE_HIP
std::unique_ptr<CommDevice> sdma::rt::createHipDevice(const CommOptions &,
                                                      std::string &error) {
  error = "no GPU: this runtime was built without HIP (SDMA_ENABLE_HIP=OFF "
          "or no HIP headers)";
  return nullptr;
}
#endif

std::unique_ptr<CommDevice>
sdma::rt::createCommDevice(const UniqueId &id, int rank,
                           const CommOptions &options, std::string &error) {
  if (options.device == "cpu")
    return createCpuDevice(id, rank, options, error);
  if (options.device == "hip")
    return createHipDevice(options, error);
  if (options.device == "cuda")
    return createCudaDevice(options, error);
  error = "unknown device '" + options.device + "' (cpu, cuda or hip)";
  return nullptr;
}
