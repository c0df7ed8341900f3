//===- HipDmaKernel.cpp - the communicator's DMA path on AMD --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "hip/HipDmaKernel.h"

#include "comm/GpuDmaKernel.h"
#include "hip/HipKernel.h"

using namespace sdma::rt;
using namespace sdma::rt::hip;

namespace {

/// GpuDmaOps on HIP, on the rank's GPU.
class HipDmaOps : public GpuDmaOps {
public:
  HipDmaOps(const HipApi &api, int ordinal)
      : api_(api), ordinal_(ordinal), sync_(api) {}

  bool load(const std::string &arch, const std::string &cacheDirectory,
            std::string &error) {
    return loadHipDmaSync(api_, sync_, ordinal_, arch, cacheDirectory, error);
  }

  bool activate(std::string &error) override {
    return check("hipSetDevice", api_.hipSetDevice(ordinal_), error);
  }
  bool createStream(void *&stream, std::string &error) override {
    hipStream_t s = nullptr;
    if (!check("hipStreamCreateWithFlags",
               api_.hipStreamCreateWithFlags(&s, hipStreamNonBlocking), error))
      return false;
    stream = s;
    return true;
  }
  void destroyStream(void *stream) override {
    (void)api_.hipStreamDestroy(static_cast<hipStream_t>(stream));
  }
  bool createEvent(void *&event, std::string &error) override {
    hipEvent_t e = nullptr;
    if (!check("hipEventCreateWithFlags",
               api_.hipEventCreateWithFlags(&e, hipEventDisableTiming), error))
      return false;
    event = e;
    return true;
  }
  void destroyEvent(void *event) override {
    (void)api_.hipEventDestroy(static_cast<hipEvent_t>(event));
  }
  bool record(void *event, void *stream, std::string &error) override {
    return check("hipEventRecord",
                 api_.hipEventRecord(static_cast<hipEvent_t>(event),
                                     static_cast<hipStream_t>(stream)),
                 error);
  }
  bool waitEvent(void *stream, void *event, std::string &error) override {
    return check("hipStreamWaitEvent",
                 api_.hipStreamWaitEvent(static_cast<hipStream_t>(stream),
                                         static_cast<hipEvent_t>(event), 0),
                 error);
  }
  bool copy(char *dst, const char *src, size_t bytes, void *stream,
            std::string &error) override {
    if (!bytes)
      return true;
    return check("hipMemcpyAsync",
                 api_.hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice,
                                     static_cast<hipStream_t>(stream)),
                 error);
  }
  bool allocate(size_t bytes, char *&ptr, std::string &error) override {
    void *p = nullptr;
    if (!check("hipMalloc (the DMA path's swap staging)",
               api_.hipMalloc(&p, bytes), error))
      return false;
    ptr = static_cast<char *>(p);
    return true;
  }
  void release(char *ptr) override { (void)api_.hipFree(ptr); }
  bool sync(void *stream, const DmaSyncArgs &args, DmaSyncOp op, int flag,
            uint64_t value, std::string &error) override {
    return launchHipDmaSync(sync_, static_cast<hipStream_t>(stream), args, op,
                            flag, value, error);
  }

private:
  bool check(const char *what, hipError_t result, std::string &error) const {
    return api_.check(result, what, error);
  }

  const HipApi &api_;
  int ordinal_;
  HipKernel sync_;
};

} // namespace

bool sdma::rt::loadHipDmaSync(const HipApi &api, HipKernel &sync, int ordinal,
                              const std::string &arch,
                              const std::string &cacheDirectory,
                              std::string &error) {
  CompileInfo info;
  info.arch = arch;
  std::string code;
  if (!HipKernel::build(kDmaSyncKernelSource, "sdma_dma_sync.hip",
                        cacheDirectory, info, code, error))
    return false;
  if (!sync.load(ordinal, code, "sdma_dma_sync", 64, error)) {
    error = api.describe("loading the DMA sync kernel", sync.failure());
    return false;
  }
  return true;
}

bool sdma::rt::launchHipDmaSync(HipKernel &sync, hipStream_t stream,
                                const DmaSyncArgs &args, DmaSyncOp op, int flag,
                                uint64_t value, std::string &error) {
  DmaSyncArgs copy = args;
  int code = static_cast<int>(op);
  unsigned long long v = value;
  void *params[] = {&copy, &code, &flag, &v};
  return sync.launch(1, 1, stream, params, error);
}

std::unique_ptr<CommKernel> sdma::rt::createHipDmaKernel(
    const HipApi &api, int ordinal, const std::string &arch,
    std::shared_ptr<const DmaProgram> program,
    const std::string &cacheDirectory, std::string &error) {
  auto ops = std::make_unique<HipDmaOps>(api, ordinal);
  if (!ops->load(arch, cacheDirectory, error))
    return nullptr;
  // No batch call: HIP's copies go one by one (GpuDmaOps' defaults).
  return createGpuDmaKernel(std::move(ops), std::move(program), false, error);
}
