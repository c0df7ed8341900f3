//===- CommReduce.cpp - sdma-comm-test's reduction cases ------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdmaAllReduce, sdmaReduceScatter and sdmaReduce against their definition:
// every rank derives every rank's input from (rank, element), so each
// computes the exact result itself (small integers, exact in every type,
// products of +-1 and +-2 that wrap in the 8-bit types as the kernel's
// must) and checks every byte of its buffers, including the bytes past the
// end and the buffers a call must leave alone. Every element type, each
// with one operator (the five take turns), every schedule the
// communicator picks: one-shot, two-shot and in place (staged) all-reduce,
// reduce-scatter in and out of place, reduce at every root in and out of
// place; and PreMulSum (sdmaRedOpCreatePreMulSum) in every type.
//
//===----------------------------------------------------------------------===//

#include "comm/CommTest.h"

#include "sdma/runtime/HostMemory.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace sdma::commtest;

namespace {

struct TypeCase {
  sdmaDataType_t type;
  const char *name; // the dialect's, for encodeElement
  size_t bytes;
};
const TypeCase kTypes[] = {
    {sdmaFloat32, "f32", 4}, {sdmaBfloat16, "bf16", 2}, {sdmaFloat16, "f16", 2},
    {sdmaInt32, "i32", 4},   {sdmaUint8, "ui8", 1},     {sdmaFloat64, "f64", 8},
    {sdmaInt64, "i64", 8},   {sdmaInt8, "i8", 1},       {sdmaUint32, "ui32", 4},
    {sdmaUint64, "ui64", 8},
};
const char *kOpNames[] = {"sum", "prod", "max", "min", "avg"};

bool isUnsigned(const TypeCase &t) { return t.name[0] == 'u'; }
bool isFloat(const TypeCase &t) { return t.name[0] == 'f' || t.name[0] == 'b'; }

int64_t value(const TypeCase &t, sdmaRedOp_t op, int R, int r, size_t i);

/// avg of floating types: the last rank's value makes every element's sum
/// a multiple of R, so the average is an exact integer in every type.
int64_t avgValue(const TypeCase &t, int R, int r, size_t i) {
  int64_t v = value(t, sdmaSum, R, r, i);
  if (r != R - 1 || !isFloat(t))
    return v;
  int64_t sum = 0;
  for (int q = 0; q < R; ++q)
    sum += value(t, sdmaSum, R, q, i);
  return v - ((sum % R) + R) % R;
}

/// Rank r's element i: products of +-1/+-2 (1/2 unsigned); otherwise
/// integers small enough that every partial result is exact in bf16.
int64_t value(const TypeCase &t, sdmaRedOp_t op, int R, int r, size_t i) {
  if (op == sdmaAvg)
    return avgValue(t, R, r, i);
  uint64_t x =
      (uint64_t(r) * 0x9E3779B97F4A7C15ull) ^ (i * 0xD6E8FEB86659FD93ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  if (op == sdmaProd) {
    static const int64_t values[4] = {-2, -1, 1, 2};
    return isUnsigned(t) ? 1 + int64_t(x & 1) : values[x & 3];
  }
  int64_t a = std::max<int64_t>(1, std::min<int64_t>(8, 256 / R));
  int64_t v = int64_t(x % uint64_t(2 * a + 1)) - a;
  return isUnsigned(t) ? v + a : v;
}

/// The exact result of `op` over the ranks' element i, wrapped to the
/// type's width (floats hold it exactly); with `scale` (a PreMulSum's
/// scalar, an operator sdmaRedOpCreatePreMulSum made), the sum times it.
int64_t reduced(const TypeCase &t, sdmaRedOp_t op, int R, size_t i,
                int64_t scale = 0) {
  if (op >= sdmaNumOps) {
    uint64_t sum = 0;
    for (int r = 0; r < R; ++r)
      sum += uint64_t(value(t, op, R, r, i));
    return int64_t(sum * uint64_t(scale)); // two's complement wrap
  }
  if (op == sdmaAvg) {
    // The sum wrapped to the type's width (as integers wrap), then one
    // division truncating toward zero.
    int64_t sum = 0;
    for (int r = 0; r < R; ++r)
      sum += value(t, op, R, r, i);
    if (!isFloat(t) && t.bytes < 8) {
      int bits = int(t.bytes) * 8;
      uint64_t low = uint64_t(sum) & ((uint64_t(1) << bits) - 1);
      sum = !isUnsigned(t) && (low >> (bits - 1))
                ? int64_t(low) - (int64_t(1) << bits)
                : int64_t(low);
    }
    return isUnsigned(t) && t.bytes == 8 ? int64_t(uint64_t(sum) / uint64_t(R))
                                         : sum / R;
  }
  int64_t acc = value(t, op, R, 0, i);
  for (int r = 1; r < R; ++r) {
    int64_t v = value(t, op, R, r, i);
    acc = op == sdmaSum    ? int64_t(uint64_t(acc) + uint64_t(v))
          : op == sdmaProd ? int64_t(uint64_t(acc) * uint64_t(v))
          : op == sdmaMax  ? std::max(acc, v)
                           : std::min(acc, v);
  }
  return acc; // encodeElement keeps the low bytes: two's complement wrap
}

std::vector<unsigned char> encode(const TypeCase &t,
                                  const std::vector<int64_t> &values) {
  std::vector<unsigned char> bytes(values.size() * t.bytes);
  for (size_t e = 0; e < values.size(); ++e)
    sdma::rt::encodeElement(t.name, values[e], bytes.data() + e * t.bytes);
  return bytes;
}

constexpr size_t kTail = 64; // bytes past each buffer that must stay

struct Case {
  Rank &k;
  const TypeCase &t;
  sdmaRedOp_t op;
  std::string tag;
  int64_t scale = 0; // a PreMulSum's scalar (op one sdma made)

  /// elements [first, first + n) of rank r's input.
  std::vector<int64_t> input(int r, size_t first, size_t n) const {
    std::vector<int64_t> v(n);
    for (size_t e = 0; e < n; ++e)
      v[e] = value(t, op, k.ranks, r, first + e);
    return v;
  }
  std::vector<int64_t> result(size_t first, size_t n) const {
    std::vector<int64_t> v(n);
    for (size_t e = 0; e < n; ++e)
      v[e] = reduced(t, op, k.ranks, first + e, scale);
    return v;
  }
  /// `bytes` followed by the untouched tail.
  static std::vector<unsigned char> withTail(std::vector<unsigned char> b) {
    b.insert(b.end(), kTail, kUntouched);
    return b;
  }
  void put(void *p, const std::vector<unsigned char> &bytes) {
    k.memory.write(p, bytes.data(), bytes.size());
  }
  void untouched(void *p, size_t bytes) {
    put(p, std::vector<unsigned char>(bytes, kUntouched));
  }

  void allReduce(size_t count, bool inPlace) {
    size_t c = count * t.bytes;
    char *in = static_cast<char *>(k.alloc(c + kTail));
    char *out = inPlace ? in : static_cast<char *>(k.alloc(c + kTail));
    if (!in || !out)
      return;
    untouched(out, c + kTail);
    put(in, encode(t, input(k.rank, 0, count)));
    k.check(sdmaAllReduce(in, out, count, t.type, op, k.comm, k.stream),
            "sdmaAllReduce");
    k.memory.sync(k.stream);
    std::string what = std::string("AllReduce") + (inPlace ? " in place" : "");
    k.expect(out, withTail(encode(t, result(0, count))), what + tag);
    if (!inPlace)
      k.expect(in, encode(t, input(k.rank, 0, count)), what + " input" + tag);
    if (!inPlace)
      k.check(sdmaMemFree(k.comm, out), "sdmaMemFree");
    k.check(sdmaMemFree(k.comm, in), "sdmaMemFree");
  }

  void reduceScatter(size_t count, bool inPlace) {
    int R = k.ranks, me = k.rank;
    size_t c = count * t.bytes;
    char *in = static_cast<char *>(k.alloc(R * c + kTail));
    char *out = inPlace ? in + me * c : static_cast<char *>(k.alloc(c + kTail));
    if (!in || !out)
      return;
    untouched(in, R * c + kTail);
    if (!inPlace)
      untouched(out, c + kTail);
    put(in, encode(t, input(me, 0, R * count)));
    k.check(sdmaReduceScatter(in, out, count, t.type, op, k.comm, k.stream),
            "sdmaReduceScatter");
    k.memory.sync(k.stream);
    std::vector<unsigned char> mine = encode(t, result(me * count, count));
    if (inPlace) {
      // Only this rank's chunk of its input changes.
      std::vector<unsigned char> want = encode(t, input(me, 0, R * count));
      std::copy(mine.begin(), mine.end(), want.begin() + me * c);
      k.expect(in, withTail(want), "ReduceScatter in place" + tag);
    } else {
      k.expect(out, withTail(mine), "ReduceScatter" + tag);
      k.expect(in, withTail(encode(t, input(me, 0, R * count))),
               "ReduceScatter input" + tag);
      k.check(sdmaMemFree(k.comm, out), "sdmaMemFree");
    }
    k.check(sdmaMemFree(k.comm, in), "sdmaMemFree");
  }

  /// Every call the communicator may pick for `count`, in and out of
  /// place: count and R * count (the second divides, so large ones run
  /// two-shot, and in place always does), reduce-scatter, reduce at every
  /// root.
  void everyCall(size_t count) {
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      allReduce(count, inPlace);
      allReduce(k.ranks * count, inPlace);
      reduceScatter(count, inPlace);
      for (int root = 0; root < k.ranks; ++root)
        reduce(count, root, inPlace);
    }
  }

  void reduce(size_t count, int root, bool inPlace) {
    size_t c = count * t.bytes;
    char *in = static_cast<char *>(k.alloc(c + kTail));
    char *out = inPlace ? in : static_cast<char *>(k.alloc(c + kTail));
    if (!in || !out)
      return;
    untouched(out, c + kTail);
    put(in, encode(t, input(k.rank, 0, count)));
    k.check(sdmaReduce(in, out, count, t.type, op, root, k.comm, k.stream),
            "sdmaReduce");
    k.memory.sync(k.stream);
    std::string what = std::string("Reduce") + (inPlace ? " in place" : "") +
                       " root " + std::to_string(root) + tag;
    if (k.rank == root)
      k.expect(out, withTail(encode(t, result(0, count))), what);
    else if (inPlace)
      k.expect(out, withTail(encode(t, input(k.rank, 0, count))), what);
    else
      k.expect(out, std::vector<unsigned char>(c + kTail, kUntouched), what);
    if (!inPlace)
      k.check(sdmaMemFree(k.comm, out), "sdmaMemFree");
    k.check(sdmaMemFree(k.comm, in), "sdmaMemFree");
  }
};

/// Rank r's element i for the replica check: floats of mixed sign and
/// magnitude (2^-20 .. 2^20), whose sums round differently in different
/// orders.
template <typename F> F inexact(int r, size_t i) {
  uint64_t x = (uint64_t(r) + 7) * 0x9E3779B97F4A7C15ull ^
               (i + 1) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  F mantissa = F(int64_t(x & 0xFFFFFF) - 0x800000) / F(0x800000);
  return std::ldexp(mantissa, int((x >> 24) % 41) - 20);
}

/// All-reduce (sum) of inexact floats: every rank must hold the same bits,
/// those of adding the ranks' values in ascending rank order (the order
/// sdma.reduce fixes), for every schedule the communicator picks: one-shot
/// and staged in place (every rank reduces the whole message itself, so
/// they agree only if the order is the operands', not the rank's), and
/// two-shot in and out of place.
template <typename F>
void replicasAgree(Rank &k, sdmaDataType_t type, const char *name) {
  int R = k.ranks;
  for (size_t count : {size_t(97), size_t(97) * R, size_t(4099)}) {
    std::vector<F> want(count), mine(count);
    for (size_t i = 0; i < count; ++i) {
      F acc = inexact<F>(0, i);
      for (int r = 1; r < R; ++r)
        acc = acc + inexact<F>(r, i);
      want[i] = acc;
      mine[i] = inexact<F>(k.rank, i);
    }
    size_t bytes = count * sizeof(F);
    std::vector<unsigned char> wantBytes(bytes);
    std::memcpy(wantBytes.data(), want.data(), bytes);
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      char *in = static_cast<char *>(k.alloc(bytes));
      char *out = inPlace ? in : static_cast<char *>(k.alloc(bytes));
      if (!in || !out)
        return;
      k.memory.write(in, mine.data(), bytes);
      k.check(sdmaAllReduce(in, out, count, type, sdmaSum, k.comm, k.stream),
              "sdmaAllReduce (replicas)");
      k.memory.sync(k.stream);
      k.expect(out, wantBytes,
               std::string("AllReduce replicas ") + name + " count " +
                   std::to_string(count) + (inPlace ? " in place" : ""));
      if (!inPlace)
        k.check(sdmaMemFree(k.comm, out), "sdmaMemFree");
      k.check(sdmaMemFree(k.comm, in), "sdmaMemFree");
    }
  }
}

