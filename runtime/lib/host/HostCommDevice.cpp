//===- HostCommDevice.cpp - the communicator's CPU device -----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Memory is POSIX shared memory: each allocation a segment created 0600
// (the job's user only), named /sdma-<job>-<pid>-<rank>-<n> (job: a hash of
// the unique id; pid: the creating process), mapped by every peer and
// unlinked once all have mapped it (importsDone, after the communicator's
// barrier), so nothing is left behind when processes die afterwards. A
// rank that dies before then leaves its segments named, and three things
// remove them: a peer whose exchange then fails unlinks every segment it
// knows of; sdma-launch removes a rank's (by its pid) as it reaps it; and a
// new communicator removes its user's segments whose creator no longer
// exists (and that are older than kStaleSeconds: a process of another pid
// namespace sharing /dev/shm may look dead from here). The kernel is the
// generated load/store kernel on host threads (HostLdstKernel, as the CPU
// executor runs it), run for this process's rank in place before launch
// returns; the DMA path's engines are host threads (CpuDmaKernel.h).
//
//===----------------------------------------------------------------------===//

#include "comm/CommDevice.h"
#include "comm/DmaProgram.h"
#include "comm/PointToPoint.h"
#include "compile/KernelCache.h"
#include "host/CpuDmaKernel.h"
#include "host/CpuRingKernel.h"
#include "host/HostLdstKernel.h"
#include "sdma/runtime/LdstCpuExecutor.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace sdma::rt;

