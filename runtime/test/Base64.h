//===- Base64.h - packet images for the runtime's unit tests ----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Packet plans carry each queue's image as base64 of little-endian dwords;
// the tests hand-encode packets and need the same text.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_TEST_BASE64_H
#define SDMA_RUNTIME_TEST_BASE64_H

#include <cstdint>
#include <string>
#include <vector>

namespace sdma::rt::test {

/// `dwords` as little-endian bytes, base64-encoded with padding.
inline std::string base64(const std::vector<uint32_t> &dwords) {
  static const char *table =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  for (uint32_t d : dwords)
    for (int k = 0; k < 4; ++k)
      bytes.push_back(static_cast<char>(d >> (8 * k)));
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size())
      v |= uint8_t(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size())
      v |= uint8_t(bytes[i + 2]);
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? table[v & 63] : '=';
  }
  return out;
}

} // namespace sdma::rt::test

#endif // SDMA_RUNTIME_TEST_BASE64_H