/// PreMulSum (sdmaRedOpCreatePreMulSum), every type: the sum of the inputs
/// times a scalar, exact here (floats 2, signed integers -3 and unsigned
/// 3, wrapping), every schedule as above. At one
/// rank only a scalar of 1 is served (a copy): 1 runs, 2 is refused.
void preMulSums(Rank &k, const Args &args) {
  int R = k.ranks;
  for (const TypeCase &t : kTypes) {
    if (!args.types.empty() &&
        ("," + args.types + ",").find(std::string(",") + t.name + ",") ==
            std::string::npos)
      continue;
    // (A negative scalar would make -0.0 of a float element whose inputs
    // are all 0, as NCCL's does, which the integers here cannot say.)
    int64_t scale = R == 1 ? 1 : isFloat(t) ? 2 : isUnsigned(t) ? 3 : -3;
    uint8_t bits[8] = {};
    sdma::rt::encodeElement(t.name, scale, bits);
    sdmaRedOp_t op = sdmaSum;
    k.check(sdmaRedOpCreatePreMulSum(&op, bits, t.type, sdmaScalarHostImmediate,
                                     k.comm),
            "sdmaRedOpCreatePreMulSum");
    Case c{k, t, op,
           std::string(" ") + t.name + " premulsum " + std::to_string(scale),
           scale};
    for (size_t count : args.counts)
      c.everyCall(count);
    k.check(sdmaRedOpDestroy(op, k.comm), "sdmaRedOpDestroy");
  }
  if (R == 1) {
    float two = 2.0f;
    sdmaRedOp_t op = sdmaSum;
    k.check(sdmaRedOpCreatePreMulSum(&op, &two, sdmaFloat32,
                                     sdmaScalarHostImmediate, k.comm),
            "sdmaRedOpCreatePreMulSum");
    void *buf = k.alloc(64);
    if (expectFailure(
            k, sdmaAllReduce(buf, buf, 4, sdmaFloat32, op, k.comm, k.stream),
            "a premulsum at one rank with a scalar other than 1"))
      ++k.failures;
    k.check(sdmaRedOpDestroy(op, k.comm), "sdmaRedOpDestroy");
  }
}

} // namespace