namespace {

/// Kernel-submitted DMA: each engine queue's ring. 4 KiB holds about a
/// hundred packets, so larger plans wrap and wait for ring space within a
/// call, as they would on a GPU with a small ring.
constexpr uint64_t kCpuRingBytes = 4096;

std::string hex(const void *p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

struct Mapping {
  std::string name;
  char *base = nullptr;
  size_t bytes = 0;
  bool linked = false;   // ours, not yet unlinked
  bool imported = false; // a peer's, its exchange not yet done
};

/// A segment left named longer than this by a process that no longer
/// exists is stale.
constexpr int kStaleSeconds = 60;

/// The creator's pid of a segment named sdma-<16 hex>-<pid>-<rank>-<n>
/// (/dev/shm's entry, without the slash); 0 if the name is not one.
pid_t creatorOf(const std::string &name) {
  auto digits = [&](size_t from, size_t to, const char *set) {
    return to > from && name.find_first_not_of(set, from) >= to;
  };
  if (name.rfind("sdma-", 0) != 0 || name.size() < 22 || name[21] != '-' ||
      !digits(5, 21, "0123456789abcdef"))
    return 0;
  size_t a = name.find('-', 22),
         b = a == std::string::npos ? a : name.find('-', a + 1);
  if (b == std::string::npos || !digits(22, a, "0123456789") ||
      !digits(a + 1, b, "0123456789") ||
      !digits(b + 1, name.size(), "0123456789") || a - 22 > 9)
    return 0;
  return static_cast<pid_t>(std::strtol(name.c_str() + 22, nullptr, 10));
}

/// Unlinks this user's segments in /dev/shm whose creator is gone.
void removeStaleSegments() {
  DIR *dir = opendir("/dev/shm");
  if (!dir)
    return;
  std::vector<std::string> stale;
  time_t now = std::time(nullptr);
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    pid_t pid = creatorOf(name);
    struct stat st;
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH ||
        fstatat(dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        now - st.st_mtime < kStaleSeconds)
      continue;
    stale.push_back(name);
  }
  closedir(dir);
  for (const std::string &name : stale)
    shm_unlink(("/" + name).c_str());
}

/// One program on host threads, run for this process's rank.
class CpuKernel : public CommKernel {
public:
  /// A CPU launch runs before it returns: no stream queues it.
  bool queuesOnStream() const override { return false; }
  CpuKernel(std::unique_ptr<HostLdstKernel> kernel, const LdstProgram &p,
            const LdstCpuOptions &options)
      : kernel_(std::move(kernel)), ranks_(p.ranks), buffers_(p.buffers.size()),
        options_(options) {}
  bool launch(const KernelLaunch &launch, std::string &error) override {
    HostLdstKernel::RankPointers p;
    unsigned long long own[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (!pointers(launch, p, own, error))
      return false;
    int begin = launch.programRank;
    return kernel_->run(p, launch.chunkBytes, epoch_++, options_.timeoutNs,
                        options_.blocks, options_.threads, begin, begin + 1,
                        error) &&
           HostLdstKernel::readErrorRecord(p.errorRecord, error);
  }
  // Kernels built from one text run each other's launches.
  std::string groupKey() const override {
    return "cpu " + std::to_string(kernel_->textHash()) + " " +
           std::to_string(options_.blocks) + "x" +
           std::to_string(options_.threads) + " " +
           std::to_string(options_.timeoutNs);
  }
  int groupLimit() const override { return ranks_; }
  bool launchGroup(const std::vector<const KernelLaunch *> &launches,
                   bool &started, std::string &error) override {
    started = false;
    std::vector<HostLdstKernel::RankPointers> p(launches.size());
    std::vector<std::array<unsigned long long, 8>> own(launches.size());
    std::vector<const HostLdstKernel::RankPointers *> each;
    std::vector<int> ranks;
    for (size_t i = 0; i < launches.size(); ++i) {
      own[i].fill(0);
      if (!pointers(*launches[i], p[i], own[i].data(), error))
        return false;
      each.push_back(&p[i]);
      ranks.push_back(launches[i]->programRank);
    }
    started = true;
    if (!kernel_->runGroup(each, ranks, launches[0]->chunkBytes,
                           options_.timeoutNs, options_.blocks,
                           options_.threads, error))
      return false;
    // Each rank's record is its communicator's: the first failure found.
    for (const HostLdstKernel::RankPointers &one : p)
      if (!HostLdstKernel::readErrorRecord(one.errorRecord, error))
        return false;
    return true;
  }

private:
  /// `launch`'s table as the host kernel takes it; `own`: the record of
  /// a table without one.
  bool pointers(const KernelLaunch &launch, HostLdstKernel::RankPointers &p,
                unsigned long long *own, std::string &error) const {
    LaunchTable t;
    if (!LaunchTable::decode(launch.table, ranks_, buffers_, t, error))
      return false;
    int begin = launch.programRank;
    if (begin < 0 || begin >= ranks_) {
      error = "internal: a launch of program rank " + std::to_string(begin) +
              " in a " + std::to_string(ranks_) + "-rank program";
      return false;
    }
    p.buffers = t.buffers;
    p.flags = t.flags;
    p.sync = t.sync;
    p.epochs = t.epochs;
    p.arrive = t.arrive;
    p.errorRecord = t.error ? t.error : own;
    p.rowBytes = t.rowBytes;
    for (int i = 0; i < 4; ++i)
      p.counts[i] = t.counts[i];
    p.callTag = t.callTag;
    p.tags = t.tags;
    if (!t.ll.empty() && t.ll[0])
      p.ll = t.ll;
    p.llSeq = t.llSeq;
    p.llPairBytes = t.llPairBytes;
    return true;
  }

  std::unique_ptr<HostLdstKernel> kernel_;
  int ranks_;
  size_t buffers_;
  LdstCpuOptions options_;
  unsigned long long epoch_ = 0;
};

// Runs the point-to-point kernel's blocks on host threads, all at once.
const char *kP2pCpuEntry = R"SDMA(
static_assert(sizeof(SdmaP2pTable) == 8 * (SDMA_P2P_MAX_OPS * 8 + 6),
              "the table PointToPoint.cpp writes");
extern "C" int sdma_p2p_cpu(const unsigned long long *words, int blocks,
                            int threads) {
  SdmaP2pTable table;
  __builtin_memcpy(&table, words, sizeof(table));
  return sdma_host_launch(blocks, 1, threads, [&] { sdma_p2p(table); });
}
)SDMA";
using P2pRunFn = int (*)(const unsigned long long *, int, int);

/// The point-to-point kernel on host threads, run before launch() returns.
class CpuP2pKernel : public CommKernel {
public:
  /// A CPU launch runs before it returns: no stream queues it.
  bool queuesOnStream() const override { return false; }
  CpuP2pKernel(std::unique_ptr<HostKernel> kernel, P2pRunFn run, int threads)
      : kernel_(std::move(kernel)), run_(run), threads_(threads) {}
  bool launch(const KernelLaunch &launch, std::string &error) override {
    if (!checkP2pLaunch(launch, error))
      return false;
    if (int status = run_(
            reinterpret_cast<const unsigned long long *>(launch.table.data()),
            launch.blocks, threads_)) {
      error = "cannot start the point-to-point kernel's host threads: " +
              std::string(std::strerror(status));
      return false;
    }
    return true;
  }

private:
  std::unique_ptr<HostKernel> kernel_;
  P2pRunFn run_;
  int threads_;
};

class CpuDevice : public CommDevice {
public:
  CpuDevice(const UniqueId &id, int rank, const CommOptions &options)
      : rank_(rank), options_(options) {
    idHash_ = hashBytes(std::string(id.bytes, sizeof(id.bytes)));
  }
  ~CpuDevice() override {
    // A peer's segment whose exchange never finished belongs to a job that
    // failed: its name goes too, in case its creator died holding it.
    for (Mapping &m : mappings_) {
      if (m.linked || m.imported)
        shm_unlink(m.name.c_str());
      munmap(m.base, m.bytes);
    }
  }
  std::string name() const override { return "cpu"; }
  std::string identity() const override { return "cpu"; }

