// RUN: sdma-translate --sdma-to-packets %s -split-input-file -verify-diagnostics
// RUN: sdma-translate --sdma-to-packet-listing %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected exactly one sdmapkt.program (run --convert-sdma-to-sdmapkt), found 0}}
module {
}
