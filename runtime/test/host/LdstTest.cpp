//===- LdstTest.cpp - load/store programs, the kernel cache, no-GPU paths -===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "compile/KernelCache.h"
#include "cuda/CudaCeExecutor.h"
#include "cuda/CudaLdstExecutor.h"
#include "sdma/runtime/LdstProgram.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace sdma::rt;

static const char *kProgram =
    "// sdma-ldst: {\"format\":\"sdma.ldst\",\"version\":2,\"schedule\":"
    "\"ag\",\"ranks\":2,\"entry\":\"sdma_ldst\",\"flag_slots\":2,"
    "\"op_stride\":12,\"buffers\":[{\"name\":\"in\",\"chunks\":1},{\"name\":"
    "\"out\",\"chunks\":2}],\"collective\":{\"kind\":\"all_gather\","
    "\"input\":\"in\",\"output\":\"out\"},\"phases_per_rank\":[1,1]}\n"
    "// kernel source follows\n";

TEST(LdstProgram, ReadsItsMetadata) {
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::parse(kProgram, error);
  ASSERT_TRUE(program) << error;
  EXPECT_EQ(program->schedule, "ag");
  EXPECT_EQ(program->entry, "sdma_ldst");
  EXPECT_EQ(program->ranks, 2);
  EXPECT_EQ(program->flagSlots, 2);
  ASSERT_EQ(program->buffers.size(), 2u);
  EXPECT_EQ(program->buffers[1].chunks, 2);
  ASSERT_TRUE(program->collective);
  EXPECT_EQ(program->collective->output, 1);
  Plan layout = program->layout();
  EXPECT_EQ(layout.ranks, 2);
  EXPECT_EQ(layout.findBuffer("out"), 1);
}

// The low-latency words end a kernel's table only where its header says
// the kernel has them: a header that disagrees with its source is refused
// (a launch would pass a table of the wrong size).
TEST(LdstProgram, LowLatencyHeaderMatchesItsKernel) {
  std::string error;
  std::string header = kProgram;
  header.insert(header.find("}\n"), ",\"low_latency\":{\"pair_chunks\":1}");
  std::optional<LdstProgram> both =
      LdstProgram::parse(header + "#define SDMA_LL 1\n", error);
  ASSERT_TRUE(both) << error;
  EXPECT_EQ(both->lowLatencyPairChunks, 1);
  std::optional<LdstProgram> plain = LdstProgram::parse(kProgram, error);
  ASSERT_TRUE(plain) << error;
  EXPECT_EQ(plain->lowLatencyPairChunks, -1);
  EXPECT_FALSE(LdstProgram::parse(header, error));
  EXPECT_EQ(error, "load/store program metadata: $.low_latency is set but the "
                   "kernel has no SDMA_LL tables");
  EXPECT_FALSE(
      LdstProgram::parse(std::string(kProgram) + "#define SDMA_LL 1\n", error));
  EXPECT_EQ(error, "load/store program metadata: $.low_latency is missing but "
                   "the kernel has SDMA_LL tables");
  std::string negative = header;
  negative.replace(negative.find("\"pair_chunks\":1"), 15,
                   "\"pair_chunks\":-1");
  EXPECT_FALSE(LdstProgram::parse(negative + "#define SDMA_LL 1\n", error));
  EXPECT_NE(error.find("$.low_latency.pair_chunks"), std::string::npos)
      << error;
}

