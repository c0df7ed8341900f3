#!/usr/bin/env bash
# Installs every Debian package sdma needs (Debian 12 "bookworm"; LLVM/MLIR 22
# come from bookworm-security). Idempotent: when everything is present it only
# runs dpkg-query and exits within a second.
#
#   scripts/install-deps.sh          # compiler + runtime + tests
#   SDMA_WITH_HIP=0 scripts/...      # skip the (compile-only) AMD HIP packages
set -euo pipefail

pkgs=(
  cmake ninja-build g++ python3
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  nlohmann-json3-dev libzstd-dev zlib1g-dev libedit-dev libcurl4-openssl-dev
  # lit (llvm-22-tools ships /usr/lib/llvm-22/bin/lit, FileCheck, not);
  # psutil lets lit kill a test past its time limit (test/lit.cfg.py)
  python3-psutil
  # clang-22 builds the libFuzzer target and the gfx942 device-code check
  clang-22 libclang-rt-22-dev lld-22
  # runtime unit tests; the plan schema test on the compiler side
  libgtest-dev python3-jsonschema
  # tests' tools: pgrep (compile-timeout.test), nm/readelf (binutils)
  procps binutils
  # the C API's MPI adapter test (mpirun, sdma_mpi.h)
  libopenmpi-dev openmpi-bin
  # the Python package (pybind11) and its tests (torch CPU, mpi4py)
  python3-dev pybind11-dev python3-numpy python3-torch python3-mpi4py
  python3-venv python3-setuptools python3-wheel
)
if [ "${SDMA_WITH_HIP:-1}" = 1 ]; then
  pkgs+=(libamdhip64-dev libhiprtc-builtins5 rocm-device-libs)
fi

missing=()
for p in "${pkgs[@]}"; do
  [[ $p == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
