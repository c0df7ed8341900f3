# -*- Python -*- lit configuration for sdma.
import os

import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "SDMA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".xml"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sdma_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "inputs"]

# No test may hang the suite: one that runs past this many seconds is
# killed with its children and reported as TIMEOUT, by name (lit needs
# psutil for this: python3-psutil, installed by scripts/install-deps.sh).
# The slowest test takes ~3 minutes on 2 cores; SDMA_LIT_TIMEOUT overrides.
try:
    import psutil  # noqa: F401
    lit_config.maxIndividualTestTime = int(
        os.environ.get("SDMA_LIT_TIMEOUT", "900"))
except ImportError:
    lit_config.warning("python3-psutil is missing: tests run without a "
                       "time limit (scripts/install-deps.sh installs it)")

# The CPU device's kernels, compiled by the host compiler, are most of the
# suite's time; its jobs (each with a cache of its own) share the objects
# (SDMA_HOST_OBJECT_DIR), made afresh by each run of the suite. A test of
# the cache itself unsets it (env -u).
host_objects = os.path.join(config.test_exec_root, "host-objects")
shutil.rmtree(host_objects, ignore_errors=True)
os.makedirs(host_objects, mode=0o700, exist_ok=True)
config.environment["SDMA_HOST_OBJECT_DIR"] = host_objects

config.substitutions.append(("%schedules", os.path.join(config.sdma_src_root, "schedules")))
config.substitutions.append(("%sdma_src", config.sdma_src_root))
config.substitutions.append(("%sdma_bin", config.sdma_tools_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["sdma-opt", "sdma-translate", "sdma-run"], [config.sdma_tools_dir])
# sdma-sim is found on PATH instead of substituted: a substitution would also
# rewrite `--backend=sdma-sim`.
llvm_config.with_environment("PATH", config.sdma_tools_dir, append_path=True)

# What the machine can compile or run GPU code with (the GPU suite and the
# no-GPU compile checks are gated on these).
import glob
import shutil
import subprocess
import sys

if glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*") or glob.glob(
        "/usr/lib/x86_64-linux-gnu/libnvrtc.so*"):
    config.available_features.add("nvrtc")
if glob.glob("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5") and glob.glob(
        "/usr/include/hip/hiprtc.h"):
    config.available_features.add("hiprtc")
if shutil.which("clang-22"):
    config.available_features.add("clang")
try:
    if subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                      timeout=20).returncode == 0:
        config.available_features.add("cuda-gpu")
except (OSError, subprocess.TimeoutExpired):
    pass

# mpirun, each job bounded: a job whose ranks failed has been seen to leave
# OpenMPI's mpirun crashing in its PMIx finalize; one that hangs there is
# killed after 300 s (a failure test's `! %mpirun` then still passes on
# what its ranks printed; a job that should succeed fails, by name).
config.substitutions.append(("%mpirun", "timeout -k 10 300 mpirun"))

# mpirun and the MPI build of the C API example (Debian's OpenMPI).
if shutil.which("mpirun") and os.path.exists(
        os.path.join(config.sdma_tools_dir, "sdma-example-c-allgather-mpi")):
    config.available_features.add("mpi")
    # The multi-node example with NCCL as its transport (built where CUDA's
    # nccl.h is; linked to sdma's NCCL drop-in).
    if os.path.exists(os.path.join(config.sdma_tools_dir,
                                   "sdma-example-c-multinode-nccl")):
        config.available_features.add("multinode-nccl")

# The Python package's tests need torch (Debian's python3-torch) for the
# interpreter lit runs, the package built, and for MPI mpi4py.
config.substitutions.append(("%sdma_obj", config.sdma_obj_root))
def _imports(module):
    try:
        return subprocess.run([sys.executable, "-c", "import " + module],
                              capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
if os.path.exists(os.path.join(config.sdma_obj_root, "python", "sdma",
                               "__init__.py")) and _imports("torch"):
    config.available_features.add("python-torch")
    if _imports("mpi4py"):
        config.available_features.add("mpi4py")
