//===- Communicator.cpp - setup, symmetric memory, launches ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Each rank's heap is one device allocation: a control area (each schedule
// instance's flags, rank-barrier counters and run counters, zeroed once and
// never reused) followed by the user heap that memAlloc hands out first-fit.
// Every setup step that can fail on one rank all-gathers a status, so a
// failure on any rank is an error on every rank, never a hang.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Communicator.h"

#include "comm/CommDevice.h"
#include "compile/KernelCache.h"
#include "sdma/runtime/ScheduleCompiler.h"

#include <cstdlib>
#include <cstring>

using namespace sdma::rt;

namespace {
constexpr size_t kAlign = 256;
constexpr size_t kControlBytes = 1 << 20;
size_t alignUp(size_t n, size_t a = kAlign) { return (n + a - 1) / a * a; }

std::string hex(const void *p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

uint64_t envNumber(const char *name, uint64_t fallback) {
  const char *value = std::getenv(name);
  return value && *value ? std::strtoull(value, nullptr, 10) : fallback;
}
} // namespace

/// What a rank shares when memory is exported: fixed size, for allGather.
/// Every exchange of the communicator is kExchangeBytes long and starts
/// with what it is, so a rank doing something else (destroying its
/// communicator, say) is named instead of failing on a size.
constexpr size_t kExchangeBytes = 256;
struct Communicator::Share {
  char tag[8] = "share";
  int64_t status = 0; // 0 device blob, 1 an existing region, 2 failed
  uint64_t bytes = 0, region = 0, offset = 0, blobBytes = 0;
  char blob[208] = {0};
};
static_assert(sizeof(Communicator::Share) == kExchangeBytes, "exchange");

namespace {
using Share = Communicator::Share;
std::string pack(const Share &share) {
  return std::string(reinterpret_cast<const char *>(&share), sizeof(share));
}
Share unpack(const std::string &bytes) {
  Share share;
  std::memcpy(&share, bytes.data(), std::min(bytes.size(), sizeof(share)));
  return share;
}
} // namespace

#ifndef SDMA_HAVE_HIP
std::unique_ptr<CommDevice> sdma::rt::createHipDevice(const CommOptions &,
                                                      std::string &error) {
  error = "no GPU: this runtime was built without HIP (SDMA_ENABLE_HIP=OFF "
          "or no HIP headers)";
  return nullptr;
}
#endif

size_t sdma::rt::dataTypeBytes(DataType type) {
  switch (type) {
  case DataType::Int8:
  case DataType::Uint8:
    return 1;
  case DataType::Float16:
  case DataType::Bfloat16:
    return 2;
  case DataType::Int32:
  case DataType::Uint32:
  case DataType::Float32:
    return 4;
  case DataType::Int64:
  case DataType::Uint64:
  case DataType::Float64:
    return 8;
  }
  return 0;
}

const char *sdma::rt::dataTypeName(DataType type) {
  static const char *names[] = {"int8",    "uint8",   "int32",   "uint32",
                                "int64",   "uint64",  "float16", "float32",
                                "float64", "bfloat16"};
  int i = static_cast<int>(type);
  return i >= 0 && i < 10 ? names[i] : "invalid type";
}

std::unique_ptr<Communicator> Communicator::create(const UniqueId &id, int rank,
                                                   int ranks,
                                                   const CommOptions &options,
                                                   std::string &error) {
  std::unique_ptr<Communicator> comm(new Communicator());
  CommOptions &o = comm->options_;
  o = options;
  if (o.device.empty())
    o.device = std::getenv("SDMA_DEVICE") ? std::getenv("SDMA_DEVICE") : "cuda";
  if (o.device != "cpu" && o.device != "cuda" && o.device != "hip") {
    error = "unknown device '" + o.device + "' (cpu, cuda or hip)";
    return nullptr;
  }
  if (!o.timeoutMs)
    o.timeoutMs = envNumber("SDMA_TIMEOUT_MS", 30000);
  if (!o.heapBytes)
    o.heapBytes = envNumber("SDMA_HEAP_BYTES",
                            o.device == "cpu" ? 16ull << 20 : 256ull << 20);
  o.heapBytes = alignUp(o.heapBytes);
  if (!o.twoShotBytes)
    o.twoShotBytes = envNumber("SDMA_TWO_SHOT_BYTES", 256 << 10);
  if (const char *check = std::getenv("SDMA_CHECK_CALLS"))
    o.checkCalls = std::strcmp(check, "0") != 0;
  if (o.programDirectory.empty() && std::getenv("SDMA_PROGRAM_DIR"))
    o.programDirectory = std::getenv("SDMA_PROGRAM_DIR");
  o.cacheDirectory = KernelCache(o.cacheDirectory).directory();
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    error = "rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
            ": ranks must be 1.. and rank 0..ranks-1";
    return nullptr;
  }
  comm->rank_ = rank;
  comm->ranks_ = ranks;
  comm->id_ = id;
  comm->bootstrap_ = Bootstrap::connect(id, rank, ranks, o.timeoutMs, error);
  if (!comm->bootstrap_ || !comm->init(error))
    return nullptr;
  return comm;
}

