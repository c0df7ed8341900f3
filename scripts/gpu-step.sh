# Sourced by the GPU scripts: step SECONDS NAME COMMAND... runs COMMAND
# under its own timeout, so one hang cannot eat the device call, and prints
# its name and exit status on stderr.
step() {
  local t=$1 name=$2
  shift 2
  echo "== $name" >&2
  timeout "$t" "$@"
  echo "exit $?" >&2
}

# build_benches BUILD_DIR NAME...: the runtime library (sdmart, no HIP) in
# BUILD_DIR, then each bench/NAME.cu linked against it as /tmp/NAME
# (-lineinfo: source lines for Nsight Compute; the code is the same).
build_benches() {
  local build=$1 name
  shift
  SDMA_RUNTIME_CMAKE_ARGS="-DSDMA_ENABLE_HIP=OFF" \
    scripts/build-runtime.sh "$build" sdmart || return 1
  for name in "$@"; do
    nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Iruntime/include \
      "bench/$name.cu" "$build/libsdmart.a" -ldl -lpthread -o "/tmp/$name" ||
      return 1
  done
}

# logged LOG SECONDS NAME PATTERN COMMAND...: step's whole output appended
# to LOG under "== NAME"; the console gets NAME, the output's lines that
# match PATTERN (not the drop-in's own "sdma-nccl" lines) and the exit
# status, the last ${TAIL:-8} of them.
logged() {
  local log=$1 t=$2 name=$3 pattern=$4 tmp
  shift 4
  tmp=$(mktemp)
  step "$t" "$name" "$@" > "$tmp" 2>&1
  { echo "== $name"; cat "$tmp"; } >> "$log"
  echo "== $name"
  grep -aE "$pattern|^exit" "$tmp" | grep -v "^sdma-nccl" | tail -"${TAIL:-8}"
  rm -f "$tmp"
}
