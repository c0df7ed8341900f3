//===- PathChoice.cpp - load/store or DMA, per call -----------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/PathChoice.h"
#include "comm/Launcher.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace sdma::rt;

namespace {
struct EmbeddedProfile {
  const char *name, *text;
};
// runtime/profiles/h200-nvidia.json, built in (EmbedSchedules.cmake).
const EmbeddedProfile kNvProfiles[] = {
#include "NvProfile.inc"
};

std::string microseconds(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f us", us);
  return text;
}
} // namespace

std::string sdma::rt::costModelRefusal(const NvTimingProfile *profile,
                                       const std::string &profileError,
                                       int ranks, int devices) {
  if (!profile)
    return "the cost model does not load: " + profileError;
  if (devices < ranks)
    return std::to_string(ranks) + " ranks share " + std::to_string(devices) +
           " GPU(s): copies between ranks of one GPU run on SMs either way; "
           "SDMA_PATH=dma forces the DMA path";
  if (!profile->byDevices.count(devices)) {
    std::string fitted;
    for (const auto &[count, coefficients] : profile->byDevices)
      fitted += (fitted.empty() ? "" : ", ") + std::to_string(count);
    return "the cost model (" + profile->target + ") is fitted on " +
           (fitted.empty() ? std::string("no GPU count") : fitted) +
           " GPU(s), not " + std::to_string(devices) +
           "; SDMA_PATH=dma forces the DMA path";
  }
  return "";
}

PathChoice sdma::rt::costModelPath(const NvTimingProfile *profile,
                                   const std::string &profileError,
                                   const Plan &plan, const std::string &variant,
                                   size_t chunkBytes, int ranks, int devices,
                                   bool batched) {
  auto ldst = [](std::string why) {
    return PathChoice{false, "ldst (auto: " + why + ")"};
  };
  if (std::string no = costModelRefusal(profile, profileError, ranks, devices);
      !no.empty())
    return ldst(no);
  std::string why;
  std::optional<double> kernel =
      profile->predict(plan, chunkBytes, NvExecutor::Ldst, devices, &why);
  if (!kernel)
    return ldst("no load/store prediction: " + why);
  // The executors' fits, plus what the communicator's call adds on each
  // path (its barriers; the DMA path's sync kernels and forked streams).
  *kernel += profile->communicatorExtraFor(NvExecutor::Ldst);
  std::optional<double> engines;
  // Batched copies only where the DMA path batches (not SDMA_DMA_BATCH=0,
  // nor a driver without cuMemcpyBatchAsync).
  for (NvExecutor e : {NvExecutor::Ce, NvExecutor::CeBatch})
    if (std::optional<double> t =
            e == NvExecutor::CeBatch && !batched
                ? std::nullopt
                : profile->predict(plan, chunkBytes, e, devices)) {
      *t += profile->communicatorExtraFor(e);
      engines = engines ? std::min(*engines, *t) : *t;
    }
  if (!engines)
    return ldst("no copy-engine prediction");
  std::string both = "predicted on " + std::to_string(devices) + " GPUs " +
                     microseconds(*kernel) + " load/store, " +
                     microseconds(*engines) + " copy engines";
  if (*engines < *kernel)
    return {true, "dma " + variant + " (auto: " + both + ")"};
  return ldst(both);
}

const NvTimingProfile *PathChooser::profile() {
  if (!profileTried_) {
    profileTried_ = true;
    profile_ = NvTimingProfile::parse(kNvProfiles[0].text, profileError_);
  }
  return profile_ ? &*profile_ : nullptr;
}