bool Communicator::init(std::string &error) {
  std::string deviceError;
  device_ = options_.device == "cpu"
                ? createCpuDevice(id_, rank_, options_, deviceError)
            : options_.device == "hip"
                ? createHipDevice(options_, deviceError)
                : createCudaDevice(options_, deviceError);
  // Every rank learns whether every rank has a device, and which.
  std::string mine(256, '\0');
  std::string identity = device_ ? device_->identity() : "!" + deviceError;
  mine.replace(0, std::min<size_t>(255, identity.size()), identity, 0, 255);
  std::vector<std::string> all;
  if (!bootstrap_->allGather(mine, all, error))
    return false;
  int sharing = 0;
  for (int r = 0; r < ranks_; ++r) {
    if (all[r][0] == '!') {
      error = "rank " + std::to_string(r) + " has no " + options_.device +
              " device: " + all[r].substr(1, all[r].find('\0') - 1);
      return false;
    }
    sharing += all[r] == mine;
  }
  device_->setSharing(sharing);

  // The heap: the control area, then the user heap.
  controlBytes_ = kControlBytes;
  size_t total = controlBytes_ + options_.heapBytes;
  char *heap = nullptr;
  Share share;
  std::string blob, why;
  if (!device_->allocate(total, heap, why) ||
      !device_->exportMemory(heap, total, blob, why))
    share.status = 2;
  share.bytes = total;
  if (share.status != 2 && blob.size() > sizeof(share.blob)) {
    share.status = 2;
    why = "the device's handle is too large";
  }
  if (share.status == 2)
    std::snprintf(share.blob, sizeof(share.blob), "%s", why.c_str());
  else
    std::memcpy(share.blob, blob.data(), share.blobBytes = blob.size());
  Region region;
  if (!exchangeShares(heap, share, "its heap", region, error))
    return false;
  for (int r = 0; r < ranks_; ++r)
    if (region.peerBytes[r] != total) {
      error = "rank " + std::to_string(r) + " has a heap of " +
              std::to_string(region.peerBytes[r] - controlBytes_) +
              " bytes, rank " + std::to_string(rank_) + " one of " +
              std::to_string(options_.heapBytes) +
              ": every rank must use the same heap size (SDMA_HEAP_BYTES)";
      return false;
    }
  regions_.push_back(std::move(region));
  heapFree_[controlBytes_] = options_.heapBytes;
  return true;
}

