# Writes the code of a kernel source file as a C++ string literal, for
#   constexpr const char *text =
#   #include "OUTPUT"
#       ;
# The code is what follows the file's banner: its leading `//` lines, which
# end at the first blank line; that blank line is kept, so the text starts
# with a newline. Run as
#   cmake -DINPUT=<file> -DOUTPUT=<file> -P EmbedKernel.cmake
# Bytes are copied unchanged (one raw string literal: no escaping).

if(NOT INPUT OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DINPUT=<file> -DOUTPUT=<file> -P EmbedKernel.cmake")
endif()

file(READ "${INPUT}" content)
string(FIND "${content}" "\n\n" bannerEnd)
if(bannerEnd EQUAL -1)
  message(FATAL_ERROR "${INPUT}: no blank line after the banner")
endif()
math(EXPR bannerLength "${bannerEnd} + 1")
string(SUBSTRING "${content}" 0 ${bannerLength} banner)
string(SUBSTRING "${content}" ${bannerLength} -1 code)

# Every banner line is a comment: anything else would be dropped silently.
string(REGEX MATCH "(^|\n)[^/]" notComment "${banner}")
if(notComment OR NOT banner MATCHES "^//")
  message(FATAL_ERROR "${INPUT}: the banner (up to the first blank line) "
                      "must be `//` lines only")
endif()

set(delimiter "SDMAKERNEL")
string(FIND "${code}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains `)${delimiter}\"`, which would end "
                      "the raw string literal")
endif()

get_filename_component(name "${INPUT}" NAME)
set(text "// Generated from ${name} by EmbedKernel.cmake: do not edit.\n")
string(APPEND text "R\"${delimiter}(${code})${delimiter}\"\n")
file(WRITE "${OUTPUT}" "${text}")
