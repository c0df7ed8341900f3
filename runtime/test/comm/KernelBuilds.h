//===- KernelBuilds.h - a communicator kernel compiles for both GPUs -----===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the point-to-point and DMA-path tests share: the kernel source the
// GPUs run, compiled as they compile it (no GPU needed), by NVRTC for an
// H100/H200 and by hipRTC for an MI200, where each is installed.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TEST_COMM_KERNELBUILDS_H
#define SDMA_RUNTIME_TEST_COMM_KERNELBUILDS_H

#include "sdma/runtime/KernelCompiler.h"

#include <gtest/gtest.h>

namespace sdma::rt::test {

/// Compiles `source` (after the prelude) with entry `entry` for sm_90 and
/// gfx90a; a failure of an installed compiler fails the test, and the test
/// is skipped where neither is installed.
inline void expectKernelBuilds(const std::string &source,
                               const std::string &entry) {
  LdstProgram program;
  program.source = source;
  program.entry = program.schedule = entry;
  int compiled = 0;
  for (auto [compiler, arch] :
       {std::pair<const char *, const char *>{"nvrtc", "sm_90"},
        {"hiprtc", "gfx90a"}}) {
    KernelBinary binary;
    std::string error;
    if (!compileKernel(program, compiler, arch, binary, error)) {
      // That compiler is not installed here, or this runtime was built
      // without HIP's headers.
      if ((error.find("not") != std::string::npos &&
           (error.find("NVRTC") != std::string::npos ||
            error.find("hipRTC") != std::string::npos)) ||
          error.find("built without HIP") != std::string::npos)
        continue;
      ADD_FAILURE() << compiler << ": " << error;
      continue;
    }
    EXPECT_GT(binary.code.size(), 0u) << compiler;
    ++compiled;
  }
  if (!compiled)
    GTEST_SKIP() << "neither NVRTC nor hipRTC is installed";
}

} // namespace sdma::rt::test

#endif // SDMA_RUNTIME_TEST_COMM_KERNELBUILDS_H