bool Communicator::exchangeShares(char *local, const Share &mine,
                                  const std::string &what, Region &region,
                                  std::string &error) {
  std::vector<std::string> all;
  if (!bootstrap_->allGather(pack(mine), all, error))
    return false;
  region.local = local;
  region.bytes = mine.bytes;
  region.peer.assign(ranks_, nullptr);
  region.peerBytes.assign(ranks_, 0);
  bool ok = true;
  for (int r = 0; r < ranks_ && ok; ++r) {
    Share s = unpack(all[r]);
    if (std::strncmp(s.tag, "share", sizeof(s.tag)) != 0) {
      error = "rank " + std::to_string(r) + " is not sharing " + what +
              ": it is in '" + all[r].substr(0, all[r].find('\0')) + "'";
      ok = false;
    } else if (s.status == 2) {
      // This rank's own failure is its argument's; a peer's is remote.
      std::string why(s.blob, strnlen(s.blob, sizeof(s.blob)));
      error = r == rank_ ? "cannot share " + what + ": " + why
                         : "rank " + std::to_string(r) + " could not share " +
                               what + ": " + why;
      ok = false;
    } else if (s.status == 1) {
      if (s.region >= regions_.size() || !regions_[s.region].live) {
        error = "rank " + std::to_string(r) + " shared " + what +
                " from a registration this rank does not have";
        ok = false;
      } else {
        region.peer[r] = regions_[s.region].peer[r] + s.offset;
        region.peerBytes[r] = s.bytes;
      }
    } else {
      ok = device_->importMemory(
          r, std::string(s.blob, std::min(s.blobBytes, sizeof(s.blob))),
          region.peer[r], error);
      region.peerBytes[r] = s.bytes;
    }
  }
  // Names can go once everyone has mapped: a barrier all ranks reach, then
  // a second status exchange so a failure anywhere fails everywhere.
  std::string status(kExchangeBytes, '\0');
  status.replace(0, 13, ok ? "shared: ok   " : "shared: error");
  std::vector<std::string> statuses;
  std::string gatherError;
  if (!bootstrap_->allGather(status, statuses, gatherError)) {
    if (ok)
      error = gatherError;
    return false;
  }
  device_->importsDone();
  for (int r = 0; r < ranks_ && ok; ++r)
    if (statuses[r].compare(0, 13, "shared: ok   ") != 0) {
      error = "rank " + std::to_string(r) + " could not map " + what +
              " of every rank";
      ok = false;
    }
  return ok;
}

bool Communicator::agree(const std::string &mine, const std::string &what,
                         std::string &error) {
  std::string padded = mine.substr(0, kExchangeBytes - 1);
  padded.resize(kExchangeBytes, '\0');
  std::vector<std::string> all;
  if (!bootstrap_->allGather(padded, all, error))
    return false;
  for (int r = 0; r < ranks_; ++r)
    if (all[r] != padded) {
      error = what + " differs between ranks: rank " + std::to_string(r) +
              " has '" + all[r].substr(0, all[r].find('\0')) + "', rank " +
              std::to_string(rank_) + " '" + mine.substr(0, 255) + "'";
      return false;
    }
  return true;
}

Communicator::~Communicator() {
  // Peers may still be running kernels that touch this rank's memory:
  // wait for them (bounded, errors ignored) before the device frees it.
  if (bootstrap_ && device_) {
    std::string message = "sdmaCommDestroy (rank " + std::to_string(rank_) +
                          " is leaving)",
                ignored;
    message.resize(kExchangeBytes, '\0');
    std::vector<std::string> all;
    bootstrap_->allGather(message, all, ignored);
  }
  instances_.clear();
  device_.reset();
}

std::string Communicator::deviceName() const { return device_->name(); }

bool Communicator::memAlloc(size_t bytes, void *&ptr, std::string &error) {
  ptr = nullptr;
  size_t want = alignUp(std::max<size_t>(bytes, 1));
  if (!agree("memAlloc(" + std::to_string(bytes) + ")",
             "the symmetric allocation", error))
    return false;
  for (auto it = heapFree_.begin(); it != heapFree_.end(); ++it) {
    if (it->second < want)
      continue;
    size_t offset = it->first, left = it->second - want;
    heapFree_.erase(it);
    if (left)
      heapFree_[offset + want] = left;
    heapLive_[offset] = want;
    ptr = regions_[0].local + offset;
    return true;
  }
  size_t free = 0;
  for (auto &[offset, size] : heapFree_)
    free += size;
  error = "the symmetric heap cannot hold " + std::to_string(bytes) +
          " more bytes (" + std::to_string(free) + " of " +
          std::to_string(options_.heapBytes) +
          " free; SDMA_HEAP_BYTES sets its size)";
  return false;
}

