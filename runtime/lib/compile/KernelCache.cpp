//===- KernelCache.cpp - compiled kernels on disk -------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "compile/KernelCache.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace sdma::rt;

namespace {

constexpr char kMagic[8] = {'S', 'D', 'M', 'A', 'K', 'C', '0', '1'};
constexpr char kObjectMagic[8] = {'S', 'D', 'M', 'A', 'H', 'O', '0', '1'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 16;
constexpr size_t kTrailerBytes = 16 + sizeof(kObjectMagic);
/// Past this an entry is not one this cache wrote.
constexpr uint64_t kMaxEntryBytes = 1ull << 30;

/// One line on stderr per distinct message and process: the ranks of a job,
/// and every KernelCache a process makes, would repeat it.
void warnOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(message).second)
    std::fprintf(stderr, "sdma runtime: warning: %s\n", message.c_str());
}

std::string octalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", unsigned(mode & 07777));
  return text;
}

/// Why `info` (of `path`, lstat'ed) is not a directory this user may trust
/// ("": it is).
std::string distrustedDirectory(const std::string &path,
                                const struct stat &info) {
  if (S_ISLNK(info.st_mode))
    return "'" + path + "' is a symbolic link";
  if (!S_ISDIR(info.st_mode))
    return "'" + path + "' is not a directory";
  if (info.st_uid != geteuid())
    return "'" + path + "' is owned by uid " + std::to_string(info.st_uid) +
           ", not by this user (uid " + std::to_string(geteuid()) + ")";
  if (info.st_mode & (S_IWGRP | S_IWOTH))
    return "'" + path + "' is writable by group or others (mode " +
           octalMode(info.st_mode) + ")";
  return "";
}

/// Why `fd` (an entry opened without following links) may not be used.
std::string distrustedEntry(int fd, struct stat &info) {
  if (fstat(fd, &info) != 0)
    return std::string("cannot stat it: ") + std::strerror(errno);
  if (!S_ISREG(info.st_mode))
    return "not a regular file";
  if (info.st_uid != geteuid())
    return "owned by uid " + std::to_string(info.st_uid) + ", not by this user";
  if (info.st_mode & (S_IWGRP | S_IWOTH))
    return "writable by group or others (mode " + octalMode(info.st_mode) + ")";
  if (uint64_t(info.st_size) > kMaxEntryBytes)
    return std::to_string(info.st_size) + " bytes, more than an entry has";
  return "";
}

enum class Read { Ok, Missing, Bad };

/// Reads the entry at `path` whole with read(); Bad with `why`.
Read readEntry(const std::string &path, std::string &bytes, std::string &why,
               struct stat &info) {
  // O_NONBLOCK: a FIFO put in an entry's place does not hang the open.
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return Read::Missing;
    why = errno == ELOOP
              ? "a symbolic link"
              : std::string("cannot open it: ") + std::strerror(errno);
    info = {};
    return Read::Bad;
  }
  why = distrustedEntry(fd, info);
  if (why.empty()) {
    bytes.resize(size_t(info.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        why = n < 0 ? std::string("cannot read it: ") + std::strerror(errno)
                    : "shorter than its size";
        break;
      }
      done += size_t(n);
    }
  }
  close(fd);
  return why.empty() ? Read::Ok : Read::Bad;
}

/// Removes the bad entry at `path`, if it is still the file that was judged
/// (`info`; a symbolic link or unopenable file: whatever is there).
void removeBadEntry(const std::string &path, const struct stat &info) {
  struct stat now;
  if (lstat(path.c_str(), &now) != 0)
    return;
  bool judged = info.st_ino == 0 ||
                (now.st_dev == info.st_dev && now.st_ino == info.st_ino);
  if (judged)
    unlink(path.c_str());
}

/// Reports a bad entry and removes it.
KernelCache::Lookup corrupt(const std::string &path, const struct stat &info,
                            const std::string &why, std::string *problem) {
  std::string message = "kernel cache entry '" + path + "' is bad (" + why +
                        "): removed, rebuilt";
  warnOnce(message);
  if (problem)
    *problem = message;
  removeBadEntry(path, info);
  return KernelCache::Lookup::Corrupt;
}

