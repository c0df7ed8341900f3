//===- CheckedMath.h - size arithmetic that cannot wrap ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Every size the runtime computes from a plan (chunks x chunk bytes, ranks x
// buffers, flags x 8, ...) goes through these: std::nullopt instead of a
// wrapped value, so a huge plan is refused instead of becoming a small
// allocation and a heap overwrite.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_CHECKEDMATH_H
#define SDMA_RUNTIME_CHECKEDMATH_H

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace sdma::rt {

/// a x b, or std::nullopt if it does not fit 64 bits.
inline std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or std::nullopt if it does not fit 64 bits.
inline std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The product of all factors, or std::nullopt on overflow.
inline std::optional<uint64_t>
checkedProduct(std::initializer_list<uint64_t> f) {
  uint64_t r = 1;
  for (uint64_t x : f)
    if (__builtin_mul_overflow(r, x, &r))
      return std::nullopt;
  return r;
}

/// Accumulates a size; once any step overflows, the total stays invalid.
class CheckedSize {
public:
  CheckedSize &add(std::optional<uint64_t> bytes) {
    if (!bytes || !valid_ || __builtin_add_overflow(total_, *bytes, &total_))
      valid_ = false;
    return *this;
  }
  CheckedSize &addProduct(std::initializer_list<uint64_t> factors) {
    return add(checkedProduct(factors));
  }
  bool valid() const { return valid_; }
  /// The total, or std::nullopt if some step overflowed.
  std::optional<uint64_t> value() const {
    return valid_ ? std::optional<uint64_t>(total_) : std::nullopt;
  }

private:
  uint64_t total_ = 0;
  bool valid_ = true;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_CHECKEDMATH_H