TEST(LdstProgram, RejectsWhatIsNotOne) {
  std::string error;
  EXPECT_FALSE(LdstProgram::parse("__global__ void k() {}", error));
  EXPECT_EQ(error,
            "not an sdma load/store program (no '// sdma-ldst:' first line)");
  EXPECT_FALSE(LdstProgram::parse("// sdma-ldst: {broken\n", error));
  EXPECT_EQ(error, "load/store program metadata is not valid JSON");
  std::string newer = kProgram;
  newer.replace(newer.find("\"version\":2"), 11, "\"version\":9");
  EXPECT_FALSE(LdstProgram::parse(newer, error));
  EXPECT_EQ(error, "invalid load/store program metadata: $.version: load/store "
                   "program version 9 but this runtime reads version 2: "
                   "recompile the schedule with a matching sdma");
  // Version 1 (before the call tag) is refused the same way.
  std::string older = kProgram;
  older.replace(older.find("\"version\":2"), 11, "\"version\":1");
  EXPECT_FALSE(LdstProgram::parse(older, error));
  EXPECT_NE(error.find("program version 1 but this runtime reads version 2"),
            std::string::npos)
      << error;
  std::string noRanks = kProgram;
  noRanks.replace(noRanks.find("\"ranks\":2"), 9, "\"ranks\":0");
  EXPECT_FALSE(LdstProgram::parse(noRanks, error));
  EXPECT_EQ(error, "invalid load/store program metadata: $.ranks: value 0 is "
                   "out of range [1, 65536]");
  // The header is read as a plan is: every field typed, with its path.
  std::string badSlots = kProgram;
  badSlots.replace(badSlots.find("\"flag_slots\":2"), 14,
                   "\"flag_slots\":\"2\"");
  EXPECT_FALSE(LdstProgram::parse(badSlots, error));
  EXPECT_EQ(error, "invalid load/store program metadata: $.flag_slots: "
                   "expected an integer");
  std::string hugeSlots = kProgram;
  hugeSlots.replace(hugeSlots.find("\"flag_slots\":2"), 14,
                    "\"flag_slots\":2000000000");
  EXPECT_FALSE(LdstProgram::parse(hugeSlots, error));
  EXPECT_EQ(error, "invalid load/store program metadata: $.flag_slots: value "
                   "2000000000 is out of range [1, 1048576]");
  std::string badEntry = kProgram;
  badEntry.replace(badEntry.find("\"sdma_ldst\""), 11, "\"x(); y\"");
  EXPECT_FALSE(LdstProgram::parse(badEntry, error));
  EXPECT_EQ(error, "invalid load/store program metadata: $.entry: \"x(); y\" "
                   "is not a C identifier");
  EXPECT_FALSE(LdstProgram::load("/nonexistent.hip", error));
  EXPECT_EQ(error, "/nonexistent.hip: cannot open load/store program");
}

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/sdma-cache-XXXXXX";
    ASSERT_TRUE(mkdtemp(pattern));
    directory = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf " + directory;
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  std::string directory;
};

TEST_F(KernelCacheTest, StoresAndFindsByKey) {
  KernelCache cache(directory);
  ASSERT_TRUE(cache.enabled());
  uint64_t key = KernelCache::key("source", "-O3", "sm_90", "driver 13000");
  EXPECT_NE(key, KernelCache::key("source", "-O3", "sm_80", "driver 13000"));
  EXPECT_NE(key, KernelCache::key("source", "-O3", "sm_90", "driver 12080"));
  EXPECT_NE(key, KernelCache::key("source2", "-O3", "sm_90", "driver 13000"));
  std::string binary;
  EXPECT_EQ(cache.get(key, binary), KernelCache::Lookup::Miss);
  std::string cubin("\x7f"
                    "ELF binary\0with nul",
                    20);
  ASSERT_TRUE(cache.put(key, cubin));
  EXPECT_EQ(cache.get(key, binary), KernelCache::Lookup::Hit);
  EXPECT_EQ(binary, cubin);
}

TEST_F(KernelCacheTest, DetectsCorruptAndTruncatedEntries) {
  KernelCache cache(directory);
  uint64_t key = KernelCache::key("s", "", "sm_90", "");
  ASSERT_TRUE(cache.put(key, std::string(1000, 'k')));
  std::string binary;
  {
    // Flip one byte of the payload.
    std::fstream file(cache.path(key),
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(500);
    file.put('x');
  }
  EXPECT_EQ(cache.get(key, binary), KernelCache::Lookup::Corrupt);
  ASSERT_TRUE(cache.put(key, std::string(1000, 'k'))); // rebuilt
  EXPECT_EQ(cache.get(key, binary), KernelCache::Lookup::Hit);
  ASSERT_EQ(truncate(cache.path(key).c_str(), 100), 0);
  EXPECT_EQ(cache.get(key, binary), KernelCache::Lookup::Corrupt);
  {
    std::ofstream file(cache.path(key), std::ios::binary | std::ios::trunc);
    file << "garbage";
  }
  EXPECT_EQ(cache.get(key, binary), KernelCache::Lookup::Corrupt);
}

TEST(CudaLdstExecutor, SaysNoGpuCleanly) {
  setenv("SDMA_FORCE_NO_GPU", "1", 1);
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::parse(kProgram, error);
  ASSERT_TRUE(program);
  EXPECT_FALSE(CudaLdstExecutor::create(*program, {}, error));
  EXPECT_EQ(error.rfind("no GPU: ", 0), 0u) << error;
}

TEST(CudaCeExecutor, SaysNoGpuCleanly) {
  setenv("SDMA_FORCE_NO_GPU", "1", 1);
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::parse(kProgram, error);
  ASSERT_TRUE(program);
  EXPECT_FALSE(CudaCeExecutor::create(program->layout(), {}, error));
  EXPECT_EQ(error.rfind("no GPU: ", 0), 0u) << error;
}

static const char *kReduceProgram =
    R"(// sdma-ldst: {"format":"sdma.ldst","version":2,"schedule":"ar","ranks":3,"entry":"sdma_ldst","flag_slots":1,"op_stride":12,"buffers":[{"name":"input","chunks":1,"type":"f32"},{"name":"output","chunks":1,"type":"f32"}],"collective":{"kind":"all_reduce","input":"input","output":"output","op":"sum"},"phases_per_rank":[1,0,0]}
#define SDMA_OP_STRIDE 12
static __constant__ const long long sdma_ops[] = {
    4, 0, 1, 0, 1, 0, 0, 0, 2, 0, 0, 0,};
static __constant__ const long long sdma_rsrc[] = {
    1, 0, 0, 2, 0, 0,};
static __constant__ const int sdma_steps[] = {
    0, 0, 1,};
static __constant__ const int sdma_rank_begin[] = {
    0, 1, 1, 1,};
)";