/// Writes `parts` as the file `target` atomically: a new temporary file in
/// the same directory, fsync'ed, renamed over `target`.
bool writeAtomically(
    const std::string &target,
    const std::vector<std::pair<const char *, size_t>> &parts) {
  static std::atomic<unsigned> counter{0};
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temporary = target + ".tmp." + std::to_string(long(getpid())) + "." +
                std::to_string(counter.fetch_add(1));
    fd = open(temporary.c_str(),
              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST)
      return false;
  }
  if (fd < 0)
    return false;
  bool ok = true;
  for (const auto &[data, size] : parts) {
    size_t done = 0;
    while (ok && done < size) {
      ssize_t n = write(fd, data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      ok = n > 0;
      done += ok ? size_t(n) : 0;
    }
  }
  ok = ok && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  ok = ok && std::rename(temporary.c_str(), target.c_str()) == 0;
  if (!ok)
    unlink(temporary.c_str());
  return ok;
}

} // namespace

uint64_t sdma::rt::hashBytes(const std::string &bytes, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool KernelCache::trustDirectory(const std::string &directory,
                                 std::string &why) {
  std::vector<std::string> parts;
  for (size_t start = 0; start < directory.size();) {
    size_t slash = directory.find('/', start);
    if (slash == std::string::npos)
      slash = directory.size();
    if (slash > start)
      parts.push_back(directory.substr(start, slash - start));
    start = slash + 1;
  }
  std::string prefix = !directory.empty() && directory[0] == '/' ? "/" : "";
  bool created = false;
  auto fail = [&](const std::string &what) {
    why = "cache directory '" + directory + "' refused: " + what;
    return false;
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix += (prefix.empty() || prefix == "/" ? "" : "/") + parts[i];
    bool last = i + 1 == parts.size();
    struct stat info;
    if (lstat(prefix.c_str(), &info) != 0) {
      if (errno != ENOENT)
        return fail("cannot stat '" + prefix + "': " + std::strerror(errno));
      if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
        return fail("cannot create '" + prefix + "': " + std::strerror(errno));
      if (lstat(prefix.c_str(), &info) != 0)
        return fail("cannot stat '" + prefix + "': " + std::strerror(errno));
      created = true;
    }
    if (last || created) {
      // The cache's own directories: the user's, closed to others.
      std::string wrong = distrustedDirectory(prefix, info);
      if (!wrong.empty())
        return fail(wrong);
      continue;
    }
    // A directory above it (symbolic links followed: $HOME may be one).
    if (stat(prefix.c_str(), &info) != 0)
      return fail("cannot stat '" + prefix + "': " + std::strerror(errno));
    if (!S_ISDIR(info.st_mode))
      return fail("'" + prefix + "' is not a directory");
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) && !(info.st_mode & S_ISVTX))
      return fail("its parent '" + prefix +
                  "' is writable by group or others and not sticky (mode " +
                  octalMode(info.st_mode) + "): they could replace the cache");
  }
  if (parts.empty())
    return fail("not a directory name");
  return true;
}

KernelCache::KernelCache(std::string directory) {
  if (directory.empty()) {
    if (const char *env = std::getenv("SDMA_CACHE_DIR"))
      directory = env;
    else if (const char *xdg = std::getenv("XDG_CACHE_HOME"))
      directory = std::string(xdg) + "/sdma";
    else if (const char *home = std::getenv("HOME"))
      directory = std::string(home) + "/.cache/sdma";
  }
  if (directory.empty())
    return;
  std::string why;
  if (trustDirectory(directory, why)) {
    directory_ = directory;
    return;
  }
  refusal_ = why + " (fix it: chown to this user, chmod go-w, no symbolic "
                   "links; running without the kernel cache, compiling every "
                   "time)";
  warnOnce(refusal_);
}

