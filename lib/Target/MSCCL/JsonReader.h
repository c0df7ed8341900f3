//===- JsonReader.h - JSON with the position of every value -----*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A JSON reader (RFC 8259) that keeps each value's line and column and each
// object's members in document order, so that a diagnostic about an
// execution plan can point at the member that caused it. Numbers are kept
// as written and read as integers on demand.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_MSCCL_JSONREADER_H
#define SDMA_LIB_TARGET_MSCCL_JSONREADER_H

#include "XmlReader.h"

#include <optional>

namespace sdma::json {

using xml::Position;

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  Position at;
  bool boolean = false;
  std::string text;         // a string's value, a number as written
  std::vector<Value> items; // an array's elements, an object's values
  std::vector<std::pair<std::string, Position>> keys; // an object's keys

  /// The member `key` of an object, or null.
  const Value *find(llvm::StringRef key) const;
  /// A number that is an integer, or nothing.
  std::optional<int64_t> integer() const;
  /// "null", "a boolean", "a number", "a string", "an array", "an object".
  const char *describe() const;
};

/// The document's value, or nothing with `error` and where it arose.
std::optional<Value> parse(llvm::StringRef text, std::string &error,
                           Position &where);

} // namespace sdma::json

#endif // SDMA_LIB_TARGET_MSCCL_JSONREADER_H
