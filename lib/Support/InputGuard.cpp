//===- InputGuard.cpp - reject inputs MLIR's parser cannot survive --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/Support/InputGuard.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <unistd.h>

using namespace llvm;

bool sdma::checkInputNesting(StringRef text, StringRef name, unsigned maxDepth,
                             raw_ostream &errs) {
  // MLIR bytecode ("ML\xefR"): not text, and its reader keeps regions on
  // its own stack rather than the call stack; its bytes would read as
  // brackets.
  if (text.starts_with("ML\xefR"))
    return true;
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    char next = i + 1 < e ? text[i + 1] : '\0';
    char prev = i > 0 ? text[i - 1] : '\0';
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (c == '/' && next == '/') {
      while (i + 1 < e && text[i + 1] != '\n')
        ++i;
    } else if (c == '"') {
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '{' || c == '(' || c == '[' || (c == '<' && next != '-')) {
      if (++depth > maxDepth) {
        errs << name << ":" << line << ":" << (i - lineStart + 1)
             << ": error: input nests deeper than " << maxDepth
             << " levels; sdma tools refuse it before parsing\n";
        return false;
      }
    } else if ((c == '}' || c == ')' || c == ']' ||
                (c == '>' && prev != '-')) &&
               depth > 0) {
      --depth;
    }
  }
  return true;
}

/// Reads standard input whole, checks it, and puts it back on fd 0 as a
/// temporary file so that the tool reads the same bytes.
static bool checkStandardInput() {
  ErrorOr<std::unique_ptr<MemoryBuffer>> input = MemoryBuffer::getSTDIN();
  if (!input) {
    errs() << "<stdin>: error: cannot read: " << input.getError().message()
           << "\n";
    return false;
  }
  StringRef text = (*input)->getBuffer();
  if (!sdma::checkInputNesting(text, "<stdin>", sdma::kMaxInputNesting, errs()))
    return false;
  FILE *copy = std::tmpfile();
  if (!copy || std::fwrite(text.data(), 1, text.size(), copy) != text.size() ||
      std::fflush(copy) != 0 || std::fseek(copy, 0, SEEK_SET) != 0 ||
      ::dup2(::fileno(copy), STDIN_FILENO) < 0) {
    errs() << "<stdin>: error: cannot buffer standard input\n";
    return false;
  }
  return true; // `copy` stays open: fd 0 now refers to it
}

bool sdma::checkToolInputs(int argc, char **argv,
                           ArrayRef<StringRef> optionsWithValue) {
  bool sawInput = false;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (is_contained(optionsWithValue, arg)) {
      ++i;
      continue;
    }
    if (arg == "--")
      continue;
    if (arg != "-" && arg.starts_with("-"))
      continue;
    sawInput = true;
    if (arg == "-") {
      if (!checkStandardInput())
        return false;
      continue;
    }
    if (!sys::fs::is_regular_file(arg))
      continue; // the tool reports a missing file itself
    ErrorOr<std::unique_ptr<MemoryBuffer>> file =
        MemoryBuffer::getFile(arg, /*IsText=*/true);
    if (file &&
        !checkInputNesting((*file)->getBuffer(), arg, kMaxInputNesting, errs()))
      return false;
  }
  if (!sawInput)
    return checkStandardInput();
  return true;
}
