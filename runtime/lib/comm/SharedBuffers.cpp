//===- SharedBuffers.cpp - a call's buffers shared for that call ----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "comm/SharedBuffers.h"
#include "comm/Agreement.h"
#include "compile/KernelCache.h"

#include <cstring>

using namespace sdma::rt;

namespace {
/// One rank's message (it fits one exchange): the magic, the call's tag,
/// then a slot per shared buffer: its state, the length of what follows,
/// and the device's handle (Posted) or why not (Refused).
constexpr char kMagic[4] = {'\x02', 'S', 'H', 'R'};
constexpr size_t kTagAt = 4, kProcessAt = 12, kSlotsAt = 20, kSlotBytes = 116;
constexpr size_t kDataBytes = kSlotBytes - 2;
static_assert(kSlotsAt + kMaxSharedBuffers * kSlotBytes < kExchangeBytes,
              "a rank's message fits one exchange");
enum Slot : unsigned char {
  None = 0,
  Posted = 1,    // the device's handle of its allocation
  Refused = 2,   // why it cannot be shared
  Symmetric = 3, // a Place
  InProcess = 4  // a Local: memory only ranks of its process reach
};

/// This process, as its messages name it: a hash of its token (the pid
/// and random bits, drawn again in a forked child: Agreement.h), so that a
/// rank takes a peer's address as its own only in the same process.
int64_t processNumber() { return int64_t(hashBytes(processToken())); }

/// Memory the device cannot export but addresses (a thread rank's host
/// memory on the CPU device): the address itself, for ranks of the same
/// process, then why the device would not export it.
struct Local {
  int64_t process = 0; // processNumber()
  uint64_t address = 0;
};

/// Where a buffer in symmetric memory is: its region and offset, the same
/// on every rank that has one there.
struct Place {
  int32_t region = 0;
  uint64_t offset = 0;
};

void put(std::string &message, size_t slot, Slot state,
         const std::string &data) {
  size_t at = kSlotsAt + slot * kSlotBytes;
  size_t n = std::min(data.size(), kDataBytes);
  message[at] = static_cast<char>(state);
  message[at + 1] = static_cast<char>(n);
  message.replace(at + 2, n, data, 0, n);
}

Slot stateOf(const std::string &message, size_t slot) {
  return static_cast<Slot>(
      static_cast<unsigned char>(message[kSlotsAt + slot * kSlotBytes]));
}

std::string dataOf(const std::string &message, size_t slot) {
  size_t at = kSlotsAt + slot * kSlotBytes;
  size_t n =
      std::min<size_t>(static_cast<unsigned char>(message[at + 1]), kDataBytes);
  return message.substr(at + 2, n);
}
/// Maps the peer copies this rank reaches into `shared` (each block
/// once); the first failure, or none.
Error mapPeers(CommDevice &device, const SymmetricHeap &heap,
               const Instance &instance, const std::vector<std::string> &all,
               const std::vector<int> &slotOf, int rank, SharedCall &shared) {
  Error error;
  auto name = [&](size_t b) { return instance.program.buffers[b].name; };
  for (const auto &[r, b] : instance.touched[rank]) {
    if (size_t(b) >= slotOf.size() || slotOf[b] < 0 || r == rank ||
        shared.regions[b].peer[r])
      continue;
    Region &region = shared.regions[b];
    std::string data = dataOf(all[r], slotOf[b]);
    switch (stateOf(all[r], slotOf[b])) {
    case Symmetric: {
      Place place;
      std::memcpy(&place, data.data(), std::min(data.size(), sizeof(place)));
      if (data.size() != sizeof(place) || place.region < 0 ||
          size_t(place.region) >= heap.regions() ||
          !heap.region(place.region).live ||
          place.offset > heap.region(place.region).peerBytes[r]) {
        error.fail(ErrorKind::Remote, "rank " + std::to_string(r) +
                                          "'s buffer '" + name(b) +
                                          "' is in no symmetric region here");
        return error;
      }
      const Region &at = heap.region(place.region);
      region.peer[r] = at.peer[r] + place.offset;
      region.peerBytes[r] = at.peerBytes[r] - place.offset;
      break;
    }
    case InProcess: { // the same process (checked before)
      Local local;
      std::memcpy(&local, data.data(), sizeof(local));
      region.peer[r] = reinterpret_cast<char *>(local.address);
      break;
    }
    default: { // Posted: the first byte says whether it is a first post
      std::string why;
      if (!device.importMemory(r, data.substr(1), region.peer[r], why)) {
        error.fail(ErrorKind::Device, "mapping rank " + std::to_string(r) +
                                          "'s buffer '" + name(b) +
                                          "': " + why);
        return error;
      }
    }
    }
  }
  return error;
}
/// `error` failed with `kind` and `message`.
Error failed(Error &error, ErrorKind kind, const std::string &message) {
  error.fail(kind, message);
  return error;
}

/// This rank's message: each shared buffer's place (symmetric memory), the
/// device's handle of its allocation (a first post of it marked 'F'), its
/// address for ranks of this process, or why it cannot be shared ('N': the
/// caller may stage; 'R': the call is wrong here, this rank's `refused`).
std::string postOf(CommDevice &device, const SymmetricHeap &heap,
                   const std::vector<const void *> &buffers,
                   const std::vector<uint64_t> &need,
                   const std::vector<int> &slotOf, uint64_t tag,
                   const Error &refused, SharedBlocks &blocks) {
  const size_t userBuffers = slotOf.size();
  std::string mine(kExchangeBytes - 1, '\0');
  mine.replace(0, sizeof(kMagic), kMagic, sizeof(kMagic));
  std::memcpy(&mine[kTagAt], &tag, sizeof(tag));
  int64_t process = processNumber();
  std::memcpy(&mine[kProcessAt], &process, sizeof(process));
  for (size_t b = 0; b < userBuffers; ++b) {
    if (slotOf[b] < 0)
      continue;
    if (!refused.empty()) {
      put(mine, slotOf[b], Refused,
          (refused.kind == ErrorKind::NotSymmetric ? "N" : "R") +
              refused.message);
      continue;
    }
    if (!buffers[b])
      continue;
    std::string blob, why;
    char *ptr = static_cast<char *>(const_cast<void *>(buffers[b]));
    int region = 0;
    size_t offset = 0;
    if (heap.lookup(ptr, need[b], region, offset)) {
      // Symmetric memory (a staging area, a window): every rank has it
      // mapped already.
      Place place{region, offset};
      put(mine, slotOf[b], Symmetric,
          std::string(reinterpret_cast<const char *>(&place), sizeof(place)));
    } else if (!heap.disjoint(ptr, need[b]))
      put(mine, slotOf[b], Refused,
          "Nit overlaps symmetric memory without lying in one allocation or "
          "registration");
    else if (!device.exportMemory(ptr, need[b], blob, why)) {
      // Ranks that are threads of this process may still reach it.
      std::string unreachable;
      Local local{processNumber(), reinterpret_cast<uint64_t>(ptr)};
      if (device.addressable(ptr, unreachable))
        put(mine, slotOf[b], InProcess,
            std::string(reinterpret_cast<const char *>(&local), sizeof(local)) +
                why);
      else
        put(mine, slotOf[b], Refused, "N" + unreachable);
    } else if (blob.size() + 1 > kDataBytes)
      put(mine, slotOf[b], Refused,
          "Nits handle (" + std::to_string(blob.size()) +
              " bytes) is too long");
    else
      // 'F': this rank's first post of the block (its peers map it now and
      // say whether they could); 'A': posted before.
      put(mine, slotOf[b], Posted,
          (blocks.posted.insert(blob).second ? "F" : "A") + blob);
  }
  return mine;
}

/// What every rank decides alike from every rank's message: the call's
/// failure, or none. A refusing rank keeps its own reason.
Error verdictOf(const std::vector<std::string> &all, const Instance &instance,
                const std::vector<int> &slotOf, uint64_t tag,
                bool privateBuffers, const Error &refused) {
  const int ranks = int(all.size());
  const size_t userBuffers = slotOf.size();
  auto name = [&](size_t b) { return instance.program.buffers[b].name; };
  Error error;
  // What every rank decides alike, from every rank's message.
  for (int r = 0; r < ranks; ++r)
    if (all[r].compare(0, sizeof(kMagic), kMagic, sizeof(kMagic)) != 0 ||
        all[r].compare(kTagAt, sizeof(tag),
                       reinterpret_cast<const char *>(&tag), sizeof(tag)) != 0)
      return failed(error, ErrorKind::InvalidUsage,
                    "rank " + std::to_string(r) +
                        " made another call while this one shared its "
                        "buffers (" +
                        instance.program.schedule + ")");
  // A refusal's first byte says whether the caller may stage ('N') or
  // the call is wrong there ('R'). Any 'R' fails the call on every rank
  // for good (a peer's refusal, as agreement reports one); else any 'N'
  // fails it NotSymmetric with private buffers, so every rank stages and
  // calls again alike. A refusing rank keeps its own reason.
  std::string stageWhy, wrongWhy;
  for (int r = 0; r < ranks; ++r)
    for (size_t b = 0; b < userBuffers; ++b)
      if (slotOf[b] >= 0 && stateOf(all[r], slotOf[b]) == Refused) {
        std::string why = dataOf(all[r], slotOf[b]);
        std::string &first =
            !why.empty() && why[0] == 'N' ? stageWhy : wrongWhy;
        if (first.empty())
          first = "rank " + std::to_string(r) + "'s buffer '" + name(b) +
                  "' cannot be shared with its peers (" +
                  why.substr(why.empty() ? 0 : 1) + ")";
      }
  if (!wrongWhy.empty()) {
    if (!refused.empty() && refused.kind != ErrorKind::NotSymmetric)
      return refused;
    return failed(error, ErrorKind::Remote, wrongWhy);
  }
  if (!stageWhy.empty()) {
    if (!refused.empty())
      return refused;
    return failed(error,
                  privateBuffers ? ErrorKind::NotSymmetric
                                 : ErrorKind::InvalidArgument,
                  stageWhy);
  }
  auto processOf = [&](int r) {
    int64_t p = 0;
    std::memcpy(&p, &all[r][kProcessAt], sizeof(p));
    return p;
  };
  for (int q = 0; q < ranks; ++q)
    for (const auto &[r, b] : instance.touched[q]) {
      if (size_t(b) >= userBuffers || slotOf[b] < 0)
        continue;
      Slot state = stateOf(all[r], slotOf[b]);
      if (state == None)
        return failed(error, ErrorKind::InvalidArgument,
                      "rank " + std::to_string(r) + " passed no buffer '" +
                          name(b) + "', which rank " + std::to_string(q) +
                          " reaches in " + instance.program.schedule);
      if (state == InProcess && processOf(q) != processOf(r))
        return failed(error,
                      privateBuffers ? ErrorKind::NotSymmetric
                                     : ErrorKind::InvalidArgument,
                      "rank " + std::to_string(r) + "'s buffer '" + name(b) +
                          "' cannot be shared with rank " + std::to_string(q) +
                          ", another process (" +
                          dataOf(all[r], slotOf[b]).substr(sizeof(Local)) +
                          ")");
    }
  return error;
}

} // namespace

