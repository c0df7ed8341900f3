//===- HostKernel.h - a kernel built by the host compiler -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The CPU vendor's CudaKernel, and the one way the runtime runs generated
// code on the host: a generated kernel (the load/store kernel with its CPU
// entry, HostLdstKernel; the ring writer with the engine model's hooks,
// RingSimulator), after a prelude that maps its SDMA_* macros onto host
// threads (one host thread per GPU thread, a block's threads meeting at a
// pthread barrier), is compiled by the host C++ compiler into a shared
// object, dlopen'ed, and its entries are found by name and called.
//
//   std::unique_ptr<HostKernel> kernel =
//       HostKernel::build(text, "", cacheDirectory, "the kernel of x", error);
//   auto run = kernel ? kernel->entry<RunFn>("run", error) : nullptr;
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_HOSTKERNEL_H
#define SDMA_RUNTIME_LIB_HOST_HOSTKERNEL_H

#include <memory>
#include <string>

namespace sdma::rt {

class HostKernel {
public:
  /// Compiles the host prelude followed by `text` into a shared object
  /// (-std=c++20 -O1 -pthread) with `compiler` (empty: $SDMA_HOST_CXX,
  /// else c++) and loads it. With a cache directory the object is kept
  /// there under the hash of the whole text, the compiler and the flags
  /// (the processes of a job compile once: one holds a lock while the
  /// others wait for its object). A cached object is dlopen'ed only from a
  /// directory KernelCache trusts and after KernelCache::verifyObject has
  /// checked its trailer (length, checksum); a bad one is removed and
  /// rebuilt, a refused directory compiles every time. Null with `error`
  /// naming `what` and the compiler's output.
  static std::unique_ptr<HostKernel> build(const std::string &text,
                                           std::string compiler,
                                           const std::string &cacheDirectory,
                                           const std::string &what,
                                           std::string &error);
  HostKernel(const HostKernel &) = delete;
  HostKernel &operator=(const HostKernel &) = delete;
  /// Unloads the object.
  ~HostKernel();

  /// The entry point `name` (an extern "C" function of the text) as a `Fn`,
  /// or null with the loader's reason in `error`.
  template <typename Fn> Fn entry(const char *name, std::string &error) const {
    return reinterpret_cast<Fn>(symbol(name, error));
  }

private:
  explicit HostKernel(void *handle) : handle_(handle) {}
  void *symbol(const char *name, std::string &error) const;

  void *handle_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_HOSTKERNEL_H
