"""Builds the mqajit wheel from the CMake project (pyproject.toml holds the metadata).

    python3 -m build --no-isolation --wheel          # or: pip wheel --no-build-isolation .

The wheel's package `mqajit` holds the Python layer and the extension at its root, and an install
prefix inside it: bin/mqajit (the CLI, run by the `mqajit` console script), lib/libmqajit.so.<soversion>
with include/ for C++ callers, and share/mqajit (the tuning tables, which every binary finds relative to
itself). Shared libraries the binaries need beyond the C/C++ runtime
(spdlog, fmt, SQLite) are copied into lib/ and found through RPATH, as auditwheel would.

Environment:
  MQAJIT_CMAKE_BUILD_DIR  package this configured build tree (it is brought up to date first)
                          instead of configuring a fresh one; it must build the Python binding for
                          this interpreter.
  MQAJIT_CMAKE_ARGS       extra arguments for the fresh configure (e.g. -DMQAJIT_CUDA_ARCHS=90).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# Libraries every Linux with a C++ runtime has (the manylinux policy's list, those mqajit meets);
# anything else a binary needs travels in the wheel.
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libstdc++.so.6",
                    "libgcc_s.so.1", "libutil.so.1", "libresolv.so.2", "linux-vdso.so.1"}


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(mqajit\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no `project(mqajit VERSION x.y.z ...)` to take the version from")
    return match.group(1)


def run(command, **kwargs):
    print("setup.py: " + " ".join(shlex.quote(str(part)) for part in command), flush=True)
    subprocess.run([str(part) for part in command], check=True, **kwargs)


def cache_value(build_dir, name):
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split("=", 1)[1]
    return None


def pybind11_arguments():
    try:
        import pybind11
    except ImportError:
        return []  # CMake finds a system pybind11 (Debian's pybind11-dev)
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


def needed_libraries(binary):
    """(soname, path) of every library `binary` loads that is not a system library (ldd)."""
    listing = subprocess.run(["ldd", str(binary)], check=True, capture_output=True, text=True).stdout
    found = []
    for line in listing.splitlines():
        match = re.match(r"\s*(\S+) => (/\S+)", line)
        if match and match.group(1) not in SYSTEM_LIBRARIES and not match.group(1).startswith("ld-linux"):
            found.append((match.group(1), Path(match.group(2))))
        elif "not found" in line:
            raise RuntimeError(f"{binary} needs {line.split()[0]}, which the loader cannot find here")
    return found


class CMakeBuild(build_ext):
    """Builds with CMake and lays out the package; the one Extension only marks the wheel as
    platform-specific and names the extension file."""

    def run(self):
        build_dir = self.cmake_build_tree()
        staging = Path(self.build_temp).resolve() / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        run(["cmake", "--install", build_dir, "--prefix", staging])
        package = Path(self.build_lib).resolve() / "mqajit"
        shutil.rmtree(package, ignore_errors=True)
        shutil.copytree(staging / cache_value(build_dir, "MQAJIT_PYTHON_INSTALL_DIR") / "mqajit", package)
        for folder in ("bin", "include", "share"):
            shutil.copytree(staging / folder, package / folder)
        # NOTES: a wheel cannot hold symlinks, so lib/ gets libmqajit under its SONAME alone (what
        # the loader asks for); the CMake and pkg-config files, which name the other spellings,
        # stay with `cmake --install`.
        library = next(path for path in (staging / "lib").glob("libmqajit.so.*") if not path.is_symlink())
        soname = subprocess.run(["patchelf", "--print-soname", str(library)], check=True, capture_output=True,
                                text=True).stdout.strip()
        (package / "lib").mkdir()
        shutil.copy2(library, package / "lib" / soname)
        self.bundle_libraries(package, self.check_extension_suffix(package))

    def cmake_build_tree(self):
        for tool in ("cmake", "patchelf", "strip", "ldd"):
            if shutil.which(tool) is None:
                raise RuntimeError(f"building the wheel needs {tool} (Debian: scripts/setup.sh installs it)")
        given = os.environ.get("MQAJIT_CMAKE_BUILD_DIR")
        if given:
            build_dir = Path(given).resolve()
            if not (build_dir / "CMakeCache.txt").is_file():
                raise RuntimeError(f"MQAJIT_CMAKE_BUILD_DIR={given} is not a configured CMake build tree")
            for option, meaning in (("MQAJIT_BUILD_PYTHON", "build the Python binding"),
                                    ("BUILD_SHARED_LIBS", "build libmqajit.so, which the wheel carries")):
                if cache_value(build_dir, option) not in ("ON", "TRUE", "1"):
                    raise RuntimeError(f"{build_dir} does not {meaning}: reconfigure it with -D{option}=ON")
        else:
            build_dir = Path(self.build_temp).resolve() / "cmake"
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            run(["cmake", "-S", ROOT, "-B", build_dir, *generator, "-DCMAKE_BUILD_TYPE=Release",
                 "-DBUILD_SHARED_LIBS=ON", "-DMQAJIT_BUILD_TESTS=OFF", "-DMQAJIT_BUILD_BENCHMARKS=OFF",
                 "-DMQAJIT_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}", *pybind11_arguments(),
                 *shlex.split(os.environ.get("MQAJIT_CMAKE_ARGS", ""))])
        jobs = ["--parallel", str(self.parallel)] if self.parallel else []
        # NOTES: what `cmake --install` installs (the torch reader too, where it is built), no tests.
        run(["cmake", "--build", build_dir, "--target", "mqajit_installed", *jobs])
        return build_dir

    def check_extension_suffix(self, package):
        extension = package / ("_mqajit" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not extension.is_file():
            built = sorted(path.name for path in package.glob("_mqajit.*.so"))
            raise RuntimeError(f"the build tree's extension is {built}, but {sys.executable} imports {extension.name}: "
                               "configure it with -DPython3_EXECUTABLE=" + sys.executable)
        return extension

    def bundle_libraries(self, package, extension):
        # NOTES: mqajit._mqajit_torch, where it was built, keeps its RPATH to the torch it was built
        # against (the engine's own): bundling torch's libraries would copy torch into the wheel.
        lib = package / "lib"
        binaries = {extension: "$ORIGIN/lib", package / "bin" / "mqajit": "$ORIGIN/../lib"}
        binaries.update({path: "$ORIGIN" for path in lib.glob("libmqajit.so.*")})
        bundled = {}
        for binary in binaries:
            for soname, path in needed_libraries(binary):
                bundled.setdefault(soname, path)
        for soname, path in sorted(bundled.items()):
            shutil.copy2(path, lib / soname)
            (lib / soname).chmod(0o755)
            binaries[lib / soname] = "$ORIGIN"
        # NOTES: debug information would triple the wheel's size; symbols stay for backtraces.
        for binary, rpath in binaries.items():
            run(["strip", "--strip-debug", binary])
            run(["patchelf", "--set-rpath", rpath, binary])
        print(f"setup.py: bundled {', '.join(sorted(bundled)) or 'no library'} into mqajit/lib", flush=True)

    def get_outputs(self):
        return []


build_base = ROOT / "build" / "wheel"
build_base.mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    packages=[],
    ext_modules=[Extension("mqajit._mqajit", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(build_base.relative_to(ROOT))},
             "egg_info": {"egg_base": str(build_base.relative_to(ROOT))}},
    zip_safe=False,
)
