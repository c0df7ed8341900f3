//===- XmlReader.h - the XML that algorithm files are written in -*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A small reader for the XML of MSCCL algorithm files: elements with
// attributes (single or double quotes, the five predefined entities and
// numeric character references), nested or self-closing, an optional
// declaration, comments and whitespace between them. No namespaces, DTDs,
// CDATA or mixed content (text other than whitespace is an error). Every
// element and attribute keeps its line and column, so a diagnostic can
// point at the attribute that caused it.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_MSCCL_XMLREADER_H
#define SDMA_LIB_TARGET_MSCCL_XMLREADER_H

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace sdma::xml {

/// A position in the text, 1-based.
struct Position {
  unsigned line = 1, column = 1;
};

struct Attribute {
  std::string name, value;
  Position at;      // the name's first character
  Position valueAt; // the value's first character (inside the quotes)
};

struct Element {
  std::string name;
  Position at; // the '<'
  std::vector<Attribute> attributes;
  std::vector<std::unique_ptr<Element>> children;

  /// The attribute `name`, or null.
  const Attribute *find(llvm::StringRef name) const;
};

/// The document's root element, or null with `error` and where it arose.
std::unique_ptr<Element> parse(llvm::StringRef text, std::string &error,
                               Position &where);

} // namespace sdma::xml

#endif // SDMA_LIB_TARGET_MSCCL_XMLREADER_H
