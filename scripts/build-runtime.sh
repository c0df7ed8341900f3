#!/usr/bin/env bash
# Builds the runtime alone (no MLIR: what a GPU machine needs) into BUILD_DIR,
# with nlohmann/json from .carry/include where the machine has none.
#   scripts/build-runtime.sh BUILD_DIR TARGET...
# SDMA_RUNTIME_CMAKE_ARGS adds configure options (e.g. -DSDMA_ENABLE_HIP=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
shift
json_include=()
[ -d .carry/include/nlohmann ] && json_include=(-DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.carry/include")
# shellcheck disable=SC2086
cmake -S runtime -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${json_include[@]}" \
  ${SDMA_RUNTIME_CMAKE_ARGS:-} > "$build.cmake.log" 2>&1 ||
  { cat "$build.cmake.log"; exit 1; }
cmake --build "$build" --target "$@" > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log"; exit 1; }