bool Communicator::memFree(void *ptr, std::string &error) {
  char *p = static_cast<char *>(ptr);
  size_t offset = p - regions_[0].local;
  auto it = p >= regions_[0].local ? heapLive_.find(offset) : heapLive_.end();
  std::string mine = it == heapLive_.end()
                         ? "memFree(not an allocation)"
                         : "memFree(offset " + std::to_string(offset) + ")";
  if (!agree(mine, "the symmetric free", error))
    return false;
  if (it == heapLive_.end()) {
    error = hex(ptr) + " is not an allocation of the symmetric heap";
    return false;
  }
  size_t size = it->second;
  heapLive_.erase(it);
  auto next = heapFree_.lower_bound(offset);
  if (next != heapFree_.end() && next->first == offset + size) {
    size += next->second;
    heapFree_.erase(next);
  }
  auto prev = heapFree_.lower_bound(offset);
  if (prev != heapFree_.begin() &&
      std::prev(prev)->first + std::prev(prev)->second == offset) {
    std::prev(prev)->second += size;
    return true;
  }
  heapFree_[offset] = size;
  return true;
}

bool Communicator::registerMemory(void *ptr, size_t bytes, int &handle,
                                  std::string &error) {
  Share share;
  share.bytes = bytes;
  int region = -1;
  size_t offset = 0;
  std::string why, blob;
  if (!ptr || !bytes) {
    share.status = 2;
    why = "a null pointer or zero bytes";
  } else if (locate(ptr, bytes, "the buffer", region, offset, why)) {
    share.status = 1;
    share.region = region;
    share.offset = offset;
  } else if (!device_->exportMemory(static_cast<char *>(ptr), bytes, blob,
                                    why)) {
    share.status = 2;
  } else if (blob.size() > sizeof(share.blob)) {
    share.status = 2;
    why = "the device's handle is too large";
  } else {
    std::memcpy(share.blob, blob.data(), share.blobBytes = blob.size());
  }
  if (share.status == 2)
    std::snprintf(share.blob, sizeof(share.blob), "%s", why.c_str());
  Region mapped;
  if (!exchangeShares(static_cast<char *>(ptr), share, "a registered buffer",
                      mapped, error))
    return false;
  handle = static_cast<int>(regions_.size());
  regions_.push_back(std::move(mapped));
  return true;
}

bool Communicator::deregisterMemory(int handle, std::string &error) {
  bool valid =
      handle > 0 && size_t(handle) < regions_.size() && regions_[handle].live;
  if (!agree("deregister(" + std::to_string(valid ? handle : -1) + ")",
             "the deregistration", error))
    return false;
  if (!valid) {
    error = "registration handle " + std::to_string(handle) + " is not live";
    return false;
  }
  // The mapping stays (peers' handles are closed with the device): a later
  // registration of the same memory finds it again.
  regions_[handle].live = false;
  return true;
}

bool Communicator::locate(const void *ptr, size_t bytes, const char *what,
                          int &region, size_t &offset,
                          std::string &error) const {
  const char *p = static_cast<const char *>(ptr);
  // Registrations first (the newest wins), then the heap's allocations.
  for (size_t i = regions_.size(); i-- > 1;) {
    const Region &r = regions_[i];
    if (r.live && p >= r.local && p + bytes <= r.local + r.bytes) {
      region = static_cast<int>(i);
      offset = p - r.local;
      return true;
    }
  }
  const Region &heap = regions_[0];
  if (p >= heap.local && p < heap.local + heap.bytes) {
    size_t at = p - heap.local;
    // The control area's used part (the communicator's own count tables
    // live there) is symmetric too.
    if (at + bytes <= controlUsed_) {
      region = 0;
      offset = at;
      return true;
    }
    auto it = heapLive_.upper_bound(at);
    if (it != heapLive_.begin()) {
      --it;
      if (at < it->first + it->second) {
        if (at + bytes > it->first + it->second) {
          error = std::string(what) + " (" + std::to_string(bytes) +
                  " bytes at " + hex(ptr) + ") runs past the end of its " +
                  std::to_string(it->second) + "-byte symmetric allocation";
          return false;
        }
        region = 0;
        offset = at;
        return true;
      }
    }
  }
  error = std::string(what) + " (" + std::to_string(bytes) + " bytes at " +
          hex(ptr) + ") on rank " + std::to_string(rank_) +
          " is not symmetric memory: allocate it with sdmaMemAlloc or "
          "register it with sdmaMemRegister";
  return false;
}

bool Communicator::asyncError(std::string &error) {
  if (failed_.empty())
    readKernelError(failed_);
  if (failed_.empty())
    return true;
  error = failed_;
  return false;
}
