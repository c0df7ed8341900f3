"""The sdma-launch console script of a pip-installed package: runs the
launcher binary installed beside this file (sdma-launch --help)."""
import os
import sys


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "sdma-launch")
    if not os.access(exe, os.X_OK):
        sys.stderr.write("sdma-launch: %s is missing: this package was not "
                         "installed by pip (use the build tree's "
                         "bin/sdma-launch)\n" % exe)
        return 2
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
