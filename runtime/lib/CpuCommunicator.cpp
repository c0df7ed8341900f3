//===- CpuCommunicator.cpp - one process per rank on the CPU --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/CpuCommunicator.h"

#include "KernelCache.h"

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace sdma::rt;

namespace {
constexpr size_t kAlign = 64;
size_t alignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// What every rank tells the others at creation.
struct Announce {
  uint64_t programHash, segmentBytes, maxChunkBytes;
};

std::string segmentName(const UniqueId &id, int rank) {
  char name[64];
  std::snprintf(
      name, sizeof(name), "/sdma-%016llx-%d",
      (unsigned long long)hashBytes(std::string(id.bytes, sizeof(id.bytes))),
      rank);
  return name;
}
} // namespace

std::unique_ptr<CpuCommunicator>
CpuCommunicator::create(const UniqueId &id, int rank, int ranks,
                        const LdstProgram &program, const Options &options,
                        std::string &error) {
  if (ranks != program.ranks) {
    error = "the program is compiled for " + std::to_string(program.ranks) +
            " ranks, the job has " + std::to_string(ranks);
    return nullptr;
  }
  std::unique_ptr<CpuCommunicator> comm(new CpuCommunicator());
  comm->bootstrap_ =
      Bootstrap::connect(id, rank, ranks, options.timeoutMs, error);
  if (!comm->bootstrap_)
    return nullptr;
  LdstCpuOptions cpu = options.cpu;
  cpu.timeoutNs = options.timeoutMs * 1000000ull;
  comm->kernel_ = LdstCpuExecutor::create(program, cpu, error);
  if (!comm->kernel_)
    return nullptr;
  // The segment: flags, the two barrier counters, then each buffer.
  size_t B = program.buffers.size();
  comm->buffers_ = B;
  comm->maxChunkBytes_ = options.maxChunkBytes;
  size_t flagBytes = alignUp(std::max(1, program.flagSlots) * 8);
  size_t bytes = flagBytes + kAlign;
  std::vector<size_t> offsets;
  for (const Buffer &buffer : program.buffers) {
    offsets.push_back(bytes);
    bytes += alignUp(buffer.chunks * options.maxChunkBytes);
  }
  std::string mine = segmentName(id, rank);
  int fd = shm_open(mine.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, bytes) != 0) {
    error = "rank " + std::to_string(rank) + ": cannot create shared memory " +
            mine + " (" + std::to_string(bytes) +
            " bytes): " + std::strerror(errno);
    if (fd >= 0)
      close(fd), shm_unlink(mine.c_str());
    return nullptr;
  }
  close(fd);
  // Tell the others what this rank runs, and check they run the same.
  Announce announce{hashBytes(program.source), bytes, options.maxChunkBytes};
  std::vector<std::string> all;
  bool agreed = comm->bootstrap_->allGather(
      std::string(reinterpret_cast<char *>(&announce), sizeof(announce)), all,
      error);
  for (int r = 0; agreed && r < ranks; ++r) {
    Announce other;
    std::memcpy(&other, all[r].data(), sizeof(other));
    if (other.programHash != announce.programHash ||
        other.maxChunkBytes != announce.maxChunkBytes) {
      error = "rank " + std::to_string(r) +
              " loaded a different schedule or buffer size than rank " +
              std::to_string(rank) + " (schedule hash " +
              std::to_string(other.programHash) + " vs " +
              std::to_string(announce.programHash) + ")";
      agreed = false;
    }
  }
  // Map every rank's segment (this process's address space), then unlink
  // once all have mapped all.
  comm->segments_.assign(ranks, {});
  for (int r = 0; agreed && r < ranks; ++r) {
    std::string name = segmentName(id, r);
    int peer = shm_open(name.c_str(), O_RDWR, 0);
    void *base = peer < 0 ? MAP_FAILED
                          : mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                 MAP_SHARED, peer, 0);
    if (peer >= 0)
      close(peer);
    if (base == MAP_FAILED) {
      error = "rank " + std::to_string(rank) + " cannot map rank " +
              std::to_string(r) + "'s shared memory " + name + ": " +
              std::strerror(errno);
      agreed = false;
      break;
    }
    comm->segments_[r] = {base, bytes};
  }
  std::string barrierError;
  bool met = agreed && comm->bootstrap_->barrier(barrierError);
  shm_unlink(mine.c_str());
  if (!agreed)
    return nullptr;
  if (!met) {
    error = barrierError;
    return nullptr;
  }
  LdstCpuExecutor::RankPointers &p = comm->pointers_;
  for (int r = 0; r < ranks; ++r) {
    char *base = static_cast<char *>(comm->segments_[r].base);
    for (size_t b = 0; b < B; ++b)
      p.buffers.push_back(base + offsets[b]);
    p.flags.push_back(reinterpret_cast<unsigned long long *>(base));
    p.sync.push_back(reinterpret_cast<unsigned int *>(base + flagBytes));
  }
  return comm;
}

CpuCommunicator::~CpuCommunicator() {
  for (Segment &segment : segments_)
    if (segment.base)
      munmap(segment.base, segment.bytes);
}

bool CpuCommunicator::run(size_t chunkBytes, std::string &error) {
  if (chunkBytes == 0 || chunkBytes > maxChunkBytes_) {
    error = "chunk of " + std::to_string(chunkBytes) +
            " bytes: the buffers hold chunks of 1.." +
            std::to_string(maxChunkBytes_);
    return false;
  }
  return kernel_->runRanks(pointers_, chunkBytes, rank(), rank() + 1, error);
}
