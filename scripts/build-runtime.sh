#!/usr/bin/env bash
# Builds the runtime alone (no MLIR: what a GPU machine needs) into BUILD_DIR,
# with nlohmann/json from .carry/include where the machine has none.
#   scripts/build-runtime.sh BUILD_DIR TARGET...
# SDMA_RUNTIME_CMAKE_ARGS adds configure options (e.g. -DSDMA_ENABLE_HIP=OFF).
# SDMA_PREBUILT_RUNTIME=DIR: a build made elsewhere (e.g. carried to the GPU
# machine; configure it with -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON): when every
# TARGET is a program in DIR/bin that starts here, DIR's bin/ and lib/ are
# copied into BUILD_DIR instead of building. Otherwise it builds.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
shift

# prebuilt_runs DIR TARGET...: each TARGET is DIR/bin/TARGET, and it starts
# (an unknown option is refused, not a loader error: exit 126/127 or a
# missing library or symbol version).
prebuilt_runs() {
  local dir=$1 t err rc
  shift
  for t; do
    [ -x "$dir/bin/$t" ] || return 1
    rc=0
    err=$(timeout 10 "$dir/bin/$t" --no-such-option 2>&1 > /dev/null) || rc=$?
    [ $rc -lt 124 ] || return 1
    ! grep -qE "error while loading shared|version .GLIBC|not found" <<< "$err" || return 1
  done
}
if [ -n "${SDMA_PREBUILT_RUNTIME:-}" ]; then
  if prebuilt_runs "$SDMA_PREBUILT_RUNTIME" "$@"; then
    mkdir -p "$build"
    cp -a "$SDMA_PREBUILT_RUNTIME/bin" "$SDMA_PREBUILT_RUNTIME/lib" "$build/"
    echo "build-runtime.sh: prebuilt $* from $SDMA_PREBUILT_RUNTIME"
    exit 0
  fi
  echo "build-runtime.sh: $SDMA_PREBUILT_RUNTIME does not run $* here: building"
fi
json_include=()
[ -d .carry/include/nlohmann ] && json_include=(-DNLOHMANN_JSON_INCLUDE_DIR="$PWD/.carry/include")
# shellcheck disable=SC2086
cmake -S runtime -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${json_include[@]}" \
  ${SDMA_RUNTIME_CMAKE_ARGS:-} > "$build.cmake.log" 2>&1 ||
  { cat "$build.cmake.log"; exit 1; }
cmake --build "$build" --target "$@" > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log"; exit 1; }
