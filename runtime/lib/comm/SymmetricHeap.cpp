//===- SymmetricHeap.cpp - memory every rank maps -------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Sharing is two exchanges: every rank's Share (its device's blob, or where
// in an existing region the memory already is, or why it cannot share),
// then, once every rank has mapped every other's, a status, so that a
// failure on any rank is an error on every rank and no rank keeps a region
// the others dropped.
//
//===----------------------------------------------------------------------===//

#include "comm/SymmetricHeap.h"

#include <cstdio>
#include <cstring>

using namespace sdma::rt;

namespace {
constexpr size_t kAlign = 256;

std::string hex(const void *p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}
} // namespace

/// What a rank shares when memory is exported: one exchange.
struct SymmetricHeap::Share {
  char tag[8] = "share";
  int64_t status = 0; // 0 device blob, 1 an existing region, 2 failed
  uint64_t bytes = 0, region = 0, offset = 0, blobBytes = 0;
  char blob[208] = {0};

  /// This share, failed for `why`.
  void refuse(const std::string &why) {
    status = 2;
    std::snprintf(blob, sizeof(blob), "%s", why.c_str());
  }
  /// This share, carrying the device's `handle`.
  void carry(const std::string &handle) {
    if (handle.size() > sizeof(blob))
      return refuse("the device's handle is too large");
    std::memcpy(blob, handle.data(), blobBytes = handle.size());
  }
};
static_assert(sizeof(SymmetricHeap::Share) == kExchangeBytes, "exchange");

std::unique_ptr<SymmetricHeap>
SymmetricHeap::create(CommDevice &device, Agreement &agreement,
                      ErrorKind deviceKind, size_t controlBytes,
                      size_t heapBytes, Error &error) {
  std::unique_ptr<SymmetricHeap> heap(
      new SymmetricHeap(device, agreement, deviceKind));
  // The heap starts kAlign-aligned, as its allocations are within it (what
  // vector loads and SDMA swaps and broadcasts need of a buffer).
  controlBytes = (controlBytes + kAlign - 1) / kAlign * kAlign;
  heap->controlBytes_ = controlBytes;
  heap->heapBytes_ = heapBytes;
  size_t total = controlBytes + heapBytes;
  char *base = nullptr;
  Share share;
  share.bytes = total;
  std::string blob, why;
  if (!device.allocate(total, base, why) ||
      !device.exportMemory(base, total, blob, why))
    share.refuse(why);
  else
    share.carry(blob);
  Region region;
  if (!heap->exchange(base, share, "its heap", deviceKind, region, error))
    return nullptr;
  for (int r = 0; r < agreement.ranks(); ++r)
    if (region.peerBytes[r] != total) {
      error.fail(ErrorKind::InvalidUsage,
                 "rank " + std::to_string(r) + " has a heap of " +
                     std::to_string(region.peerBytes[r] - controlBytes) +
                     " bytes, rank " + std::to_string(agreement.rank()) +
                     " one of " + std::to_string(heapBytes) +
                     ": every rank must use the same heap size "
                     "(SDMA_HEAP_BYTES, sdmaConfig_t::heapBytes)");
      return nullptr;
    }
  heap->control_ = region.local;
  heap->regions_.push_back(std::move(region));
  heap->free_[controlBytes] = heapBytes;
  return heap;
}

