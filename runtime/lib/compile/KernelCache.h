//===- KernelCache.h - compiled kernels on disk ------------------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Entries are keyed by a hash of everything that changes the binary (source,
// compiler options, target architecture, driver and compiler versions). Each
// file carries a magic, its length and a checksum: a truncated or corrupted
// entry is detected, reported and rebuilt, never loaded.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMPILE_KERNELCACHE_H
#define SDMA_RUNTIME_LIB_COMPILE_KERNELCACHE_H

#include <cstdint>
#include <string>

namespace sdma::rt {

/// 64-bit FNV-1a.
uint64_t hashBytes(const std::string &bytes, uint64_t seed = 0);

class KernelCache {
public:
  /// `directory` empty: $SDMA_CACHE_DIR, else $XDG_CACHE_HOME/sdma, else
  /// ~/.cache/sdma, else no caching.
  explicit KernelCache(std::string directory = "");

  /// The key of a binary built from these inputs.
  static uint64_t key(const std::string &source, const std::string &options,
                      const std::string &target, const std::string &versions);

  enum class Lookup { Hit, Miss, Corrupt };
  /// Reads entry `key` into `binary`.
  Lookup get(uint64_t key, std::string &binary) const;
  /// Writes entry `key` (atomically: temporary file, then rename).
  bool put(uint64_t key, const std::string &binary) const;
  /// The file an entry lives in.
  std::string path(uint64_t key) const;
  bool enabled() const { return !directory_.empty(); }
  /// The directory in use ("": none).
  const std::string &directory() const { return directory_; }

private:
  std::string directory_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMPILE_KERNELCACHE_H
