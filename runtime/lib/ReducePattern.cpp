//===- ReducePattern.cpp - inputs and expected outputs of reductions ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The reference for all_reduce, reduce_scatter and reduce, written from
// their definitions (not from any schedule): inputs of small integers, so
// that every correct order of combination gives the same bits, and the
// expected output computed exactly in 64-bit integers.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <cstring>
#include <sstream>

using namespace sdma::rt;

namespace {

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f32 -> f16, round to nearest even (the kernel's conversion).
uint16_t toHalf(float f) {
  uint32_t x = floatBits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return uint16_t(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u)
    return uint16_t(sign | 0x7c00u);
  if (ax <= 0x33000000u)
    return uint16_t(sign);
  if (ax < 0x38800000u) {
    uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
    uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u)))
      ++h;
    return uint16_t(sign | h);
  }
  uint32_t r = ax - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h;
  return uint16_t(sign | h);
}

float fromHalf(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
           man = h & 0x3ffu;
  if (exp == 0x1f)
    return bitsFloat(sign | 0x7f800000u | (man << 13));
  if (exp)
    return bitsFloat(sign | ((exp + 112) << 23) | (man << 13));
  // Zero or subnormal: man * 2^-24, exact in a float.
  float magnitude = float(man) * (1.0f / 16777216.0f);
  return sign ? -magnitude : magnitude;
}

uint64_t mix(int rank, int buffer, uint64_t index) {
  uint64_t x = (uint64_t(rank) << 48) ^ (uint64_t(buffer) << 40) ^ index;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t combine(const std::string &op, const std::string &type, int64_t a,
                int64_t b) {
  if (op == "max")
    return a > b ? a : b;
  if (op == "min")
    return a < b ? a : b;
  // Wrap as the element type does (values stay exact in floats).
  uint64_t r = op == "sum" ? uint64_t(a) + uint64_t(b)
                           : uint64_t(a) * uint64_t(b);
  return type == "i32" ? int64_t(int32_t(uint32_t(r))) : int64_t(r);
}

} // namespace

int64_t sdma::rt::patternValue(const Plan &plan, int rank, uint64_t element) {
  const Collective &c = *plan.collective;
  uint64_t x = mix(rank, c.input, element);
  if (c.op == "prod") {
    static const int64_t values[4] = {-2, -1, 1, 2};
    return values[x & 3];
  }
  // 16-bit floats hold integers exactly up to 256 (bf16) or 2048 (f16):
  // keep every partial sum within that.
  const std::string &type = plan.buffers[c.input].type;
  int64_t limit = type == "bf16" ? 256 : type == "f16" ? 2048 : 1 << 20;
  int64_t amplitude = std::max<int64_t>(1, std::min<int64_t>(8, limit / plan.ranks));
  return int64_t(x % uint64_t(2 * amplitude + 1)) - amplitude;
}

void sdma::rt::encodeElement(const std::string &type, int64_t value,
                             uint8_t *out) {
  if (type == "f32") {
    float f = float(value);
    std::memcpy(out, &f, 4);
  } else if (type == "f16") {
    uint16_t h = toHalf(float(value));
    std::memcpy(out, &h, 2);
  } else if (type == "bf16") {
    uint16_t h = uint16_t(floatBits(float(value)) >> 16); // exact values
    std::memcpy(out, &h, 2);
  } else if (type == "i32") {
    int32_t i = int32_t(value);
    std::memcpy(out, &i, 4);
  } else {
    std::memcpy(out, &value, 8);
  }
}

double sdma::rt::decodeElement(const std::string &type, const uint8_t *in) {
  if (type == "f32") {
    float f;
    std::memcpy(&f, in, 4);
    return f;
  }
  if (type == "f16" || type == "bf16") {
    uint16_t h;
    std::memcpy(&h, in, 2);
    return type == "f16" ? fromHalf(h) : bitsFloat(uint32_t(h) << 16);
  }
  if (type == "i32") {
    int32_t i;
    std::memcpy(&i, in, 4);
    return i;
  }
  int64_t l;
  std::memcpy(&l, in, 8);
  return double(l);
}

void sdma::rt::fillReductionInput(const Plan &plan, HostMemory &memory) {
  const Collective &c = *plan.collective;
  const std::string &type = plan.buffers[c.input].type;
  size_t size = plan.buffers[c.input].elementBytes();
  for (int r = 0; r < plan.ranks; ++r)
    for (int b = 0; b < static_cast<int>(plan.buffers.size()); ++b) {
      uint8_t *bytes = memory.buffer(r, b);
      size_t n = memory.bufferBytes(r, b);
      if (b != c.input) {
        std::memset(bytes, kPoison, n);
        continue;
      }
      for (size_t e = 0; e * size < n; ++e)
        encodeElement(type, patternValue(plan, r, e), bytes + e * size);
    }
}

CheckResult sdma::rt::checkReduction(const Plan &plan,
                                     const HostMemory &memory) {
  CheckResult result;
  const Collective &c = *plan.collective;
  const std::string &type = plan.buffers[c.input].type;
  size_t size = plan.buffers[c.input].elementBytes();
  uint64_t outBytes = memory.bufferBytes(0, c.output);
  std::vector<uint8_t> expected(size);
  for (int r = 0; r < plan.ranks; ++r) {
    if (c.kind == "reduce" && r != c.root)
      continue;
    const uint8_t *out = memory.buffer(r, c.output);
    // reduce_scatter: rank r's output is slice r of the inputs.
    uint64_t first = c.kind == "reduce_scatter" ? r * outBytes / size : 0;
    for (uint64_t e = 0; e * size < outBytes; ++e) {
      int64_t value = patternValue(plan, 0, first + e);
      for (int p = 1; p < plan.ranks; ++p)
        value = combine(c.op, type, value, patternValue(plan, p, first + e));
      encodeElement(type, value, expected.data());
      result.checkedBytes += size;
      if (std::memcmp(expected.data(), out + e * size, size) == 0)
        continue;
      result.wrongBytes += size;
      if (result.firstWrong.empty()) {
        std::ostringstream os;
        os << "rank " << r << ", " << plan.buffers[c.output].name
           << " element " << e << " (" << type << "): "
           << decodeElement(type, out + e * size) << ", expected " << value
           << " (the " << c.op << " of " << plan.buffers[c.input].name
           << " element " << first + e << " over " << plan.ranks
           << " ranks)";
        result.firstWrong = os.str();
      }
    }
  }
  return result;
}