  bool allocate(size_t bytes, char *&ptr, std::string &error) override {
    char name[96];
    std::snprintf(name, sizeof(name), "/sdma-%016llx-%d-%d-%d",
                  (unsigned long long)idHash_, static_cast<int>(getpid()),
                  rank_, counter_++);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, bytes) != 0) {
      error = "rank " + std::to_string(rank_) +
              ": cannot create shared memory " + name + " (" +
              std::to_string(bytes) + " bytes): " + std::strerror(errno);
      if (fd >= 0)
        close(fd), shm_unlink(name);
      return false;
    }
    void *base =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
      error = std::string("cannot map ") + name + ": " + std::strerror(errno);
      shm_unlink(name);
      return false;
    }
    mappings_.push_back({name, static_cast<char *>(base), bytes, true, false});
    ptr = static_cast<char *>(base);
    return true;
  }

  bool copy(void *dst, const void *src, size_t bytes, void *,
            std::string &) override {
    std::memmove(dst, src, bytes);
    return true;
  }
  bool exportMemory(char *ptr, size_t bytes, std::string &blob,
                    std::string &error) override {
    for (const Mapping &m : mappings_)
      if (m.linked && ptr >= m.base && ptr + bytes <= m.base + m.bytes) {
        blob = m.name + '\n' + std::to_string(m.bytes) + '\n' +
               std::to_string(ptr - m.base);
        return true;
      }
    if (exportSegment(ptr, bytes, blob))
      return true;
    error = "the CPU device shares only memory from sdmaMemAlloc (the "
            "communicator's heap) or a mapping of a named sdma shared-memory "
            "segment (the NCCL drop-in's ncclMemAlloc): " +
            std::to_string(bytes) + " bytes at " + hex(ptr) + " are neither";
    return false;
  }

  /// The blob of [ptr, ptr + bytes) where it lies in one mapping of a
  /// still-named /dev/shm/sdma-* segment another part of this process
  /// made (the NCCL drop-in's ncclMemAlloc): found in /proc/self/maps.
  bool exportSegment(char *ptr, size_t bytes, std::string &blob) {
    std::ifstream maps("/proc/self/maps");
    auto p = reinterpret_cast<uintptr_t>(ptr);
    for (std::string line; std::getline(maps, line);) {
      unsigned long long start = 0, end = 0, offset = 0;
      char path[512] = {0};
      if (std::sscanf(line.c_str(), "%llx-%llx %*s %llx %*s %*s %511[^\n]",
                      &start, &end, &offset, path) != 4 ||
          p < start || p + bytes > end)
        continue;
      std::string file = path;
      struct stat st;
      if (file.rfind("/dev/shm/sdma-", 0) != 0 ||
          file.find(' ') != std::string::npos || // "(deleted)"
          stat(file.c_str(), &st) != 0)
        return false;
      std::string name = file.substr(8);
      blob = name + '\n' + std::to_string(st.st_size) + '\n' +
             std::to_string(offset + (p - start));
      foreign_[name] = reinterpret_cast<char *>(start - offset);
      return true;
    }
    return false;
  }

  bool importMemory(int peer, const std::string &blob, char *&ptr,
                    std::string &error) override {
    size_t a = blob.find('\n'), b = blob.rfind('\n');
    if (a == std::string::npos || a == b) {
      error = "rank " + std::to_string(peer) + " sent a malformed handle";
      return false;
    }
    std::string name = blob.substr(0, a);
    size_t bytes = std::strtoull(blob.c_str() + a + 1, nullptr, 10);
    size_t offset = std::strtoull(blob.c_str() + b + 1, nullptr, 10);
    if (name.rfind("/sdma-", 0) != 0 || offset > bytes) {
      error = "rank " + std::to_string(peer) + " sent a malformed handle";
      return false;
    }
    if (peer == rank_) {
      for (const Mapping &m : mappings_)
        if (m.name == name) {
          ptr = m.base + offset;
          return true;
        }
      if (auto it = foreign_.find(name); it != foreign_.end()) {
        ptr = it->second + offset;
        return true;
      }
    }
    // A segment mapped before (a window registered again) is mapped once.
    for (const Mapping &m : mappings_)
      if (m.name == name && !m.linked && m.bytes == bytes) {
        ptr = m.base + offset;
        return true;
      }
    int fd = shm_open(name.c_str(), O_RDWR, 0);
    void *base = fd < 0 ? MAP_FAILED
                        : mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                               MAP_SHARED, fd, 0);
    if (fd >= 0)
      close(fd);
    if (base == MAP_FAILED) {
      error = "rank " + std::to_string(rank_) + " cannot map rank " +
              std::to_string(peer) + "'s shared memory " + name + ": " +
              std::strerror(errno);
      return false;
    }
    mappings_.push_back({name, static_cast<char *>(base), bytes, false, true});
    ptr = static_cast<char *>(base) + offset;
    return true;
  }

  void importsDone() override {
    for (Mapping &m : mappings_) {
      if (m.linked) {
        shm_unlink(m.name.c_str());
        m.linked = false;
      }
      m.imported = false;
    }
  }

  unsigned long long *errorRecord() override { return record_; }
  uint64_t errorRecordDevice() override {
    return reinterpret_cast<uint64_t>(record_);
  }

  std::unique_ptr<CommKernel> load(const LdstProgram &program,
                                   std::string &error) override {
    LdstCpuOptions cpu;
    cpu.threads = options_.cpuThreads;
    cpu.blocks = 1;
    cpu.timeoutNs = options_.timeoutMs * 1000000ull;
    cpu.cacheDirectory = options_.cacheDirectory;
    // The CPU executor's limits (threads and blocks per rank, the flags'
    // budget), then its build: the text, and so the cached object, is the
    // same as an executor's with these options (sdma-cpu-job warms it so).
    if (!LdstCpuExecutor::checkRun(program, cpu, nullptr, 0, error))
      return nullptr;
    std::unique_ptr<HostLdstKernel> kernel =
        HostLdstKernel::build(program, cpu, error);
    if (!kernel)
      return nullptr;
    return std::make_unique<CpuKernel>(std::move(kernel), program, cpu);
  }

  std::unique_ptr<CommKernel> loadPointToPoint(std::string &error) override {
    std::unique_ptr<HostKernel> kernel = HostKernel::build(
        std::string(p2pKernelSource()) + kP2pCpuEntry, "",
        options_.cacheDirectory, "the point-to-point kernel", error);
    if (!kernel)
      return nullptr;
    std::string why;
    auto run = kernel->entry<P2pRunFn>("sdma_p2p_cpu", why);
    if (!run) {
      error = "loading the point-to-point kernel: " + why;
      return nullptr;
    }
    return std::make_unique<CpuP2pKernel>(std::move(kernel), run,
                                          options_.cpuThreads);
  }

  bool hasDmaPath() const override { return true; }
  bool dmaByCostModel(std::string &why) const override {
    why = "the cpu device's DMA engines are host threads, there to test the "
          "path";
    return false;
  }
  std::string dmaPacketTarget(std::string &why) const override {
    (void)why;
    return "gfx942";
  }
  std::unique_ptr<CommKernel> loadDma(std::shared_ptr<const DmaProgram> program,
                                      std::string &error) override {
    if (program->packets)
      return createCpuRingKernel(std::move(program), kCpuRingBytes, "",
                                 options_.cacheDirectory, error);
    return createCpuDmaKernel(std::move(program));
  }

private:
  int rank_;
  CommOptions options_;
  uint64_t idHash_ = 0;
  int counter_ = 0;
  std::vector<Mapping> mappings_;
  /// Segments this process mapped itself and exported (exportSegment):
  /// where their first byte is here.
  std::map<std::string, char *> foreign_;
  unsigned long long record_[kRecords * kRecordWords] = {};
};

} // namespace

std::unique_ptr<CommDevice>
sdma::rt::createCpuDevice(const UniqueId &id, int rank,
                          const CommOptions &options, std::string &error) {
  (void)error;
  removeStaleSegments();
  return std::make_unique<CpuDevice>(id, rank, options);
}
