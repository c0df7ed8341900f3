//===- SymmetricHeap.h - memory every rank maps -----------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Each rank's heap is one device allocation: the control area (owned by
// the ProgramCache: flags, barrier counters, run counters and count
// tables of each schedule instance), then the user heap that allocate()
// hands out first-fit. Registrations map memory a rank already has (a
// torch tensor). Every operation here is collective: every rank calls it
// in the same order, so a buffer has the same offset of the same region on
// every rank, and a peer's copy of a local pointer is found without asking
// (locate). A step that fails on one rank fails on every rank, and leaves
// the heap as it was.
//
//   before memAlloc(256) on 2 ranks   after
//   rank 0: [control|..........]      [control|AAAA......]
//   rank 1: [control|..........]      [control|AAAA......]  A at the same
//                                                           offset on both
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_COMM_SYMMETRICHEAP_H
#define SDMA_RUNTIME_LIB_COMM_SYMMETRICHEAP_H

#include "comm/Agreement.h"
#include "comm/CommDevice.h"

#include <map>
#include <memory>
#include <vector>

namespace sdma::rt {

/// Memory every rank has, mapped here: this rank's base and every rank's.
struct Region {
  char *local = nullptr;
  size_t bytes = 0;
  std::vector<char *> peer;      // [rank]: the region's base there
  std::vector<size_t> peerBytes; // [rank]
  bool live = true;
};

class SymmetricHeap {
public:
  /// Allocates `controlBytes + heapBytes` on `device`, shares it and maps
  /// every rank's; every rank must ask for the same sizes.
  static std::unique_ptr<SymmetricHeap>
  create(CommDevice &device, Agreement &agreement, ErrorKind deviceKind,
         size_t controlBytes, size_t heapBytes, Error &error);

  /// Region 0 is the heap; registrations follow.
  const Region &region(int index) const { return regions_[index]; }
  size_t regions() const { return regions_.size(); }
  /// This rank's control area: the heap's first controlBytes. (Kept
  /// apart from regions_, which a registration on another thread may
  /// move: an abort reads it from any thread.)
  char *control() const { return control_; }
  size_t controlBytes() const { return controlBytes_; }

  bool allocate(size_t bytes, void *&ptr, Error &error);
  bool free(void *ptr, Error &error);
  bool registerMemory(void *ptr, size_t bytes, int &handle, Error &error);
  bool deregisterMemory(int handle, Error &error);

  /// The region and offset of user buffer [ptr, ptr + bytes) (`what` in
  /// errors): a live registration or one heap allocation, never the
  /// control area. Not collective.
  bool locate(const void *ptr, size_t bytes, const std::string &what,
              int &region, size_t &offset, Error &error) const;
  /// Whether [ptr, ptr + bytes) lies in one live allocation of the heap or
  /// one live registration (no exchange: this rank's view only).
  bool contains(const void *ptr, size_t bytes) const;
  /// locate() without a message: false where it would refuse.
  bool lookup(const void *ptr, size_t bytes, int &region,
              size_t &offset) const {
    return find(ptr, bytes, region, offset) == Miss::None;
  }
  /// Whether [ptr, ptr + bytes) misses the heap and every live
  /// registration entirely (memory a private buffer may be; a range that
  /// wraps is not).
  bool disjoint(const void *ptr, size_t bytes) const;

  /// Advances whenever an allocation or registration is made or goes
  /// (what a buffer's place depends on): a call replayed from an earlier
  /// generation is planned afresh (CallReplay).
  uint64_t generation() const { return generation_; }

  struct Share;

private:
  /// Why a range is not one live allocation or registration.
  enum class Miss { None, Wraps, Control, PastEnd, Freed, Elsewhere };
  /// locate()'s lookup; on PastEnd, `offset` is the allocation's size.
  Miss find(const void *ptr, size_t bytes, int &region, size_t &offset) const;
  SymmetricHeap(CommDevice &device, Agreement &agreement, ErrorKind deviceKind)
      : device_(device), agreement_(agreement), deviceKind_(deviceKind) {}
  /// Shares `mine` (memory at `local`) and maps every rank's; a failure
  /// of this rank's own share is `ownKind`.
  bool exchange(char *local, const Share &mine, const std::string &what,
                ErrorKind ownKind, Region &region, Error &error);

  CommDevice &device_;
  Agreement &agreement_;
  ErrorKind deviceKind_;
  std::vector<Region> regions_;
  char *control_ = nullptr;
  size_t controlBytes_ = 0, heapBytes_ = 0;
  std::map<size_t, size_t> live_; // offset -> bytes
  std::map<size_t, size_t> free_; // offset -> bytes
  uint64_t generation_ = 0;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_COMM_SYMMETRICHEAP_H
