//===- ToolOptions.cpp - the tools' command lines -------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"

#include "sdma/runtime/Version.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <deque>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace llvm;

/// Strings an option or the help refers to by StringRef: they live as long
/// as the program.
static std::deque<std::string> &keptStrings() {
  static std::deque<std::string> strings;
  return strings;
}

void sdma::tuneAllocator() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

void sdma::showOnlyOptions(ArrayRef<StringRef> shown) {
  auto &options = cl::getRegisteredOptions();
  SmallPtrSet<cl::Option *, 32> keep;
  for (StringRef name : shown)
    if (cl::Option *option = options.lookup(name))
      keep.insert(option);
  for (auto &entry : options)
    if (!keep.contains(entry.second) &&
        entry.second->getOptionHiddenFlag() == cl::NotHidden)
      entry.second->setHiddenFlag(cl::Hidden);
}

bool sdma::setBoolOptionDefault(StringRef name, bool value) {
  auto *option =
      dynamic_cast<cl::opt<bool> *>(cl::getRegisteredOptions().lookup(name));
  if (!option)
    return false;
  option->setInitialValue(value);
  return true;
}

void sdma::addShortHelpAlias() {
  auto &options = cl::getRegisteredOptions();
  cl::Option *help = options.lookup("help");
  if (!help || options.count("h"))
    return;
  static cl::alias shortHelp("h", cl::desc("Alias for --help"),
                             cl::aliasopt(*help));
  help->setDescription("Display available options (also -h; --help-hidden "
                       "for more)");
}

void sdma::installVersionPrinter(StringRef tool) {
  std::string text = sdma::versionText(tool.str());
  cl::SetVersionPrinter([text](raw_ostream &os) { os << text; });
}

void sdma::addHelpText(std::string text) {
  keptStrings().push_back(std::move(text));
  static std::deque<cl::extrahelp> extra;
  extra.emplace_back(keptStrings().back());
}

/// Runs `parse` with standard error going to a temporary file (LLVM writes
/// some command-line errors straight there); returns what was written.
static std::string captureStandardError(function_ref<void()> parse) {
  errs().flush();
  std::fflush(stderr);
  FILE *capture = std::tmpfile();
  int saved = capture ? ::dup(STDERR_FILENO) : -1;
  if (saved < 0 || ::dup2(::fileno(capture), STDERR_FILENO) < 0) {
    if (saved >= 0)
      ::close(saved);
    if (capture)
      std::fclose(capture);
    parse();
    return "";
  }
  parse();
  errs().flush();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string text;
  std::rewind(capture);
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, capture))
    text.append(buffer, n);
  std::fclose(capture);
  return text;
}

bool sdma::parseCommandLine(int argc, char **argv, StringRef overview) {
  std::string errors;
  raw_string_ostream os(errors);
  bool parsed = false;
  std::string direct = captureStandardError(
      [&] { parsed = cl::ParseCommandLineOptions(argc, argv, overview, &os); });
  if (parsed) {
    errs() << direct; // warnings, if any
    return true;
  }
  // LLVM writes "TOOL: message\nTOOL: Did you mean '--x'?\n" (and, for some
  // errors, a line of its own to stderr): one line, with the suggestion
  // folded in.
  StringRef tool = sys::path::filename(argv[0]);
  auto strip = [&](StringRef line) {
    line = line.trim();
    if (line.consume_front(tool))
      line = line.drop_while([](char c) { return c == ':' || c == ' '; });
    return line;
  };
  auto lowerFirst = [](StringRef text) {
    std::string lowered = text.str();
    if (!lowered.empty())
      lowered[0] = toLower(lowered[0]);
    return lowered;
  };
  auto [first, rest] = StringRef(errors).split('\n');
  std::string message = lowerFirst(strip(first));
  if (message.empty())
    message = lowerFirst(strip(StringRef(direct).split('\n').first));
  if (message.empty())
    message = "invalid command line";
  // A suggestion only where it names an option --help shows (LLVM also
  // suggests hidden internals and any one-letter option).
  StringRef second = strip(rest.split('\n').first);
  StringRef suggested = second.split('\'').second.split('\'').first;
  suggested = suggested.ltrim('-').split('=').first;
  cl::Option *option = cl::getRegisteredOptions().lookup(suggested);
  if (second.starts_with("Did you mean") && suggested.size() > 1 && option &&
      option->getOptionHiddenFlag() == cl::NotHidden)
    message += " (" + lowerFirst(second) + ")";
  errs() << tool << ": error: " << message << "\n";
  return false;
}

void sdma::detail::appendDefault(cl::Option &option, StringRef value) {
  if (option.HelpStr.contains("default"))
    return;
  keptStrings().push_back((option.HelpStr + " (default: " + value + ")").str());
  option.setDescription(keptStrings().back());
}