bool PathChooser::choose(int index, size_t chunkBytes, unsigned baseAlign,
                         PathChoice &choice, Error &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto known = decided_.find({index, chunkBytes, baseAlign});
  if (known != decided_.end()) {
    choice = known->second;
    return true;
  }
  const Instance &instance = programs_.instance(index);
  bool forced = options_.path != "auto";
  if (std::string no = programs_.dmaInapplicable(index); !no.empty()) {
    choice = {false, "ldst (" + no + ")"};
  } else if (options_.path == "ldst") {
    choice = {false, "ldst (SDMA_PATH=ldst)"};
  } else if (forced && chunkBytes < options_.dmaMinBytes) {
    choice = {false, "ldst (SDMA_PATH=dma, below SDMA_DMA_MIN_BYTES=" +
                         std::to_string(options_.dmaMinBytes) + ")"};
  } else if (!forced && !device_.hasDmaPath()) {
    choice = {false,
              "ldst (auto: the " + device_.name() + " device has no DMA path)"};
  } else if (std::string why; !forced && !device_.dmaByCostModel(why)) {
    choice = {false, "ldst (auto: " + why + "; SDMA_PATH=dma forces it)"};
  } else if (std::string no =
                 forced ? ""
                        : costModelRefusal(profile(), profileError_,
                                           instance.program.ranks, devices_);
             !no.empty()) {
    // Before addDma: no DMA plan compiled or loaded where auto cannot pick it.
    choice = {false, "ldst (auto: " + no + ")"};
  } else {
    Error refused;
    if (!programs_.addDma(index, refused)) {
      if (forced) {
        error = refused;
        return error.context("SDMA_PATH=dma");
      }
      choice = {false, "ldst (auto: no DMA path: " + refused.message + ")"};
    } else if (std::string no =
                   instance.dma->packetRefusal(chunkBytes, baseAlign);
               !no.empty()) {
      choice = {false, std::string("ldst (") +
                           (forced ? "SDMA_PATH=dma" : "auto") + ", " + no +
                           ")"};
    } else if (forced) {
      choice = {true, "dma " + instance.dma->variant +
                          instance.dma->submission() + " (SDMA_PATH=dma)"};
    } else {
      choice = costModelPath(profile(), profileError_, instance.dma->plan,
                             instance.dma->variant, chunkBytes,
                             instance.program.ranks, devices_,
                             !device_.dmaBatching().empty());
    }
    if (std::string batching = device_.dmaBatching();
        choice.dma && !batching.empty())
      choice.why += "; " + batching;
  }
  // Load/store: without job barriers where the program and the call allow.
  // Not premulsum: its scalars travel with the entry barrier's tags.
  const int64_t pairChunks = instance.program.lowLatencyPairChunks;
  LowLatencyArea area{0, uint64_t(options_.lowLatencyBytes)};
  // A reduction's receiver combines every peer's packets unit by unit: on
  // one H200 at 8 ranks its low-latency call wins to 4 KiB a peer (0.86x)
  // and loses from 16 KiB (1.12x), so it gets an eighth of the bytes.
  const bool premul = instance.program.premulsum();
  if (instance.program.reduces())
    area.bytesPerPeer = area.bytesPerPeer / 8 / 8 * 8;
  if (!choice.dma && !premul && area.fits(pairChunks, chunkBytes)) {
    choice.lowLatency = true;
    choice.why +=
        ", low-latency (" +
        std::to_string(uint64_t(std::max<int64_t>(pairChunks, 1)) *
                       chunkBytes) +
        " bytes to a peer, at most " +
        (instance.program.reduces() ? "SDMA_LL_BYTES/8=" : "SDMA_LL_BYTES=") +
        std::to_string(area.bytesPerPeer) + ")";
  }
  if (const char *log = std::getenv("SDMA_PATH_LOG"); log && *log == '1')
    std::fprintf(stderr, "sdma: %s chunk %zu: %s\n",
                 instance.program.schedule.c_str(), chunkBytes,
                 choice.why.c_str());
  if (decided_.size() >= 4096) // a job of ever new sizes: decide afresh
    decided_.clear();
  decided_[{index, chunkBytes, baseAlign}] = choice;
  return true;
}