// A reduce row names its destination and, through sdma_rsrc, its sources:
// a launch needs exactly those buffers (the row's operator and type fields
// are not a rank and a buffer).
TEST(LdstProgram, TouchedFollowsReduceSources) {
  const char *source = kReduceProgram;
  std::string error;
  std::optional<LdstProgram> program = LdstProgram::parse(source, error);
  ASSERT_TRUE(program) << error;
  using Pairs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(program->touched(0), (Pairs{{0, 1}, {1, 0}, {2, 0}}));
  EXPECT_EQ(program->touched(1), Pairs{});
}

// all_to_allv_packed at 2 ranks, its offsets forwarded (sdma-translate's
// tables): rank 1's copyv into rank 0 reads its offset from rank 0's
// send_counts (sdma_fwd), a table it neither copies from nor into, so a
// launch must map it; rank 0 reads no entry before its own.
static const char *kForwardedProgram =
    R"(// sdma-ldst: {"format":"sdma.ldst","version":2,"schedule":"all_to_allv_packed","ranks":2,"entry":"sdma_ldst","flag_slots":1,"op_stride":12,"kernel":"table","buffers":[{"name":"input","chunks":2},{"name":"output","chunks":2},{"name":"send_counts","chunks":2,"counts":true},{"name":"recv_counts","chunks":2,"counts":true}],"collective":{"kind":"all_to_allv_packed","input":"input","output":"output","send_counts":"send_counts","recv_counts":"recv_counts"},"phases_per_rank":[1,1]}
#define SDMA_OP_STRIDE 12
#define SDMA_VOP_STRIDE 10
static __constant__ const long long sdma_ops[] = {
    0, 0, 2, 0, 1, 0, 3, 0, 0, 0, 0, 8,
    0, 0, 2, 1, 1, 1, 3, 0, 0, 0, 0, 8,
    3, 0, 0, 0, 1, 0, 1, 0, 0, 2, 0, 0,
    3, 0, 0, 0, 1, 1, 1, 0, 0, 2, 1, 1,
    0, 1, 2, 0, 1, 0, 3, 1, 0, 0, 0, 8,
    0, 1, 2, 1, 1, 1, 3, 1, 0, 0, 0, 8,
    3, 1, 0, 0, 1, 0, 1, 0, 1, 2, 0, 2,
    3, 1, 0, 0, 1, 1, 1, 0, 1, 2, 1, 3,};
static __constant__ const long long sdma_vops[] = {
    2, 0, 0, 0, 0, 3, 0, 0, 4, 3, 2, 0,
    1, 0, 0, 3, 1, 0, 4, 4, 2, 1, 0, 0,
    3, 3, 0, 1, 4, 0, 2, 1, 1, 0, 3, 3,
    1, 1, 4, 6,};
static __constant__ const long long sdma_fwd[] = {
    8589934592, 8589934593,};
static __constant__ const int sdma_steps[] = {
    0, 0, 4, 0, 4, 4,};
static __constant__ const int sdma_rank_begin[] = {
    0, 1, 2,};
)";

