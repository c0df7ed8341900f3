//===- KernelCache.cpp - compiled kernels on disk -------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "compile/KernelCache.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace sdma::rt;

static constexpr char kMagic[8] = {'S', 'D', 'M', 'A', 'K', 'C', '0', '1'};

uint64_t sdma::rt::hashBytes(const std::string &bytes, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

static bool makeDirectories(const std::string &path) {
  std::string partial;
  std::stringstream parts(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    partial = "/";
  while (std::getline(parts, part, '/')) {
    if (part.empty())
      continue;
    partial += part + "/";
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
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
  if (!directory.empty() && makeDirectories(directory))
    directory_ = directory;
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

KernelCache::Lookup KernelCache::get(uint64_t key, std::string &binary) const {
  if (!enabled())
    return Lookup::Miss;
  std::ifstream file(path(key), std::ios::binary);
  if (!file)
    return Lookup::Miss;
  std::string contents((std::istreambuf_iterator<char>(file)),
                       std::istreambuf_iterator<char>());
  constexpr size_t header = sizeof(kMagic) + 16;
  if (contents.size() < header ||
      std::memcmp(contents.data(), kMagic, sizeof(kMagic)) != 0)
    return Lookup::Corrupt;
  uint64_t size, checksum;
  std::memcpy(&size, contents.data() + 8, 8);
  std::memcpy(&checksum, contents.data() + 16, 8);
  if (size != contents.size() - header)
    return Lookup::Corrupt;
  binary = contents.substr(header);
  if (hashBytes(binary) != checksum)
    return Lookup::Corrupt;
  return Lookup::Hit;
}

bool KernelCache::put(uint64_t key, const std::string &binary) const {
  if (!enabled())
    return false;
  std::string target = path(key);
  std::string temporary =
      target + ".tmp" + std::to_string(static_cast<long>(getpid()));
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file)
      return false;
    uint64_t size = binary.size(), checksum = hashBytes(binary);
    file.write(kMagic, sizeof(kMagic));
    file.write(reinterpret_cast<const char *>(&size), 8);
    file.write(reinterpret_cast<const char *>(&checksum), 8);
    file.write(binary.data(), binary.size());
    if (!file)
      return false;
  }
  return std::rename(temporary.c_str(), target.c_str()) == 0;
}
