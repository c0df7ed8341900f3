//===- CudaKernel.h - a kernel built by NVRTC, loaded, launched -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The one way the runtime runs generated code on an NVIDIA GPU. Program
// text (a CudaKernelSource) is built into a CUBIN by NVRTC for a device's
// architecture through the kernel cache; a CudaKernel loads the CUBIN into
// one context (module, function, registers, resident blocks per SM) and
// launches it on a stream. The load/store executor, its size classes, the
// copy-engine executor's copy-list kernel and the communicator's CUDA
// device all build, load and launch through it; ahead-of-time compilation
// (KernelCompiler) uses its NVRTC step alone, with no GPU.
//
//   CudaKernelSource source = CudaKernelSource::ldst(program, false);
//   std::string cubin;
//   CompileInfo compile;
//   CudaKernel kernel(driver);
//   if (!CudaKernel::build(driver, device, source, cacheDirectory, compile,
//                          cubin, error) ||
//       !kernel.load(context, cubin, program.entry, kLdstThreads, error) ||
//       !kernel.launch(blocks, ranks, stream, args, error))
//     ...
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_CUDA_CUDAKERNEL_H
#define SDMA_RUNTIME_LIB_CUDA_CUDAKERNEL_H

#include "cuda/CudaDriver.h"
#include "sdma/runtime/Executor.h"
#include "sdma/runtime/LdstProgram.h"

#include <memory>
#include <string>

namespace sdma::rt {

/// The resident 512-thread blocks per SM a specialised load/store kernel is
/// first compiled for (SDMA_MIN_BLOCKS: at most 40 registers on sm_90).
constexpr int kLdstBoundedBlocks = 3;

/// What the kernel cache keys an NVRTC build by, besides the text, the
/// architecture and the versions (CudaKernel::compile's options).
constexpr const char *kLdstCompileOptions =
    "-std=c++17 --extra-device-vectorization; bounded 3 unless it spills";

/// What NVRTC compiles: one whole translation unit.
struct CudaKernelSource {
  /// The text, the CUDA prelude included.
  std::string text;
  /// Its name in NVRTC's messages ("<schedule>.cu").
  std::string name;
  /// A specialised load/store kernel (LdstProgram::specialised): compiled
  /// for kLdstBoundedBlocks blocks per SM first (CudaKernel::compile).
  bool specialised = false;

  /// A load/store program's: the CUDA prelude, SDMA_STAGED_OPS when
  /// `stagedOps`, SDMA_ONE_GPU when `oneGpu` (every rank of the job on
  /// this GPU), then the program's source.
  static CudaKernelSource ldst(const LdstProgram &program, bool stagedOps,
                               bool oneGpu = false);
};

class CudaKernel {
public:
  /// Compiles `source` to a CUBIN for `arch` (e.g. "sm_90") with NVRTC:
  /// no GPU, no cache. A specialised kernel is compiled for
  /// kLdstBoundedBlocks blocks per SM first and kept if ptxas spilled
  /// nothing; else (and for table kernels, whose loops need more
  /// registers) as written. Left to itself NVCC gives some specialised
  /// kernels 56-64 registers, two blocks per SM, where 40 fit without a
  /// spill (all-to-all direct, 8 ranks on one H200: 4 MiB 26.9 -> 23.6 us;
  /// bench/results/affine-unbounded-a2a-h200.csv, -3bpsm). `bounded` says
  /// which; false with the compiler's log in `error`.
  static bool compile(const cuda::Nvrtc &nvrtc, const CudaKernelSource &source,
                      const std::string &arch, std::string &cubin,
                      bool &bounded, std::string &error);
  /// `source`'s CUBIN for `device`'s architecture: from the kernel cache in
  /// `cacheDirectory` ("": the default one), else compiled (then cached).
  /// `compile` gets the architecture, whether the cache had it (or held a
  /// corrupt entry) and the compile time.
  static bool build(const cuda::Driver &driver, cuda::CUdevice device,
                    const CudaKernelSource &source,
                    const std::string &cacheDirectory, CompileInfo &compile,
                    std::string &cubin, std::string &error);

  explicit CudaKernel(const cuda::Driver &driver) : driver_(&driver) {}
  CudaKernel(CudaKernel &&other) noexcept;
  CudaKernel(const CudaKernel &) = delete;
  CudaKernel &operator=(const CudaKernel &) = delete;
  CudaKernel &operator=(CudaKernel &&) = delete;
  /// The module is unloaded (in its context) with the last kernel of it.
  ~CudaKernel() = default;

  /// Makes `context` current (and leaves it so), loads `cubin` there and
  /// finds `entry`; reads its registers per thread and its resident blocks
  /// per SM at `threads` threads per block, the block size launch() uses.
  /// False with the failed call in `error` (and its result in failure()).
  bool load(cuda::CUcontext context, const std::string &cubin,
            const std::string &entry, int threads, std::string &error);
  /// As load, for another entry of the module `loaded` holds (one CUBIN's
  /// entries share one module: its code is on the GPU once).
  bool loadEntry(const CudaKernel &loaded, const std::string &entry,
                 int threads, std::string &error);
  /// Enqueues a grid of blocksX x blocksY blocks on `stream`; `args` as
  /// cuLaunchKernel takes them. The kernel's context must be current.
  bool launch(unsigned blocksX, unsigned blocksY, cuda::CUstream stream,
              void **args, std::string &error);
  /// What the driver says of this kernel's handles, for an error message
  /// after a refused launch: its context and whether the function answers.
  std::string describeHandles() const;
  /// Forgets the module without unloading it (a stuck executor).
  void abandon() {
    if (module_)
      module_->module = nullptr;
  }

  bool loaded() const { return function_ != nullptr; }
  int registers() const { return registers_; }
  int blocksPerSM() const { return blocksPerSM_; }
  /// Local memory a thread (its stack and spills), in bytes.
  int localBytes() const { return localBytes_; }
  /// The driver's result of the call that failed last.
  cuda::CUresult failure() const { return failure_; }

private:
  bool check(cuda::CUresult result, const char *call, std::string &error);
  /// Finds `entry` in module_ and reads its resources.
  bool find(const std::string &entry, int threads, std::string &error);

  /// A loaded CUBIN, unloaded when its last kernel goes.
  struct Module {
    const cuda::Driver *driver = nullptr;
    cuda::CUcontext context = nullptr;
    cuda::CUmodule module = nullptr;
    ~Module();
  };

  const cuda::Driver *driver_;
  cuda::CUcontext context_ = nullptr;
  std::shared_ptr<Module> module_;
  cuda::CUfunction function_ = nullptr;
  int threads_ = 0, registers_ = 0, blocksPerSM_ = 0, localBytes_ = 0;
  cuda::CUresult failure_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_CUDA_CUDAKERNEL_H
