//===- FileBytes.h - a file read whole --------------------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// For files that are not JSON (a schedule's text, a compiler log); the
// plan readers use format/JsonFields.h's readFile, which also applies the
// memory budget to what parsing the JSON could need.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_EXEC_FILEBYTES_H
#define SDMA_RUNTIME_LIB_EXEC_FILEBYTES_H

#include <fstream>
#include <iterator>
#include <string>

namespace sdma::rt {

/// The bytes of the file at `path`; false if it cannot be opened or read.
inline bool readFileBytes(const std::string &path, std::string &bytes) {
  std::ifstream in(path, std::ios::binary);
  bytes.assign(std::istreambuf_iterator<char>(in), {});
  return bool(in) || in.eof();
}

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_EXEC_FILEBYTES_H
