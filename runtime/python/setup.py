"""pip install runtime/python: builds the runtime's libsdma.so, the
extension _sdma and the launcher with CMake (runtime/CMakeLists.txt, no
MLIR) and installs the package sdma with them inside it. Needs cmake, a
C++17 compiler, nlohmann/json and pybind11 (or torch's copy of its
headers).

The schedule compiler (libsdma-compiler.so) needs MLIR, which this build
does not: where a full build has made one (SDMA_COMPILER_LIBRARY, else
SDMA_BUILD_DIR/lib, else the repository's build/lib), it goes into the
package too, with every built-in collective precompiled for 1 to 8 ranks
(sdma/programs): a collective then runs with neither the build tree nor
LLVM on the machine. Without one, the package says so and needs
SDMA_COMPILER_LIBRARY or SDMA_PROGRAM_DIR at run time."""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.dirname(HERE)
PRECOMPILED_RANKS = "1,2,3,4,5,6,7,8"


def _compiler_library():
    """A full build's libsdma-compiler.so, or None."""
    build = os.environ.get("SDMA_BUILD_DIR")
    for path in (os.environ.get("SDMA_COMPILER_LIBRARY"),
                 build and os.path.join(build, "lib", "libsdma-compiler.so"),
                 os.path.join(RUNTIME, "..", "build", "lib",
                              "libsdma-compiler.so")):
        if path and os.path.isfile(path):
            return os.path.abspath(path)
    return None


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(self.build_temp)
        os.makedirs(build, exist_ok=True)
        subprocess.check_call([
            "cmake", "-S", RUNTIME, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            "-DPython3_EXECUTABLE=" + sys.executable,
            "-DSDMA_PYTHON_RPATH_ORIGIN=ON"])
        subprocess.check_call(["cmake", "--build", build, "--target", "_sdma",
                               "sdma-launch", "sdma-precompile",
                               "-j", str(os.cpu_count() or 2)])
        target = os.path.dirname(os.path.abspath(self.get_ext_fullpath(
            ext.name)))
        os.makedirs(target, exist_ok=True)
        for pattern in ("python/sdma/_sdma*.so", "lib/libsdma.so*",
                        "bin/sdma-launch"):
            for path in glob.glob(os.path.join(build, pattern)):
                shutil.copy2(path, target, follow_symlinks=True)
        compiler = _compiler_library()
        if not compiler:
            sys.stderr.write(
                "sdma: no libsdma-compiler.so (build the project first, or "
                "set SDMA_BUILD_DIR): the package will need "
                "SDMA_COMPILER_LIBRARY or SDMA_PROGRAM_DIR to run a "
                "collective\n")
            return
        shutil.copy2(compiler, os.path.join(target, "libsdma-compiler.so"))
        programs = os.path.join(target, "programs")
        shutil.rmtree(programs, ignore_errors=True)
        env = dict(os.environ, SDMA_COMPILER_LIBRARY=compiler,
                   SDMA_CACHE_DIR=os.path.join(build, "cache"))
        subprocess.check_call([os.path.join(build, "bin", "sdma-precompile"),
                               "--ranks=" + PRECOMPILED_RANKS, programs],
                              env=env, stdout=subprocess.DEVNULL)


def _version():
    """MAJOR.MINOR.PATCH from sdma.h, the one definition."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "include", "sdma", "sdma.h")) as f:
        text = f.read()
    parts = [re.search(r"#define SDMA_%s (\d+)" % k, text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


setup(
    name="sdma",
    version=_version(),
    description="sdma collectives for torch (one process per GPU)",
    packages=["sdma"],
    package_dir={"sdma": "sdma"},
    ext_modules=[Extension("sdma._sdma", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": ["sdma-launch=sdma._launch:main"]},
    python_requires=">=3.8",
)
