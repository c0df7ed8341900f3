//===- KernelCache.h - compiled kernels on disk -----------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Entries are keyed by a hash of everything that changes the binary (source,
// compiler options, target architecture, driver and compiler versions).
//
// The cache runs code: a CUBIN, a code object or a compile result (whose
// kernel text is compiled and run) read from it, or a host shared object
// dlopen'ed from it. So it is trusted only as far as its directory is, and
// every entry is verified before use:
//
// - The directory (OpenSSH's StrictModes): it, and every directory the cache
//   creates (mode 0700), must be a real directory (not a symbolic link),
//   owned by this user and not writable by group or others; every existing
//   directory above it must not be writable by group or others unless it is
//   sticky (/tmp), or anyone who can write there could put another directory
//   in its place. A directory that fails is refused (refusal() says which
//   and why; reported once per process on stderr) and the cache is disabled:
//   the caller compiles every time, the job still runs.
// - Writes: a temporary file in the same directory (O_CREAT | O_EXCL |
//   O_NOFOLLOW, mode 0600), written, fsync'ed, renamed over the entry: a
//   reader finds no file or a whole one.
// - Reads: open(O_NOFOLLOW | O_NONBLOCK), fstat (a regular file, this user's,
//   not writable by others), then read() into memory (never mmap: a file
//   truncated under a mapping is a SIGBUS), then the magic, the length and
//   the checksum of the whole payload. A bad entry (a symbolic link, a FIFO,
//   truncated, corrupted) is reported, removed and comes back as Corrupt, so
//   the caller rebuilds it.
//
// Two kinds of entry:
// - "<key>.bin" (get/put): magic "SDMAKC01", payload length, FNV-1a of the
//   payload, the payload; read into memory (CUBINs, code objects, compile
//   results).
// - "host-<key>.so" (verifyObject/putObject): a host shared object, which the
//   loader maps from a file, followed by a trailer (payload length, FNV-1a of
//   the payload seeded with the key, magic "SDMAHO01"; the loader ignores
//   bytes past an object's end). verifyObject checks the file before the
//   caller dlopen's it: an object without a valid trailer (an older cache's,
//   or one planted there) is never loaded.
//
// The checksums find accidents (truncation, corruption); the directory's
// ownership and modes keep others out. Someone who can write the directory
// as this user can also run code as this user without it.
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
  /// ~/.cache/sdma, else no caching. Creates the directory (mode 0700) and
  /// checks it; a directory that fails is refused (enabled() false).
  explicit KernelCache(std::string directory = "");

  /// The key of a binary built from these inputs.
  static uint64_t key(const std::string &source, const std::string &options,
                      const std::string &target, const std::string &versions);

  enum class Lookup { Hit, Miss, Corrupt };
  /// Reads entry `key` into `binary`, verified. Corrupt: the entry was bad
  /// (reported on stderr and in `problem`, and removed).
  Lookup get(uint64_t key, std::string &binary,
             std::string *problem = nullptr) const;
  /// Writes entry `key` (atomically: temporary file, fsync, rename).
  bool put(uint64_t key, const std::string &binary) const;
  /// The file an entry lives in.
  std::string path(uint64_t key) const;

  /// Checks host object `key` (objectPath) before it is dlopen'ed: Hit if
  /// it may be loaded; Corrupt as for get.
  Lookup verifyObject(uint64_t key, std::string *problem = nullptr) const;
  /// Writes host object `key` with its trailer, atomically.
  bool putObject(uint64_t key, const std::string &object) const;
  /// The file host object `key` lives in.
  std::string objectPath(uint64_t key) const;

  bool enabled() const { return !directory_.empty(); }
  /// The directory in use ("": none).
  const std::string &directory() const { return directory_; }
  /// Why the directory asked for was refused ("": it was not, or there was
  /// none): "cache directory '/x' is writable by group or others (mode
  /// 0777): ...".
  const std::string &refusal() const { return refusal_; }

  /// Creates `directory` and its missing parents (mode 0700) and checks
  /// them as the constructor does; false with `why` naming the directory at
  /// fault and what is wrong with it.
  static bool trustDirectory(const std::string &directory, std::string &why);

private:
  std::string directory_, refusal_;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMPILE_KERNELCACHE_H