void sdma::commtest::reductions(Rank &k, const Args &args) {
  replicasAgree<float>(k, sdmaFloat32, "f32");
  replicasAgree<double>(k, sdmaFloat64, "f64");
  int R = k.ranks;
  for (size_t n = 0; n < sizeof(kTypes) / sizeof(kTypes[0]); ++n) {
    const TypeCase &t = kTypes[n];
    if (!args.types.empty() &&
        ("," + args.types + ",").find(std::string(",") + t.name + ",") ==
            std::string::npos)
      continue;
    auto op = static_cast<sdmaRedOp_t>(n % 5);
    for (size_t count : args.counts) {
      Case c{k, t, op,
             std::string(" ") + t.name + " " + kOpNames[op] + " count " +
                 std::to_string(count)};
      c.everyCall(count);
    }
  }
  preMulSums(k, args);
  // NCCL's rooted convention: recvbuff may be NULL off the root.
  {
    const TypeCase &t = kTypes[0];
    Case c{k, t, sdmaSum, " f32 sum null recv off the root"};
    size_t count = 5, bytes = count * t.bytes;
    char *in = static_cast<char *>(k.alloc(bytes));
    char *out = static_cast<char *>(k.alloc(bytes + kTail));
    if (in && out) {
      c.untouched(out, bytes + kTail);
      c.put(in, encode(t, c.input(k.rank, 0, count)));
      int root = R - 1;
      k.check(sdmaReduce(in, k.rank == root ? out : nullptr, count, t.type,
                         sdmaSum, root, k.comm, k.stream),
              "sdmaReduce (recv NULL off the root)");
      k.memory.sync(k.stream);
      if (k.rank == root)
        k.expect(out, Case::withTail(encode(t, c.result(0, count))),
                 "Reduce" + c.tag);
      k.check(sdmaMemFree(k.comm, out), "sdmaMemFree");
      k.check(sdmaMemFree(k.comm, in), "sdmaMemFree");
    }
  }
  // Bad arguments: refused on every rank, before anything runs.
  void *buf = k.alloc(256);
  std::string badRoot = "root " + std::to_string(R) + " is not a rank";
  if (expectFailure(k,
                    sdmaAllReduce(buf, buf, 4, sdmaFloat32,
                                  static_cast<sdmaRedOp_t>(7), k.comm,
                                  k.stream),
                    "invalid reduction operator 7") ||
      expectFailure(
          k, sdmaReduce(buf, buf, 4, sdmaFloat32, sdmaSum, R, k.comm, k.stream),
          badRoot.c_str()) ||
      expectFailure(k,
                    sdmaAllReduce(buf, static_cast<char *>(buf) + 4, 4,
                                  sdmaFloat32, sdmaSum, k.comm, k.stream),
                    "overlap partially"))
    ++k.failures;
}

int sdma::commtest::reductionVariants(Rank &k) {
  int R = k.ranks, n = 0;
  const size_t count = 7; // R does not divide it: one-shot and staged
  for (const TypeCase &t : kTypes)
    for (int o = 0; o < 5; ++o) {
      auto op = static_cast<sdmaRedOp_t>(o);
      Case c{k, t, op, std::string(" ") + t.name + " " + kOpNames[op]};
      c.allReduce(count, false);     // all_reduce_one_shot
      c.allReduce(count, true);      // all_reduce_in_place
      c.allReduce(R * count, true);  // all_reduce_two_shot
      c.reduceScatter(count, false); // reduce_scatter_direct
      for (int root = 0; root < R; ++root)
        c.reduce(count, root, false); // reduce, each root its program
      n += 4 + R;
    }
  return n;
}
