//===- sdma-ldst-compile.cpp - compile a load/store program, no GPU -------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Usage: sdma-ldst-compile PROGRAM.hip (--nvrtc=sm_XX | --hiprtc=gfxNNN |
//                                       --print=cuda|hip|hip-clang)
//   --nvrtc=ARCH   compile with NVRTC for ARCH (no GPU needed); print the
//                  CUBIN size and the compile time
//   --hiprtc=ARCH  the same with hipRTC (HIP 5.2: gfx90a, gfx908)
//   --print=TARGET write the program with TARGET's prelude to stdout, for
//                  hipRTC (hip) or clang -x hip -nogpuinc (hip-clang)
//   --staged       with SDMA_STAGED_OPS (CudaOptions::stagedOps)
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "sdma/runtime/KernelCompiler.h"
#include "sdma/runtime/LdstPrelude.h"
#include "sdma/runtime/LdstProgram.h"

#include <cstdio>
#include <cstring>

using namespace sdma::rt;

static const char *kUsage =
    "usage: sdma-ldst-compile PROGRAM.hip (--nvrtc=ARCH | --hiprtc=ARCH |\n"
    "                         --print=cuda|hip|hip-clang) [options]\n"
    "Compiles a load/store program (sdma-translate --sdma-to-hip) with no\n"
    "GPU, or prints it with a target's prelude.\n"
    "  --nvrtc=ARCH           compile with NVRTC for ARCH, e.g. sm_90 "
    "(default: none)\n"
    "  --hiprtc=ARCH          compile with hipRTC for ARCH, e.g. gfx90a\n"
    "                         (default: none)\n"
    "  --print=TARGET         write the program with the cuda, hip or\n"
    "                         hip-clang prelude to stdout (default: none)\n"
    "  --staged               with SDMA_STAGED_OPS (default: off)\n";

int main(int argc, char **argv) {
  const char *path = nullptr, *arch = nullptr, *print = nullptr,
             *hipArch = nullptr;
  bool staged = false;
  MemoryBudget budget;
  if (int status =
          tool::handleCommon(argc, argv, "sdma-ldst-compile", kUsage, budget);
      status >= 0)
    return status;
  for (int i = 1; i < argc; ++i) {
    int status = 0;
    if (tool::memoryBudgetOption("sdma-ldst-compile", argv[i], budget,
                                 status)) {
      if (status)
        return status;
    } else if (!std::strcmp(argv[i], "--staged"))
      staged = true;
    else if (!std::strncmp(argv[i], "--nvrtc=", 8))
      arch = argv[i] + 8;
    else if (!std::strncmp(argv[i], "--hiprtc=", 9))
      hipArch = argv[i] + 9;
    else if (!std::strncmp(argv[i], "--print=", 8))
      print = argv[i] + 8;
    else if (argv[i][0] == '-' && argv[i][1])
      return tool::unknownOption("sdma-ldst-compile", argv[i]);
    else if (!path)
      path = argv[i];
    else {
      std::fprintf(stderr, "sdma-ldst-compile: more than one program given\n");
      return tool::kUsageError;
    }
  }
  if (!path || (!arch && !print && !hipArch)) {
    std::fprintf(stderr, "usage: sdma-ldst-compile PROGRAM.hip "
                         "(--nvrtc=sm_XX | --hiprtc=gfxNNN | "
                         "--print=cuda|hip|hip-clang) (sdma-ldst-compile "
                         "--help for more)\n");
    return tool::kUsageError;
  }
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::load(path, error);
  if (!program) {
    std::fprintf(stderr, "sdma-ldst-compile: error: %s\n", error.c_str());
    return 1;
  }
  if (staged)
    program->source = kStagedOpsDefine + program->source;
  if (print) {
    const char *prelude = !std::strcmp(print, "cuda")        ? kCudaPrelude
                          : !std::strcmp(print, "hip")       ? kHipPrelude
                          : !std::strcmp(print, "hip-clang") ? kHipClangPrelude
                                                             : nullptr;
    if (!prelude) {
      std::fprintf(stderr,
                   "sdma-ldst-compile: unknown --print '%.64s' (cuda, hip, "
                   "hip-clang)\n",
                   print);
      return tool::kUsageError;
    }
    std::fputs(prelude, stdout);
    std::fputs(program->source.c_str(), stdout);
    return 0;
  }
  KernelBinary binary;
  if (!compileKernel(*program, hipArch ? "hiprtc" : "nvrtc",
                     hipArch ? hipArch : arch, binary, error)) {
    std::fprintf(stderr, "sdma-ldst-compile: error: %s\n", error.c_str());
    return 1;
  }
  std::printf("%s: %s %s for %s, %zu bytes, %s, %.1f ms%s\n", path,
              program->entry.c_str(), hipArch ? "code object" : "CUBIN",
              hipArch ? hipArch : arch, binary.code.size(),
              binary.compiler.c_str(), binary.milliseconds,
              binary.bounded ? ", bounded to 3 blocks/SM" : "");
  return 0;
}