bool SymmetricHeap::exchange(char *local, const Share &mine,
                             const std::string &what, ErrorKind ownKind,
                             Region &region, Error &error) {
  std::vector<std::string> all;
  if (!agreement_.allGather(
          std::string(reinterpret_cast<const char *>(&mine), sizeof(mine)), all,
          error))
    return false;
  int ranks = agreement_.ranks();
  region.local = local;
  region.bytes = mine.bytes;
  region.peer.assign(ranks, nullptr);
  region.peerBytes.assign(ranks, 0);
  // This rank's own failure first: it is its argument's or its device's.
  bool ok = mine.status != 2 ||
            error.fail(ownKind,
                       "cannot share " + what + ": " +
                           std::string(mine.blob,
                                       strnlen(mine.blob, sizeof(mine.blob))));
  for (int r = 0; r < ranks && ok; ++r) {
    Share s;
    std::memcpy(&s, all[r].data(), sizeof(s));
    if (std::strncmp(s.tag, "share", sizeof(s.tag)) != 0) {
      ok = error.fail(ErrorKind::Remote,
                      "rank " + std::to_string(r) + " is not sharing " + what +
                          ": it is in '" + all[r].substr(0, all[r].find('\0')) +
                          "'");
    } else if (s.status == 2) {
      std::string why(s.blob, strnlen(s.blob, sizeof(s.blob)));
      ok = error.fail(ErrorKind::Remote, "rank " + std::to_string(r) +
                                             " could not share " + what + ": " +
                                             why);
    } else if (s.status == 1) {
      if (s.region >= regions_.size() || !regions_[s.region].live) {
        ok = error.fail(ErrorKind::InvalidUsage,
                        "rank " + std::to_string(r) + " shared " + what +
                            " from a registration this rank does not have");
      } else {
        region.peer[r] = regions_[s.region].peer[r] + s.offset;
        region.peerBytes[r] = s.bytes;
      }
    } else {
      std::string why;
      if (!device_.importMemory(
              r, std::string(s.blob, std::min(s.blobBytes, sizeof(s.blob))),
              region.peer[r], why))
        ok = error.fail(deviceKind_, why);
      region.peerBytes[r] = s.bytes;
    }
  }
  // Names can go once everyone has mapped: a second exchange all ranks
  // reach, so a failure anywhere fails everywhere.
  std::vector<std::string> statuses;
  Error gatherError;
  if (!agreement_.allGather(ok ? "shared: ok" : "shared: error", statuses,
                            gatherError)) {
    if (ok)
      error = gatherError;
    return false;
  }
  device_.importsDone();
  for (int r = 0; r < ranks && ok; ++r)
    if (statuses[r].compare(0, 11, std::string("shared: ok\0", 11)) != 0)
      ok = error.fail(ErrorKind::Remote, "rank " + std::to_string(r) +
                                             " could not map " + what +
                                             " of every rank");
  return ok;
}

bool SymmetricHeap::allocate(size_t bytes, void *&ptr, Error &error) {
  ptr = nullptr;
  if (!agreement_.agree("memAlloc(" + std::to_string(bytes) + ")",
                        "the symmetric allocation", error))
    return false;
  // Past the heap cannot fit, and rounding it up could wrap.
  size_t want = bytes > heapBytes_ ? 0
                                   : (std::max<size_t>(bytes, 1) + kAlign - 1) /
                                         kAlign * kAlign;
  for (auto it = free_.begin(); want && it != free_.end(); ++it) {
    if (it->second < want)
      continue;
    size_t offset = it->first, left = it->second - want;
    free_.erase(it);
    if (left)
      free_[offset + want] = left;
    live_[offset] = want;
    ptr = regions_[0].local + offset;
    ++generation_;
    return true;
  }
  size_t available = 0;
  for (auto &[offset, size] : free_)
    available += size;
  return error.fail(ErrorKind::System,
                    "the symmetric heap cannot hold " + std::to_string(bytes) +
                        " more bytes (" + std::to_string(available) + " of " +
                        std::to_string(heapBytes_) +
                        " free; SDMA_HEAP_BYTES sets its size)");
}

bool SymmetricHeap::free(void *ptr, Error &error) {
  char *p = static_cast<char *>(ptr);
  char *base = regions_[0].local;
  auto it = p >= base && p < base + regions_[0].bytes ? live_.find(p - base)
                                                      : live_.end();
  std::string mine = it == live_.end()
                         ? "memFree(not an allocation)"
                         : "memFree(offset " + std::to_string(it->first) + ")";
  if (!agreement_.agree(mine, "the symmetric free", error))
    return false;
  if (it == live_.end())
    return error.fail(ErrorKind::InvalidArgument,
                      hex(ptr) + " is not an allocation of the symmetric heap");
  size_t offset = it->first, size = it->second;
  live_.erase(it);
  ++generation_;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + size) {
    size += next->second;
    free_.erase(next);
  }
  auto prev = free_.lower_bound(offset);
  if (prev != free_.begin() &&
      std::prev(prev)->first + std::prev(prev)->second == offset) {
    std::prev(prev)->second += size;
    return true;
  }
  free_[offset] = size;
  return true;
}

bool SymmetricHeap::registerMemory(void *ptr, size_t bytes, int &handle,
                                   Error &error) {
  Share share;
  share.bytes = bytes;
  int region = -1;
  size_t offset = 0;
  Error located;
  std::string blob, why;
  if (!ptr || !bytes) {
    share.refuse("a null pointer or zero bytes");
  } else if (reinterpret_cast<uintptr_t>(ptr) + bytes <
             reinterpret_cast<uintptr_t>(ptr)) {
    share.refuse(std::to_string(bytes) + " bytes at " + hex(ptr) +
                 " wrap the address space");
  } else if (locate(ptr, bytes, "the buffer", region, offset, located)) {
    share.status = 1;
    share.region = region;
    share.offset = offset;
  } else if (!device_.exportMemory(static_cast<char *>(ptr), bytes, blob,
                                   why)) {
    share.refuse(why);
  } else {
    share.carry(blob);
  }
  Region mapped;
  if (!exchange(static_cast<char *>(ptr), share, "a registered buffer",
                ErrorKind::InvalidArgument, mapped, error))
    return false;
  handle = static_cast<int>(regions_.size());
  regions_.push_back(std::move(mapped));
  ++generation_;
  return true;
}