TEST(LdstProgram, TouchedFollowsForwardedCounts) {
  std::string error;
  std::optional<LdstProgram> program =
      LdstProgram::parse(kForwardedProgram, error);
  ASSERT_TRUE(program) << error;
  using Pairs = std::vector<std::pair<int, int>>;
  Pairs one = program->touched(1);
  EXPECT_NE(std::find(one.begin(), one.end(), std::pair<int, int>(0, 2)),
            one.end());
  Pairs zero = program->touched(0);
  EXPECT_EQ(std::count_if(
                zero.begin(), zero.end(),
                [](const auto &p) { return p.first == 1 && p.second == 2; }),
            0);
}

TEST(LdstProgram, SetsAReductionsTypeAndOperator) {
  std::string error;
  std::optional<LdstProgram> copyOnly = LdstProgram::parse(kProgram, error);
  ASSERT_TRUE(copyOnly) << error;
  EXPECT_FALSE(copyOnly->setReduction("bf16", "max", error));
  EXPECT_EQ(error, "ag does not reduce: it has no element type or operator "
                   "to set");
  std::optional<LdstProgram> reduce = LdstProgram::parse(
      std::string(kReduceProgram) + "#ifndef SDMA_REDUCE_TYPE\n#define "
                                    "SDMA_REDUCE_TYPE 0\n#endif\n",
      error);
  ASSERT_TRUE(reduce) << error;
  EXPECT_FALSE(reduce->setReduction("f80", "sum", error));
  EXPECT_EQ(error, "cannot reduce f80 with sum (types: f16, bf16, f32, f64, "
                   "i8, ui8, i32, ui32, i64, ui64; operators: sum, prod, "
                   "max, min, avg, premulsum, premulsum_device)");
  // avg divides what a reduce row stores: only schedules that store each
  // reduced element once take it, with the rank count as the divisor.
  std::optional<LdstProgram> averaged = reduce;
  EXPECT_FALSE(averaged->setReduction("f32", "avg", error));
  EXPECT_NE(error.find("avg needs a schedule that reduces each element once"),
            std::string::npos)
      << error;
  averaged->schedule = "all_reduce_one_shot";
  ASSERT_TRUE(averaged->setReduction("f32", "avg", error)) << error;
  EXPECT_EQ(averaged->source.rfind(
                "#define SDMA_REDUCE_TYPE 0\n#define SDMA_REDUCE_OP 4\n"
                "#define SDMA_AVG_DIVISOR " +
                    std::to_string(averaged->ranks) + "\n",
                0),
            0u);
  // A node part of a larger job (a hierarchical schedule's, whose reduce
  // rows the caller vouches for): avg divides by the job's ranks;
  // premulsum sets its operator alone.
  std::optional<LdstProgram> part = reduce;
  ASSERT_TRUE(part->setReduction("i32", "avg", error, 6)) << error;
  EXPECT_EQ(part->source.rfind("#define SDMA_REDUCE_TYPE 3\n#define "
                               "SDMA_REDUCE_OP 4\n#define SDMA_AVG_DIVISOR 6\n",
                               0),
            0u);
  part = reduce;
  ASSERT_TRUE(part->setReduction("f32", "premulsum", error, 6)) << error;
  EXPECT_EQ(part->source.rfind(
                "#define SDMA_REDUCE_TYPE 0\n#define SDMA_REDUCE_OP 5\n", 0),
            0u);
  EXPECT_EQ(part->source.find("SDMA_AVG_DIVISOR"), std::string::npos);
  // premulsum multiplies every operand by its rank's scalar, which each
  // launch passes: the same schedules as avg, nothing else set.
  std::optional<LdstProgram> scaled = reduce;
  EXPECT_FALSE(scaled->setReduction("f32", "premulsum", error));
  EXPECT_NE(
      error.find("premulsum needs a schedule that reduces each element once"),
      std::string::npos)
      << error;
  scaled->schedule = "reduce_scatter_direct";
  ASSERT_TRUE(scaled->setReduction("i8", "premulsum", error)) << error;
  EXPECT_EQ(scaled->source.rfind(
                "#define SDMA_REDUCE_TYPE 8\n#define SDMA_REDUCE_OP 5\n", 0),
            0u);
  EXPECT_EQ(scaled->source.find("SDMA_PREMUL"), std::string::npos);
  EXPECT_EQ(scaled->collective->op, "premulsum");
  ASSERT_TRUE(reduce->setReduction("bf16", "max", error)) << error;
  EXPECT_EQ(reduce->source.rfind(
                "#define SDMA_REDUCE_TYPE 2\n#define SDMA_REDUCE_OP 1\n", 0),
            0u);
  EXPECT_EQ(reduce->buffers[0].type, "bf16");
  EXPECT_EQ(reduce->buffers[1].type, "bf16");
  EXPECT_EQ(reduce->collective->op, "max");
}
