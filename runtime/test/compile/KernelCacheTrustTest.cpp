//===- KernelCacheTrustTest.cpp - the kernel cache under attack -----------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Directories others can write, or that are not this user's, or symbolic
// links, are refused; entries that are symbolic links, FIFOs, truncated or
// corrupted are removed and rebuilt, never used; a host object planted in the
// cache is never dlopen'ed (its constructor would write a marker file).
//
//===----------------------------------------------------------------------===//

#include "compile/KernelCache.h"
#include "host/HostKernel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

using namespace sdma::rt;

namespace {

class KernelCacheTrust : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/sdma-trust-XXXXXX";
    ASSERT_TRUE(mkdtemp(pattern));
    root = pattern;
  }
  void TearDown() override {
    chmod(root.c_str(), 0700);
    std::string command =
        "chmod -R u+rwx " + root + " 2>/dev/null; rm -rf " + root;
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  std::string subdirectory(const std::string &name, mode_t mode) {
    std::string path = root + "/" + name;
    EXPECT_EQ(mkdir(path.c_str(), 0700), 0);
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }
  static std::string readAll(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void writeAll(const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  static bool exists(const std::string &path) {
    struct stat info;
    return lstat(path.c_str(), &info) == 0;
  }
  /// The one host object in `directory` ("" if none or several).
  static std::string hostObject(const std::string &directory) {
    std::string found;
    int count = 0;
    DIR *dir = opendir(directory.c_str());
    while (dirent *entry = dir ? readdir(dir) : nullptr) {
      std::string name = entry->d_name;
      if (name.rfind("host-", 0) == 0 && name.size() > 3 &&
          name.compare(name.size() - 3, 3, ".so") == 0) {
        found = directory + "/" + name;
        ++count;
      }
    }
    if (dir)
      closedir(dir);
    return count == 1 ? found : "";
  }

  std::string root;
};

TEST_F(KernelCacheTrust, CreatesPrivateDirectories) {
  std::string path = root + "/a/b/c";
  KernelCache cache(path);
  ASSERT_TRUE(cache.enabled()) << cache.refusal();
  EXPECT_EQ(cache.refusal(), "");
  for (const std::string &p : {root + "/a", root + "/a/b", path}) {
    struct stat info;
    ASSERT_EQ(lstat(p.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0700u) << p;
  }
  ASSERT_TRUE(cache.put(1, "payload"));
  struct stat info;
  ASSERT_EQ(lstat(cache.path(1).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0600u);
  // Nothing left behind but the entry.
  int files = 0;
  DIR *dir = opendir(path.c_str());
  while (dirent *entry = readdir(dir))
    files += entry->d_name[0] != '.';
  closedir(dir);
  EXPECT_EQ(files, 1);
}

TEST_F(KernelCacheTrust, RefusesWorldWritableDirectory) {
  std::string path = subdirectory("open", 0777);
  KernelCache cache(path);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.refusal().find("'" + path +
                                 "' is writable by group or "
                                 "others (mode 0777)"),
            std::string::npos)
      << cache.refusal();
  EXPECT_NE(cache.refusal().find("compiling every time"), std::string::npos);
  std::string binary;
  EXPECT_EQ(cache.get(1, binary), KernelCache::Lookup::Miss);
  EXPECT_FALSE(cache.put(1, "x"));
  EXPECT_FALSE(exists(path + "/0000000000000001.bin"));
}

TEST_F(KernelCacheTrust, RefusesGroupWritableDirectory) {
  std::string path = subdirectory("group", 0770);
  KernelCache cache(path);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.refusal().find("(mode 0770)"), std::string::npos)
      << cache.refusal();
}

TEST_F(KernelCacheTrust, RefusesDirectoryUnderWritableParent) {
  std::string open = subdirectory("open", 0777);
  KernelCache cache(open + "/mine");
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.refusal().find("its parent '" + open +
                                 "' is writable by group or others and "
                                 "not sticky"),
            std::string::npos)
      << cache.refusal();
  // Sticky, as /tmp is: others cannot rename what is not theirs.
  ASSERT_EQ(chmod(open.c_str(), 01777), 0);
  KernelCache sticky(open + "/mine");
  EXPECT_TRUE(sticky.enabled()) << sticky.refusal();
}

TEST_F(KernelCacheTrust, RefusesAnotherUsersDirectory) {
  std::string path = subdirectory("theirs", 0755);
  if (geteuid() != 0)
    GTEST_SKIP() << "giving a directory away needs root";
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  KernelCache cache(path);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.refusal().find("is owned by uid 65534, not by this user"),
            std::string::npos)
      << cache.refusal();
}

TEST_F(KernelCacheTrust, RefusesSymlinkedDirectory) {
  std::string real = subdirectory("real", 0700);
  std::string link = root + "/link";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  KernelCache cache(link);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.refusal().find("'" + link + "' is a symbolic link"),
            std::string::npos)
      << cache.refusal();
  // A file in the directory's place.
  writeAll(root + "/file", "x");
  EXPECT_FALSE(KernelCache(root + "/file").enabled());
}

