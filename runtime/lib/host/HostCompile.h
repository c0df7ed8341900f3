//===- HostCompile.h - generated kernels compiled for the host CPU -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The CPU emulators (LdstCpuExecutor, the ring engine model) compile a
// generated kernel, with a prelude that maps its SDMA_* macros onto host
// threads, into a shared object with the host C++ compiler and dlopen it.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_HOSTCOMPILE_H
#define SDMA_RUNTIME_LIB_HOST_HOSTCOMPILE_H

#include <string>

namespace sdma::rt {

/// The SDMA_* macros of generated kernels (LdstPrelude.h) on host threads:
/// one host thread per GPU thread, a block's threads meeting at a
/// std::barrier (sdma_barrier), thread-local thread and block indices.
extern const char *const kHostPrelude;

/// Compiles C++ `text` into a shared object (-std=c++20 -O1 -pthread) with
/// `compiler` (empty: $SDMA_HOST_CXX, else c++) and dlopen's it. With a
/// cache directory the object is kept there under the hash of the text,
/// compiler and flags (the processes of a job compile once: one holds a
/// lock while the others wait for its object). Returns the handle, or null
/// with `error` naming `what` and the compiler's output.
void *compileHostObject(const std::string &text, std::string compiler,
                        const std::string &cacheDirectory,
                        const std::string &what, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_HOSTCOMPILE_H
