"""pip install runtime/python: builds the runtime's libsdma.so and the
extension _sdma with CMake (runtime/CMakeLists.txt, no MLIR) and installs
the package sdma with both inside it. Needs cmake, a C++17 compiler,
nlohmann/json and pybind11 (or torch's copy of its headers)."""
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


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(self.build_temp)
        os.makedirs(build, exist_ok=True)
        subprocess.check_call([
            "cmake", "-S", RUNTIME, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            "-DPython3_EXECUTABLE=" + sys.executable,
            "-DSDMA_PYTHON_RPATH_ORIGIN=ON"])
        subprocess.check_call(["cmake", "--build", build, "--target", "_sdma",
                               "-j", str(os.cpu_count() or 2)])
        target = os.path.dirname(os.path.abspath(self.get_ext_fullpath(
            ext.name)))
        os.makedirs(target, exist_ok=True)
        for pattern in ("python/sdma/_sdma*.so", "lib/libsdma.so*"):
            for path in glob.glob(os.path.join(build, pattern)):
                shutil.copy2(path, target, follow_symlinks=True)


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
    python_requires=">=3.8",
)