TEST_F(KernelCacheTrust, SymlinkEntryIsRemovedNotFollowed) {
  std::string other = subdirectory("other", 0700);
  KernelCache elsewhere(other), cache(subdirectory("cache", 0700));
  ASSERT_TRUE(elsewhere.put(7, "the other payload"));
  ASSERT_EQ(symlink(elsewhere.path(7).c_str(), cache.path(7).c_str()), 0);
  std::string binary, problem;
  EXPECT_EQ(cache.get(7, binary, &problem), KernelCache::Lookup::Corrupt);
  EXPECT_NE(problem.find("a symbolic link"), std::string::npos) << problem;
  EXPECT_EQ(binary, "");
  EXPECT_FALSE(exists(cache.path(7))); // the link: gone
  EXPECT_EQ(elsewhere.get(7, binary), KernelCache::Lookup::Hit); // its target
  ASSERT_TRUE(cache.put(7, "rebuilt"));
  EXPECT_EQ(cache.get(7, binary), KernelCache::Lookup::Hit);
  EXPECT_EQ(binary, "rebuilt");
}

TEST_F(KernelCacheTrust, FifoEntryDoesNotHang) {
  KernelCache cache(subdirectory("cache", 0700));
  ASSERT_EQ(mkfifo(cache.path(3).c_str(), 0600), 0);
  std::string binary, problem;
  EXPECT_EQ(cache.get(3, binary, &problem), KernelCache::Lookup::Corrupt);
  EXPECT_NE(problem.find("not a regular file"), std::string::npos) << problem;
  EXPECT_FALSE(exists(cache.path(3)));
}

TEST_F(KernelCacheTrust, OthersWritableEntryIsRefused) {
  KernelCache cache(subdirectory("cache", 0700));
  ASSERT_TRUE(cache.put(4, "payload"));
  ASSERT_EQ(chmod(cache.path(4).c_str(), 0666), 0);
  std::string binary, problem;
  EXPECT_EQ(cache.get(4, binary, &problem), KernelCache::Lookup::Corrupt);
  EXPECT_NE(problem.find("writable by group or others"), std::string::npos);
}

TEST_F(KernelCacheTrust, TruncatedAndCorruptedEntriesAreRemovedAndRebuilt) {
  KernelCache cache(subdirectory("cache", 0700));
  const std::string payload(4096, 'k');
  std::string binary;
  for (size_t keep : {size_t(0), size_t(5), size_t(24), size_t(2000)}) {
    ASSERT_TRUE(cache.put(9, payload));
    ASSERT_EQ(truncate(cache.path(9).c_str(), off_t(keep)), 0);
    EXPECT_EQ(cache.get(9, binary), KernelCache::Lookup::Corrupt) << keep;
    EXPECT_FALSE(exists(cache.path(9))) << keep;
    EXPECT_EQ(cache.get(9, binary), KernelCache::Lookup::Miss) << keep;
  }
  ASSERT_TRUE(cache.put(9, payload));
  std::string bytes = readAll(cache.path(9));
  bytes[bytes.size() - 1] ^= 1; // the payload's last byte
  writeAll(cache.path(9), bytes);
  std::string problem;
  EXPECT_EQ(cache.get(9, binary, &problem), KernelCache::Lookup::Corrupt);
  EXPECT_NE(problem.find("checksum mismatch"), std::string::npos) << problem;
  EXPECT_FALSE(exists(cache.path(9)));
  ASSERT_TRUE(cache.put(9, payload));
  EXPECT_EQ(cache.get(9, binary), KernelCache::Lookup::Hit);
  EXPECT_EQ(binary, payload);
}

TEST_F(KernelCacheTrust, ObjectTrailerIsVerified) {
  KernelCache cache(subdirectory("cache", 0700));
  EXPECT_EQ(cache.verifyObject(5), KernelCache::Lookup::Miss);
  const std::string object(10000, 'o');
  ASSERT_TRUE(cache.putObject(5, object));
  EXPECT_EQ(cache.verifyObject(5), KernelCache::Lookup::Hit);
  // The object comes first, unchanged: the loader maps it from the file.
  EXPECT_EQ(readAll(cache.objectPath(5)).substr(0, object.size()), object);
  // Valid under another key's name: not this key's object.
  ASSERT_EQ(rename(cache.objectPath(5).c_str(), cache.objectPath(6).c_str()),
            0);
  EXPECT_EQ(cache.verifyObject(6), KernelCache::Lookup::Corrupt);
  EXPECT_FALSE(exists(cache.objectPath(6)));
  ASSERT_TRUE(cache.putObject(5, object));
  ASSERT_EQ(truncate(cache.objectPath(5).c_str(), 5000), 0);
  EXPECT_EQ(cache.verifyObject(5), KernelCache::Lookup::Corrupt);
  EXPECT_FALSE(exists(cache.objectPath(5)));
}

/// Host kernels: what the cache holds is dlopen'ed, so nothing planted in
/// it may reach the loader.
class HostObjectTrust : public KernelCacheTrust {
protected:
  // Each test's own cache directory, whatever the shell says.
  void SetUp() override {
    KernelCacheTrust::SetUp();
    unsetenv("SDMA_HOST_OBJECT_DIR");
  }

