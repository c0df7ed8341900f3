//===- ReducePattern.cpp - inputs and expected outputs of reductions ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The reference for all_reduce, reduce_scatter and reduce, written from
// their definitions (not from any schedule): inputs of small integers
// (non-negative for unsigned types), so
// that every correct order of combination gives the same bits, and the
// expected output computed exactly in 64-bit integers.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/HostMemory.h"

#include <algorithm>
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
    uint32_t h = m >> shift, rem = m & ((1u << shift) - 1),
             half = 1u << (shift - 1);
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

bool isUnsigned(const std::string &type) { return type.rfind("ui", 0) == 0; }

/// `value` wrapped to an integer type's width and signedness (floats: as
/// is, the values stay exact).
int64_t wrap(const std::string &type, uint64_t value) {
  if (type == "i8")
    return int8_t(uint8_t(value));
  if (type == "ui8")
    return uint8_t(value);
  if (type == "i32")
    return int32_t(uint32_t(value));
  if (type == "ui32")
    return uint32_t(value);
  return int64_t(value); // i64, ui64 (as its bits), floats
}

int64_t combine(const std::string &op, const std::string &type, int64_t a,
                int64_t b) {
  if (op == "max" || op == "min") {
    bool less = type == "ui64" ? uint64_t(a) < uint64_t(b) : a < b;
    return (op == "max") == less ? b : a;
  }
  return wrap(type, op == "sum" ? uint64_t(a) + uint64_t(b)
                                : uint64_t(a) * uint64_t(b));
}

} // namespace

int64_t sdma::rt::patternValue(const Plan &plan, int rank, uint64_t element) {
  const Collective &c = *plan.collective;
  const std::string &type = plan.buffers[c.input].type;
  uint64_t x = mix(rank, c.input, element);
  if (c.op == "prod") {
    static const int64_t values[4] = {-2, -1, 1, 2};
    return isUnsigned(type) ? 1 + int64_t(x & 1) : values[x & 3];
  }
  // 16-bit floats hold integers exactly up to 256 (bf16) or 2048 (f16):
  // keep every partial sum within that.
  int64_t limit = type == "bf16" ? 256 : type == "f16" ? 2048 : 1 << 20;
  int64_t amplitude = std::max<int64_t>(
      1, std::min<int64_t>(8, limit / std::max(1, plan.ranks)));
  int64_t value = int64_t(x % uint64_t(2 * amplitude + 1)) - amplitude;
  return isUnsigned(type) ? value + amplitude : value;
}

void sdma::rt::encodeElement(const std::string &type, int64_t value,
                             uint8_t *out) {
  if (type == "f32") {
    float f = float(value);
    std::memcpy(out, &f, 4);
  } else if (type == "f64") {
    double d = double(value);
    std::memcpy(out, &d, 8);
  } else if (type == "f16") {
    uint16_t h = toHalf(float(value));
    std::memcpy(out, &h, 2);
  } else if (type == "bf16") {
    uint16_t h = uint16_t(floatBits(float(value)) >> 16); // exact values
    std::memcpy(out, &h, 2);
  } else {
    // Integers: the low bytes of two's complement (little-endian).
    uint64_t bits = uint64_t(value);
    size_t size = type == "i8" || type == "ui8"     ? 1
                  : type == "i32" || type == "ui32" ? 4
                                                    : 8;
    std::memcpy(out, &bits, size);
  }
}

double sdma::rt::decodeElement(const std::string &type, const uint8_t *in) {
  if (type == "f32") {
    float f;
    std::memcpy(&f, in, 4);
    return f;
  }
  if (type == "f64") {
    double d;
    std::memcpy(&d, in, 8);
    return d;
  }
  if (type == "f16" || type == "bf16") {
    uint16_t h;
    std::memcpy(&h, in, 2);
    return type == "f16" ? fromHalf(h) : bitsFloat(uint32_t(h) << 16);
  }
  uint64_t bits = 0;
  size_t size = type == "i8" || type == "ui8"     ? 1
                : type == "i32" || type == "ui32" ? 4
                                                  : 8;
  std::memcpy(&bits, in, size);
  return type == "ui64" ? double(bits) : double(wrap(type, bits));
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
        os << "rank " << r << ", " << plan.buffers[c.output].name << " element "
           << e << " (" << type << "): " << decodeElement(type, out + e * size)
           << ", expected " << value << " (the " << c.op << " of "
           << plan.buffers[c.input].name << " element " << first + e << " over "
           << plan.ranks << " ranks)";
        result.firstWrong = os.str();
      }
    }
  }
  return result;
}