bool SymmetricHeap::deregisterMemory(int handle, Error &error) {
  bool valid =
      handle > 0 && size_t(handle) < regions_.size() && regions_[handle].live;
  if (!agreement_.agree("deregister(" + std::to_string(valid ? handle : -1) +
                            ")",
                        "the deregistration", error))
    return false;
  if (!valid)
    return error.fail(ErrorKind::InvalidUsage, "registration handle " +
                                                   std::to_string(handle) +
                                                   " is not live");
  // The mapping stays (peers' handles are closed with the device): a later
  // registration of the same memory finds it again.
  regions_[handle].live = false;
  ++generation_;
  return true;
}

bool SymmetricHeap::locate(const void *ptr, size_t bytes,
                           const std::string &what, int &region, size_t &offset,
                           Error &error) const {
  Miss miss = find(ptr, bytes, region, offset);
  if (miss == Miss::None)
    return true;
  // The message is built only for a refusal: a call's lookups are on the
  // path of every collective.
  std::string where = what + " (" + std::to_string(bytes) + " bytes at " +
                      hex(ptr) + ") on rank " +
                      std::to_string(agreement_.rank());
  switch (miss) {
  case Miss::Wraps:
    return error.fail(ErrorKind::InvalidArgument,
                      where + " wraps the address space");
  case Miss::Control:
    return error.fail(ErrorKind::InvalidArgument,
                      where + " is in the communicator's control area, not in "
                              "an allocation of its heap");
  case Miss::PastEnd:
    return error.fail(ErrorKind::InvalidArgument,
                      where + " runs past the end of its " +
                          std::to_string(offset) +
                          "-byte symmetric allocation");
  case Miss::Freed:
    return error.fail(ErrorKind::InvalidArgument,
                      where + " is in the symmetric heap but in no live "
                              "allocation (freed, or never allocated)");
  default:
    return error.fail(ErrorKind::InvalidArgument,
                      where + " is not symmetric memory: allocate it with "
                              "sdmaMemAlloc or register it with "
                              "sdmaMemRegister");
  }
}

SymmetricHeap::Miss SymmetricHeap::find(const void *ptr, size_t bytes,
                                        int &region, size_t &offset) const {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  if (p + bytes < p)
    return Miss::Wraps;
  // Registrations first (the newest wins), then the heap's allocations.
  for (size_t i = regions_.size(); i-- > 1;) {
    const Region &r = regions_[i];
    auto base = reinterpret_cast<uintptr_t>(r.local);
    if (r.live && p >= base && p < base + r.bytes &&
        p + bytes <= base + r.bytes) {
      region = static_cast<int>(i);
      offset = p - base;
      return Miss::None;
    }
  }
  const Region &heap = regions_[0];
  auto base = reinterpret_cast<uintptr_t>(heap.local);
  if (p < base || p >= base + heap.bytes)
    return Miss::Elsewhere;
  size_t at = p - base;
  if (at < controlBytes_)
    return Miss::Control;
  auto it = live_.upper_bound(at);
  if (it == live_.begin() || at >= std::prev(it)->first + std::prev(it)->second)
    return Miss::Freed;
  --it;
  if (bytes > it->first + it->second - at) {
    offset = it->second; // the allocation's size, for the message
    return Miss::PastEnd;
  }
  region = 0;
  offset = at;
  return Miss::None;
}

bool SymmetricHeap::disjoint(const void *ptr, size_t bytes) const {
  auto p = reinterpret_cast<uintptr_t>(ptr);
  if (p + bytes < p)
    return false;
  for (size_t i = 0; i < regions_.size(); ++i) {
    const Region &r = regions_[i];
    auto base = reinterpret_cast<uintptr_t>(r.local);
    if ((i == 0 || r.live) && p < base + r.bytes && base < p + bytes)
      return false;
  }
  return true;
}

bool SymmetricHeap::contains(const void *ptr, size_t bytes) const {
  int region = -1;
  size_t offset = 0;
  return lookup(ptr, bytes, region, offset);
}
