#!/usr/bin/env bash
# Builds the runtime alone (no MLIR: what a GPU machine needs) into BUILD_DIR,
# with nlohmann/json from .carry/include where the machine has none.
#   scripts/build-runtime.sh BUILD_DIR TARGET...
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
shift
json_include=()
[ -d .carry/include/nlohmann ] && json_include=(-DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.carry/include")
cmake -S runtime -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${json_include[@]}" > "$build.cmake.log" 2>&1 ||
  { cat "$build.cmake.log"; exit 1; }
cmake --build "$build" --target "$@" > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log"; exit 1; }
