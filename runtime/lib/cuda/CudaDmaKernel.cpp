//===- CudaDmaKernel.cpp - the communicator's copy-engine path ------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDmaKernel.h"

#include "comm/GpuDmaKernel.h"
#include "cuda/CudaKernel.h"
#include "sdma/runtime/LdstPrelude.h"

using namespace sdma::rt;
using namespace sdma::rt::cuda;

namespace {

/// GpuDmaOps on the CUDA driver API, in the rank's primary context.
class CudaDmaOps : public GpuDmaOps {
public:
  CudaDmaOps(const Driver &driver, CUdevice device, CUcontext context)
      : driver_(driver), device_(device), context_(context), sync_(driver) {}

  bool load(CUdevice device, const std::string &cacheDirectory,
            std::string &error) {
    if (!activate(error))
      return false;
    CudaKernelSource source;
    source.text = std::string(kCudaPrelude) + kDmaSyncKernelSource;
    source.name = "sdma_dma_sync.cu";
    CompileInfo compile;
    std::string cubin;
    if (!CudaKernel::build(driver_, device, source, cacheDirectory, compile,
                           cubin, error))
      return false;
    if (!sync_.load(context_, cubin, "sdma_dma_sync", 32, error)) {
      error = driver_.describe("loading the DMA sync kernel", sync_.failure());
      return false;
    }
    return true;
  }

  bool activate(std::string &error) override {
    return check("cuCtxSetCurrent", driver_.cuCtxSetCurrent(context_), error);
  }
  bool createStream(void *&stream, std::string &error) override {
    CUstream s = nullptr;
    // CU_STREAM_NON_BLOCKING: no implicit order with the legacy stream.
    if (!check("cuStreamCreate", driver_.cuStreamCreate(&s, 1u), error))
      return false;
    stream = s;
    return true;
  }
  void destroyStream(void *stream) override {
    driver_.cuStreamDestroy_v2(static_cast<CUstream>(stream));
  }
  bool createEvent(void *&event, std::string &error) override {
    CUevent e = nullptr;
    // CU_EVENT_DISABLE_TIMING: the cheapest to record and wait for.
    if (!check("cuEventCreate",
               driver_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), error))
      return false;
    event = e;
    return true;
  }
  void destroyEvent(void *event) override {
    driver_.cuEventDestroy_v2(static_cast<CUevent>(event));
  }
  bool record(void *event, void *stream, std::string &error) override {
    return check("cuEventRecord",
                 driver_.cuEventRecord(static_cast<CUevent>(event),
                                       static_cast<CUstream>(stream)),
                 error);
  }
  bool waitEvent(void *stream, void *event, std::string &error) override {
    return check("cuStreamWaitEvent",
                 driver_.cuStreamWaitEvent(static_cast<CUstream>(stream),
                                           static_cast<CUevent>(event), 0),
                 error);
  }
  bool copy(char *dst, const char *src, size_t bytes, void *stream,
            std::string &error) override {
    if (!bytes)
      return true;
    return check(
        "cuMemcpyDtoDAsync",
        driver_.cuMemcpyDtoDAsync_v2(reinterpret_cast<CUdeviceptr>(dst),
                                     reinterpret_cast<CUdeviceptr>(src), bytes,
                                     static_cast<CUstream>(stream)),
        error);
  }
  bool mayBatch(void *stream, bool &may, std::string &error) override {
    may = false;
    CUstream s = static_cast<CUstream>(stream);
    // Not the legacy default stream (0 or CU_STREAM_LEGACY): the driver
    // refuses a batch there. A driver that cannot tell whether the stream
    // is being captured copies one by one.
    if (!driver_.cuMemcpyBatchAsync || !driver_.cuStreamIsCapturing || !s ||
        s == reinterpret_cast<CUstream>(uintptr_t(1)))
      return true;
    int status = 0;
    if (!check("cuStreamIsCapturing", driver_.cuStreamIsCapturing(s, &status),
               error))
      return false;
    may = status == 0;
    return true;
  }
  bool copyBatch(const std::vector<DmaCopy> &copies, void *stream,
                 std::string &error) override {
    dsts_.clear();
    srcs_.clear();
    sizes_.clear();
    for (const DmaCopy &c : copies) {
      dsts_.push_back(reinterpret_cast<CUdeviceptr>(c.dst));
      srcs_.push_back(reinterpret_cast<CUdeviceptr>(c.src));
      sizes_.push_back(c.bytes);
    }
    // One attribute set for all: stream-ordered sources, and the hint that
    // the copies should overlap compute (copy engines where the driver
    // can; the location hints matter only for managed memory).
    MemcpyAttributes attributes;
    attributes.srcLocId = attributes.dstLocId = device_;
    attributes.flags = 1;
    size_t first = 0;
    return check("cuMemcpyBatchAsync",
                 driver_.cuMemcpyBatchAsync(
                     dsts_.data(), srcs_.data(), sizes_.data(), dsts_.size(),
                     &attributes, &first, 1, static_cast<CUstream>(stream)),
                 error);
  }
  bool allocate(size_t bytes, char *&ptr, std::string &error) override {
    CUdeviceptr p = 0;
    if (!check("cuMemAlloc (the DMA path's swap staging)",
               driver_.cuMemAlloc_v2(&p, bytes), error))
      return false;
    ptr = reinterpret_cast<char *>(p);
    return true;
  }
  void release(char *ptr) override {
    driver_.cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr));
  }
  bool sync(void *stream, const DmaSyncArgs &args, DmaSyncOp op, int flag,
            uint64_t value, std::string &error) override {
    DmaSyncArgs copy = args;
    int code = static_cast<int>(op);
    unsigned long long v = value;
    void *params[] = {&copy, &code, &flag, &v};
    return sync_.launch(1, 1, static_cast<CUstream>(stream), params, error);
  }

private:
  bool check(const char *what, CUresult result, std::string &error) const {
    if (result == 0)
      return true;
    error = driver_.describe(what, result);
    return false;
  }

  const Driver &driver_;
  CUdevice device_;
  CUcontext context_;
  CudaKernel sync_;
  std::vector<CUdeviceptr> dsts_, srcs_; // copyBatch's arrays, kept
  std::vector<size_t> sizes_;
};

} // namespace

std::unique_ptr<CommKernel> sdma::rt::createCudaDmaKernel(
    const Driver &driver, CUdevice device, CUcontext context,
    std::shared_ptr<const DmaProgram> program,
    const std::string &cacheDirectory, bool batch, std::string &error) {
  auto ops = std::make_unique<CudaDmaOps>(driver, device, context);
  if (!ops->load(device, cacheDirectory, error))
    return nullptr;
  return createGpuDmaKernel(std::move(ops), std::move(program), batch, error);
}