bool sdma::rt::sharesBuffers(const CommOptions &options, int ranks,
                             const Instance &instance,
                             const std::vector<uint64_t> &bytes,
                             size_t userBuffers, bool lowLatency) {
  if (options.sharedBytes <= 0 || ranks < 2 || lowLatency)
    return false;
  size_t shared = 0;
  bool large = false;
  for (size_t b = 0; b < userBuffers; ++b)
    if (instance.remote[b]) {
      ++shared;
      large |= bytes[b] >= uint64_t(options.sharedBytes);
    }
  return large && shared <= kMaxSharedBuffers;
}

bool sdma::rt::shareBuffers(CommDevice &device, ExchangeBoard &board,
                            const SymmetricHeap &heap, const Instance &instance,
                            const std::vector<const void *> &buffers,
                            const std::vector<uint64_t> &need,
                            size_t userBuffers, uint64_t tag,
                            bool privateBuffers, const Error &refused,
                            SharedBlocks &blocks, SharedCall &shared,
                            Error &error) {
  const int rank = board.rank(), ranks = board.ranks();
  // The shared buffers, in order: their slots in a message.
  std::vector<int> slotOf(userBuffers, -1);
  size_t slots = 0;
  for (size_t b = 0; b < userBuffers; ++b)
    if (instance.remote[b])
      slotOf[b] = int(slots++);
  std::string mine =
      postOf(device, heap, buffers, need, slotOf, tag, refused, blocks);
  std::vector<std::string> all;
  if (!board.allGather(mine, all, error))
    return error.context("sharing the call's buffers");
  if (Error failure =
          verdictOf(all, instance, slotOf, tag, privateBuffers, refused);
      !failure.empty()) {
    error = failure;
    return false;
  }
  // This rank maps the peers' blocks it reaches (each block once).
  shared.regions.assign(userBuffers, Region{});
  for (size_t b = 0; b < userBuffers; ++b) {
    if (slotOf[b] < 0)
      continue;
    Region &region = shared.regions[b];
    region.local = static_cast<char *>(const_cast<void *>(buffers[b]));
    region.bytes = need[b];
    region.peer.assign(ranks, nullptr);
    region.peerBytes.assign(ranks, need[b]);
    region.peer[rank] = region.local;
  }
  Error mapped = mapPeers(device, heap, instance, all, slotOf, rank, shared);
  // Where some rank posted a block for the first time, every rank says
  // whether it mapped what it reaches, so that a failure here fails the
  // call everywhere (not a kernel waiting for this rank until its timeout).
  bool first = false;
  for (int r = 0; r < ranks; ++r)
    for (size_t b = 0; b < userBuffers; ++b)
      first |= slotOf[b] >= 0 && stateOf(all[r], slotOf[b]) == Posted &&
               dataOf(all[r], slotOf[b]).compare(0, 1, "F") == 0;
  if (first) {
    std::vector<std::string> verdicts;
    if (!board.allGather(mapped.empty() ? "ok" : "!" + mapped.message, verdicts,
                         error))
      return error.context("confirming the call's shared buffers");
    if (!mapped.empty()) {
      error = mapped;
      return false;
    }
    for (int r = 0; r < ranks; ++r)
      if (verdicts[r][0] == '!')
        return error.fail(
            ErrorKind::Remote,
            "rank " + std::to_string(r) +
                " could not map this call's shared buffers: " +
                verdicts[r].substr(1, verdicts[r].find('\0') - 1));
  } else if (!mapped.empty()) {
    error = mapped;
    return false;
  }
  return true;
}
