//===- IpcImports.h - memory shared between processes by IPC ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the CUDA and HIP device sets share when they export and import
// memory: the blob an exported allocation travels as (the vendor's 64-byte
// IPC handle, the exporting process, the block and the pointer's offset in
// it: caching allocators hand out pieces of larger blocks), and the
// bookkeeping of imports (a process opens each peer block once; a rank
// that is a thread of this process uses the pointer itself, since a
// process cannot open its own handles). Vendor-neutral: the vendor's calls
// come in as functions.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_EXEC_IPCIMPORTS_H
#define SDMA_RUNTIME_LIB_EXEC_IPCIMPORTS_H

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>

namespace sdma::rt {

struct IpcExport {
  char handle[64]; // CUipcMemHandle / hipIpcMemHandle_t
  int64_t pid;
  uint64_t base, bytes, offset;

  /// The blob for `ptr` in the block [base, base + bytes).
  template <typename Handle>
  static std::string make(const Handle &handle, uint64_t base, uint64_t bytes,
                          uint64_t ptr) {
    static_assert(sizeof(Handle) == sizeof(IpcExport::handle), "handle");
    IpcExport e{};
    std::memcpy(e.handle, &handle, sizeof(e.handle));
    e.pid = getpid();
    e.base = base;
    e.bytes = bytes;
    e.offset = ptr - base;
    return std::string(reinterpret_cast<const char *>(&e), sizeof(e));
  }
};

/// The blocks this process has opened, by handle.
class IpcImports {
public:
  /// Rank `peer`'s blob as a pointer here; `open(const IpcExport &, base,
  /// error)` maps a block not yet opened.
  template <typename Open>
  bool import(int peer, const std::string &blob, char *&ptr, std::string &error,
              Open open) {
    IpcExport e;
    if (blob.size() != sizeof(e) ||
        (std::memcpy(&e, blob.data(), sizeof(e)), e.offset > e.bytes)) {
      error = "rank " + std::to_string(peer) + " sent a malformed handle";
      return false;
    }
    if (e.pid == getpid()) {
      ptr = reinterpret_cast<char *>(e.base + e.offset);
      return true;
    }
    std::string key(e.handle, sizeof(e.handle));
    auto it = opened_.find(key);
    if (it == opened_.end()) {
      char *base = nullptr;
      if (!open(e, base, error)) {
        error = "cannot map rank " + std::to_string(peer) + "'s memory (" +
                error + ")";
        return false;
      }
      it = opened_.emplace(key, base).first;
    }
    ptr = it->second + e.offset;
    return true;
  }
  /// Every opened block's base, for closing.
  template <typename Close> void closeAll(Close close) {
    for (auto &[key, base] : opened_)
      close(base);
    opened_.clear();
  }
  /// Forgets the opened blocks without closing them.
  void forget() { opened_.clear(); }

private:
  std::map<std::string, char *> opened_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_EXEC_IPCIMPORTS_H