  static constexpr const char *kText =
      "extern \"C\" int sdma_trust_answer() { return 42; }\n";

  /// Builds kText through `cache`; the answer, or -1.
  int buildAndCall(const std::string &cache) {
    std::string error;
    std::unique_ptr<HostKernel> kernel =
        HostKernel::build(kText, "", cache, "the trust test's kernel", error);
    EXPECT_TRUE(kernel) << error;
    if (!kernel)
      return -1;
    auto answer = kernel->entry<int (*)()>("sdma_trust_answer", error);
    EXPECT_TRUE(answer) << error;
    return answer ? answer() : -1;
  }
  /// A shared object whose constructor creates `marker`.
  std::string plantedObject(const std::string &marker) {
    std::string source = root + "/planted.cpp", object = root + "/planted.so";
    writeAll(source, "#include <fcntl.h>\n#include <unistd.h>\n"
                     "__attribute__((constructor)) static void planted() {\n"
                     "  close(open(\"" +
                         marker +
                         "\", O_CREAT | O_WRONLY, 0600));\n}\n"
                         "extern \"C\" int sdma_trust_answer() { return 666; "
                         "}\n");
    const char *env = std::getenv("SDMA_HOST_CXX");
    std::string command = std::string(env && *env ? env : "c++") +
                          " -shared -fPIC -o " + object + " " + source;
    EXPECT_EQ(std::system(command.c_str()), 0);
    return readAll(object);
  }
  static uint64_t keyOf(const std::string &objectPath) {
    std::string name = objectPath.substr(objectPath.rfind("/host-") + 6);
    return std::strtoull(name.c_str(), nullptr, 16);
  }
};

TEST_F(HostObjectTrust, PlantedObjectWithoutRecordIsNotLoaded) {
  std::string cache = subdirectory("cache", 0700);
  ASSERT_EQ(buildAndCall(cache), 42);
  std::string entry = hostObject(cache);
  ASSERT_NE(entry, "");
  std::string marker = root + "/marker";
  // A bare object under the entry's name, as an older cache (or an
  // attacker) left it: no trailer.
  writeAll(entry, plantedObject(marker));
  ASSERT_FALSE(exists(marker));
  EXPECT_EQ(buildAndCall(cache), 42);
  EXPECT_FALSE(exists(marker)) << "the planted object's constructor ran";
  // Rebuilt: valid again.
  EXPECT_EQ(KernelCache(cache).verifyObject(keyOf(entry)),
            KernelCache::Lookup::Hit);
}

TEST_F(HostObjectTrust, ValidRecordInUntrustedDirectoryIsNotLoaded) {
  std::string cache = subdirectory("cache", 0700);
  ASSERT_EQ(buildAndCall(cache), 42);
  std::string entry = hostObject(cache);
  ASSERT_NE(entry, "");
  std::string marker = root + "/marker";
  // An object with a valid trailer: only the directory's modes stand
  // between it and the loader.
  ASSERT_TRUE(
      KernelCache(cache).putObject(keyOf(entry), plantedObject(marker)));
  ASSERT_EQ(chmod(cache.c_str(), 0777), 0);
  EXPECT_EQ(buildAndCall(cache), 42);
  EXPECT_FALSE(exists(marker)) << "loaded from a world-writable directory";
  std::string link = root + "/link";
  ASSERT_EQ(chmod(cache.c_str(), 0700), 0);
  ASSERT_EQ(symlink(cache.c_str(), link.c_str()), 0);
  EXPECT_EQ(buildAndCall(link), 42);
  EXPECT_FALSE(exists(marker)) << "loaded through a symbolic link";
  // The control: from the trusted directory the record is honoured (the
  // test above would pass vacuously if it were not).
  EXPECT_EQ(buildAndCall(cache), 666);
  EXPECT_TRUE(exists(marker));
}

TEST_F(HostObjectTrust, TruncatedAndCorruptedObjectsAreRebuilt) {
  std::string cache = subdirectory("cache", 0700);
  ASSERT_EQ(buildAndCall(cache), 42);
  std::string entry = hostObject(cache);
  ASSERT_NE(entry, "");
  std::string good = readAll(entry);
  // Truncated: dlopen'ing it would map past the end of the file (SIGBUS).
  ASSERT_EQ(truncate(entry.c_str(), off_t(good.size() / 2)), 0);
  EXPECT_EQ(buildAndCall(cache), 42);
  EXPECT_EQ(KernelCache(cache).verifyObject(keyOf(entry)),
            KernelCache::Lookup::Hit);
  std::string bytes = readAll(entry);
  bytes[bytes.size() / 2] ^= 0x40;
  writeAll(entry, bytes);
  EXPECT_EQ(buildAndCall(cache), 42);
  EXPECT_EQ(KernelCache(cache).verifyObject(keyOf(entry)),
            KernelCache::Lookup::Hit);
  // A valid entry is used as it is (no rebuild: same file).
  struct stat before, after;
  ASSERT_EQ(stat(entry.c_str(), &before), 0);
  EXPECT_EQ(buildAndCall(cache), 42);
  ASSERT_EQ(stat(entry.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
}

} // namespace
