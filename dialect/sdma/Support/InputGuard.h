//===- InputGuard.h - reject input MLIR's parser cannot survive -*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// MLIR's parser recurses once per nested region, attribute or type and takes
// time quadratic in the depth: a few thousand nested `{` overflow the stack
// and tens of thousands take minutes. Schedules nest a handful of levels, so
// the compile library (lib/Compiler) and the tools check the nesting of their
// input before parsing it and reject anything deeper than kMaxInputNesting
// with a diagnostic. LLVMSupport only (library SdmaSupport).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_SUPPORT_INPUTGUARD_H
#define SDMA_SUPPORT_INPUTGUARD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace sdma {

constexpr unsigned kMaxInputNesting = 256;

/// Checks the bracket nesting of `text` (outside strings and comments).
/// Prints `name:line:col: error: ...` to `errs` and returns false if it is
/// deeper than `maxDepth`.
bool checkInputNesting(llvm::StringRef text, llvm::StringRef name,
                       unsigned maxDepth, llvm::raw_ostream &errs);

/// Checks every input of an MLIR tool invocation: each positional argument
/// that names a file, or standard input (read whole and put back as a
/// temporary file on fd 0). Returns false after printing a diagnostic.
/// `optionsWithValue` lists options that take their value as the next
/// argument (e.g. "-o").
bool checkToolInputs(int argc, char **argv,
                     llvm::ArrayRef<llvm::StringRef> optionsWithValue);

} // namespace sdma

#endif // SDMA_SUPPORT_INPUTGUARD_H