uint64_t KernelCache::key(const std::string &source, const std::string &options,
                          const std::string &target,
                          const std::string &versions) {
  uint64_t h = hashBytes(source);
  h = hashBytes(options, h);
  h = hashBytes(target, h);
  return hashBytes(versions, h);
}

std::string KernelCache::path(uint64_t key) const {
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.bin",
                static_cast<unsigned long long>(key));
  return directory_ + "/" + name;
}

std::string KernelCache::objectPath(uint64_t key) const {
  char name[32];
  std::snprintf(name, sizeof(name), "host-%016llx.so",
                static_cast<unsigned long long>(key));
  return directory_ + "/" + name;
}

KernelCache::Lookup KernelCache::get(uint64_t key, std::string &binary,
                                     std::string *problem) const {
  if (!enabled())
    return Lookup::Miss;
  std::string file = path(key), contents, why;
  struct stat info;
  Read read = readEntry(file, contents, why, info);
  if (read == Read::Missing)
    return Lookup::Miss;
  if (read == Read::Bad)
    return corrupt(file, info, why, problem);
  if (contents.size() < kHeaderBytes ||
      std::memcmp(contents.data(), kMagic, sizeof(kMagic)) != 0)
    return corrupt(file, info, "no sdma kernel-cache header", problem);
  uint64_t size, checksum;
  std::memcpy(&size, contents.data() + 8, 8);
  std::memcpy(&checksum, contents.data() + 16, 8);
  if (size != contents.size() - kHeaderBytes)
    return corrupt(file, info,
                   "its header says " + std::to_string(size) +
                       " bytes, it holds " +
                       std::to_string(contents.size() - kHeaderBytes),
                   problem);
  std::string payload = contents.substr(kHeaderBytes);
  if (hashBytes(payload) != checksum)
    return corrupt(file, info, "checksum mismatch", problem);
  binary = std::move(payload);
  return Lookup::Hit;
}

bool KernelCache::put(uint64_t key, const std::string &binary) const {
  if (!enabled())
    return false;
  uint64_t size = binary.size(), checksum = hashBytes(binary);
  return writeAtomically(path(key),
                         {{kMagic, sizeof(kMagic)},
                          {reinterpret_cast<const char *>(&size), 8},
                          {reinterpret_cast<const char *>(&checksum), 8},
                          {binary.data(), binary.size()}});
}

KernelCache::Lookup KernelCache::verifyObject(uint64_t key,
                                              std::string *problem) const {
  if (!enabled())
    return Lookup::Miss;
  std::string file = objectPath(key), contents, why;
  struct stat info;
  Read read = readEntry(file, contents, why, info);
  if (read == Read::Missing)
    return Lookup::Miss;
  if (read == Read::Bad)
    return corrupt(file, info, why, problem);
  if (contents.size() < kTrailerBytes ||
      std::memcmp(contents.data() + contents.size() - sizeof(kObjectMagic),
                  kObjectMagic, sizeof(kObjectMagic)) != 0)
    return corrupt(file, info, "no sdma host-object trailer", problem);
  size_t payload = contents.size() - kTrailerBytes;
  uint64_t size, checksum;
  std::memcpy(&size, contents.data() + payload, 8);
  std::memcpy(&checksum, contents.data() + payload + 8, 8);
  if (size != payload)
    return corrupt(file, info,
                   "its trailer says " + std::to_string(size) +
                       " bytes, it holds " + std::to_string(payload),
                   problem);
  contents.resize(payload);
  if (hashBytes(contents, key) != checksum)
    return corrupt(file, info, "checksum mismatch", problem);
  return Lookup::Hit;
}

bool KernelCache::putObject(uint64_t key, const std::string &object) const {
  if (!enabled())
    return false;
  uint64_t size = object.size(), checksum = hashBytes(object, key);
  return writeAtomically(objectPath(key),
                         {{object.data(), object.size()},
                          {reinterpret_cast<const char *>(&size), 8},
                          {reinterpret_cast<const char *>(&checksum), 8},
                          {kObjectMagic, sizeof(kObjectMagic)}});
}
