//===- CeCopyKernelTest.cpp - the copy-list kernel, without a GPU ---------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Launch sizing, and the kernel compiled by NVRTC for sm_90 where NVRTC is
// installed (runs on the GPU are sdma-gpu-check's -k executors).
//
//===----------------------------------------------------------------------===//

#include "cuda/CeCopyKernel.h"
#include "sdma/runtime/KernelCompiler.h"
#include "sdma/runtime/LdstProgram.h"

#include <gtest/gtest.h>

using namespace sdma::rt;

namespace {
std::vector<CopyListEntry> copies(size_t n, uint64_t bytes) {
  return std::vector<CopyListEntry>(n, CopyListEntry{0, 0, bytes});
}
} // namespace

TEST(CopyListKernel, BlocksCoverTheLargestCopyAt16KiBPerBlock) {
  EXPECT_EQ(copyListBlocks(copies(8, 1024), 132), 1u);
  EXPECT_EQ(copyListBlocks(copies(8, 16 * 1024), 132), 1u);
  EXPECT_EQ(copyListBlocks(copies(8, 16 * 1024 + 16), 132), 2u);
  // The largest copy sets the grid's width.
  std::vector<CopyListEntry> mixed = copies(3, 1024);
  mixed[1].bytes = 64 * 1024;
  EXPECT_EQ(copyListBlocks(mixed, 132), 4u);
}

TEST(CopyListKernel, AtMostFourBlocksPerSMInAll) {
  EXPECT_EQ(copyListBlocks(copies(8, 64u << 20), 132), 66u); // 4 x 132 / 8
  EXPECT_EQ(copyListBlocks(copies(1, 64u << 20), 132), 528u);
  // More copies than 4 x SMs: still one block each.
  EXPECT_EQ(copyListBlocks(copies(64, 1u << 20), 8), 1u);
  EXPECT_EQ(copyListBlocks(copies(2, 1u << 30), 0), 2u); // no SM count: 1
}

TEST(CopyListKernel, ZeroByteCopiesGetOneBlock) {
  EXPECT_EQ(copyListBlocks(copies(4, 0), 132), 1u);
}

TEST(CopyListKernel, CompilesWithNvrtc) {
  LdstProgram program;
  program.source = copyListKernelSource();
  program.entry = program.schedule = "sdma_copy_list";
  KernelBinary binary;
  std::string error;
  if (!compileKernel(program, "nvrtc", "sm_90", binary, error)) {
    if (error.find("NVRTC") != std::string::npos &&
        error.find("not") != std::string::npos)
      GTEST_SKIP() << error;
    FAIL() << error;
  }
  EXPECT_GT(binary.code.size(), 0u);
}
