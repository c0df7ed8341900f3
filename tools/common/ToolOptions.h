//===- ToolOptions.h - the tools' command lines -----------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The tools link LLVM and MLIR, which register hundreds of command-line
// options of their own. These helpers keep --help to the options a user of
// sdma needs (the others stay usable and are listed by --help-hidden), show
// every option's default, print sdma's version and the versions of its file
// formats for --version, and turn command-line errors into one line.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TOOLS_COMMON_TOOLOPTIONS_H
#define SDMA_TOOLS_COMMON_TOOLOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <type_traits>

namespace sdma {

/// Hides from --help every registered option none of whose names is in
/// `shown`. Hidden options still work and --help-hidden lists them. Call it
/// after registering the options and before parsing.
void showOnlyOptions(llvm::ArrayRef<llvm::StringRef> shown);

/// Sets the default value of the registered boolean option `name` (e.g.
/// "mlir-print-op-on-diagnostic"); an explicit flag still overrides it.
/// Returns false if there is no such option.
bool setBoolOptionDefault(llvm::StringRef name, bool value);

/// Tunes glibc's allocator for a compiler that builds and frees the same
/// large tables pass after pass (schedule graphs, access lists, ops): blocks
/// up to 32 MiB come from the heap instead of fresh mappings, and freed
/// memory stays in the process (up to 1 GiB, grown 64 MiB at a time), so
/// each pass does not pay a page fault per page again. all_to_all_direct's
/// swap variant at 256 ranks: 2.12 -> 1.94 s, peak memory unchanged. Does
/// nothing elsewhere. Call it first in main().
void tuneAllocator();

/// Makes `-h` mean `--help` (call it after showOnlyOptions or
/// HideUnrelatedOptions: it stays listed).
void addShortHelpAlias();

/// Makes `--version` print sdma's version and the versions of the formats
/// its tools write and read.
void installVersionPrinter(llvm::StringRef tool);

/// Adds text after the option list of --help (kept for the program's life).
void addHelpText(std::string text);

/// Parses the command line; on an error (unknown option, bad value, missing
/// input) prints one line `TOOL: error: ...` naming the problem and returns
/// false: the tool then exits with status 2.
bool parseCommandLine(int argc, char **argv, llvm::StringRef overview);

namespace detail {
/// Appends " (default: VALUE)" to the description of an option whose
/// description does not already state its default.
void appendDefault(llvm::cl::Option &option, llvm::StringRef value);

template <typename T> std::string formatDefault(const T &value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "on" : "off";
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << value;
    return text.empty() ? "none" : text;
  }
}
} // namespace detail

/// Adds the default value of each option to its --help description. Call it
/// before parsing (the value then is the default).
template <typename... Options> void describeDefaults(Options &...options) {
  (detail::appendDefault(options, detail::formatDefault(options.getValue())),
   ...);
}

} // namespace sdma

#endif // SDMA_TOOLS_COMMON_TOOLOPTIONS_H
