//===- HIP.h - flat schedules as load/store GPU kernels ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_HIP_H
#define SDMA_TARGET_HIP_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace sdma {

/// The version of the load/store program metadata (the `// sdma-ldst:`
/// header line) written here and read by runtime/lib/format/LdstProgram.cpp
/// (runtime/include/sdma/runtime/Version.h's, which must be the same).
/// Version 2: the kernel's table carries the call tag (LdstKernel.hip).
constexpr int kLdstVersion = 2;

/// Writes the one flat, verified schedule in `module` as HIP kernel source
/// (CUDA-compatible): one kernel, `sdma_ldst`, that runs the program of rank
/// `rankBase + blockIdx.y`; the schedule is compiled into constant tables.
/// The source needs a prelude that defines the SDMA_* macros for the
/// compiler at hand (runtime/include/sdma/runtime/LdstPrelude.h).
struct HIPOptions {
  /// Reduce rows take over the copies before and after them
  /// (lib/Target/HIP/FuseReductions.h).
  bool fuseReductions = true;
  /// Each rank's steps written as code with their sizes as constants
  /// (lib/Target/HIP/Specialise.h) where the schedule allows; else one
  /// generic kernel interprets tables.
  bool specialise = true;
};

mlir::LogicalResult translateToHIP(mlir::ModuleOp module, llvm::raw_ostream &os,
                                   const HIPOptions &options = {});

/// Registers `--sdma-to-hip`.
void registerToHIPTranslation();

} // namespace sdma

#endif // SDMA_TARGET_HIP_H
