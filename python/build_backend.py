"""The PEP 517 build backend of the Python package (pyproject.toml names it).

Python's standard library only, so that pip's isolated build environment
needs nothing from a package index (there is none on an offline Debian
machine, and Debian's setuptools is not visible inside that environment):

  build_wheel    CMake on this project for the one target decomposed_python
                 (the pybind11 extension and the libraries it links; no
                 tests, no benchmarks, no CLI), against the interpreter that
                 runs the backend, i.e. the one running pip; then a wheel
                 of python/decomposed/ (the .py files, the extension's stubs
                 and py.typed) plus the built extension.
  build_sdist    the sources that build needs, as a .tar.gz.
  prepare_metadata_for_build_wheel
                 the .dist-info without building (pip resolves NumPy with it).

The version is DECOMPOSED_VERSION in include/decomposed/version.h, the one
version number in the tree. Editable installs (PEP 660) are not offered:
develop from the build tree (PYTHONPATH=build/python).

Settings (pip wheel . --config-settings KEY=VALUE):
  build-dir=DIR  build in DIR. A DIR that CMake has already configured
                 (say the build/ of scripts/build.sh) is used as it is: only
                 its decomposed_python target is brought up to date, so
                 nothing is compiled again when it is (the test suite does
                 this); its Python must be the interpreter running pip.
                 Default: build/pip-<interpreter> in the source tree,
                 configured here, kept between runs.
  jobs=N         parallel compile jobs (default: $CMAKE_BUILD_PARALLEL_LEVEL,
                 else the number of CPUs).
ccache is used when it is on PATH (unless $CMAKE_CXX_COMPILER_LAUNCHER says
otherwise).
"""
import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "decomposed"
PACKAGE_DIR = os.path.join(ROOT, "python", PACKAGE)
TARGET = "decomposed_python"
VERSION_HEADER = os.path.join(ROOT, "include", "decomposed", "version.h")
SETUP_HINT = ("scripts/setup-debian.sh --python installs what the build "
              "needs (CMake, g++, Ninja, the libraries, pybind11-dev, "
              "python3-dev)")
# What an sdist holds: what CMake reads when configuring and building the
# extension (the top-level CMakeLists.txt also defines the CLIs' targets,
# so their sources come along), and the package's own files.
SDIST_PATHS = ["CMakeLists.txt", "CMakePresets.json", "README.md",
               "pyproject.toml", "cmake", "include", "src", "proto", "python",
               "examples"]
# The [project] keys this backend writes into the metadata; any other key
# is refused rather than dropped.
PROJECT_KEYS = {"name", "description", "readme", "requires-python",
                "dependencies", "dynamic"}


class BuildError(RuntimeError):
    pass


# --- metadata ----------------------------------------------------------------

def _version():
    with open(VERSION_HEADER, encoding="utf-8") as f:
        m = re.search(r'^#define DECOMPOSED_VERSION "(\d+\.\d+\.\d+)"$',
                      f.read(), re.M)
    if not m:
        raise BuildError(f"{VERSION_HEADER}: no #define DECOMPOSED_VERSION "
                         f"\"X.Y.Z\"")
    return m.group(1)


def _project():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib
        except ImportError:
            raise BuildError("reading pyproject.toml needs Python 3.11 "
                             "(tomllib) or the tomli package") from None
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    unknown = set(project) - PROJECT_KEYS
    if unknown:
        raise BuildError("pyproject.toml [project]: this backend does not "
                         "write " + ", ".join(sorted(unknown)))
    if project.get("dynamic") != ["version"]:
        raise BuildError("pyproject.toml [project]: dynamic must be "
                         "[\"version\"] (the version is version.h's)")
    return project


def _metadata():
    """The METADATA file (core metadata 2.1)."""
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {_version()}",
        f"Summary: {p['description']}",
    ]
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    for d in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {d}")
    body = ""
    if "readme" in p:
        with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _dist_name():
    return f"{_project()['name']}-{_version()}"


def _tag():
    """<python>-<abi>-<platform> of the running interpreter (PEP 425), which
    the extension is built for."""
    impl = {"cpython": "cp", "pypy": "pp"}.get(sys.implementation.name,
                                              sys.implementation.name)
    py = f"{impl}{sys.version_info[0]}{sys.version_info[1]}"
    if impl == "cp":
        abi = f"cp{sys.version_info[0]}{sys.version_info[1]}{sys.abiflags}"
    else:
        soabi = sysconfig.get_config_var("SOABI") or "none"
        abi = re.sub(r"[^A-Za-z0-9]", "_", soabi)
    plat = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
    return f"{py}-{abi}-{plat}"


def _wheel_file():
    return ("Wheel-Version: 1.0\n"
            "Generator: decomposed python/build_backend.py\n"
            "Root-Is-Purelib: false\n"
            f"Tag: {_tag()}\n")


def _dist_info_files():
    return {"METADATA": _metadata().encode("utf-8"),
            "WHEEL": _wheel_file().encode("utf-8"),
            "top_level.txt": f"{PACKAGE}\n".encode("utf-8")}


# --- building the extension ------------------------------------------------

def _log(msg):
    print(f"decomposed build: {msg}", file=sys.stderr, flush=True)


def _run(cmd, what):
    _log("$ " + " ".join(cmd))
    # The build's output goes to stderr, which pip shows on failure (and
    # with -v).
    r = subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise BuildError(f"{what} failed (exit {r.returncode}); see the "
                         f"output above. {SETUP_HINT}.")


def _cache_value(build_dir, name):
    path = os.path.join(build_dir, "CMakeCache.txt")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep and key.split(":")[0] == name:
                return value
    return None


def _default_build_dir():
    # One per interpreter build (the venvs of one interpreter share it).
    ident = f"{sys.base_prefix}|{sys.version}|{sysconfig.get_config_var('EXT_SUFFIX')}"
    h = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:8]
    return os.path.join(ROOT, "build", f"pip-{sys.implementation.cache_tag}-{h}")


def _jobs(settings):
    j = settings.get("jobs") or os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL")
    try:
        return max(1, int(j)) if j else (os.cpu_count() or 1)
    except ValueError:
        raise BuildError(f"jobs={j!r}: expected a number") from None


def _configure(build_dir):
    args = ["cmake", "-S", ROOT, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            "-DDECOMPOSED_BUILD_TESTS=OFF", "-DDECOMPOSED_BUILD_BENCH=OFF",
            "-DDECOMPOSED_INSTALL=OFF", "-DDECOMPOSED_BUILD_PYTHON=ON",
            f"-DPython_EXECUTABLE={sys.executable}"]
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        launcher = os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER")
        if launcher is None and shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    _run(args, "configuring with CMake")


def _build_extension(settings):
    """Builds the target; returns the path of the extension it made."""
    if not shutil.which("cmake"):
        raise BuildError(f"CMake is not on PATH. {SETUP_HINT}.")
    given = settings.get("build-dir")
    build_dir = os.path.abspath(given) if given else _default_build_dir()
    configured = os.path.exists(os.path.join(build_dir, "CMakeCache.txt"))
    if given and configured:
        # Someone else's build tree: use it as it is configured, if its
        # Python is this one (same headers and ABI).
        theirs = _cache_value(build_dir, "Python_EXECUTABLE")
        if not theirs or os.path.realpath(theirs) != os.path.realpath(
                sys.executable):
            raise BuildError(
                f"build-dir={given}: configured for Python {theirs!r}, not "
                f"for {sys.executable} (which runs pip); use another "
                f"build-dir, or none")
        if _cache_value(build_dir, "DECOMPOSED_BUILD_PYTHON") != "ON":
            raise BuildError(f"build-dir={given}: DECOMPOSED_BUILD_PYTHON "
                             f"is off there (pybind11 or python3-dev were "
                             f"not found when it was configured)")
    else:
        try:
            os.makedirs(build_dir, exist_ok=True)
        except OSError as e:
            if given:
                raise
            import tempfile  # a read-only source tree: build elsewhere
            build_dir = tempfile.mkdtemp(prefix="decomposed-build-")
            _log(f"cannot create {e.filename} ({e.strerror}): building in "
                 f"{build_dir}")
        _configure(build_dir)
    start = time.monotonic()
    _run(["cmake", "--build", build_dir, "--target", TARGET,
          "-j", str(_jobs(settings))], f"building {TARGET}")
    _log(f"{TARGET} up to date in {time.monotonic() - start:.1f} s "
         f"({build_dir})")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    ext = os.path.join(build_dir, "python", PACKAGE, "_decomposed" + suffix)
    if not os.path.isfile(ext):
        raise BuildError(f"{TARGET} built no {ext}: the extension was built "
                         f"for another interpreter than {sys.executable}")
    return ext


# --- archives ------------------------------------------------------------------

def _package_files():
    """(archive name, path) of the package's source files."""
    out = []
    for name in sorted(os.listdir(PACKAGE_DIR)):
        path = os.path.join(PACKAGE_DIR, name)
        if os.path.isfile(path) and (name.endswith((".py", ".pyi"))
                                     or name == "py.typed"):
            out.append((f"{PACKAGE}/{name}", path))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return [name, "sha256=" + digest.rstrip(b"=").decode("ascii"), str(len(data))]


def _write_wheel(wheel_directory, files):
    """files: (archive name, bytes, executable). Returns the wheel's name."""
    name = f"{_dist_name()}-{_tag()}.whl"
    dist_info = f"{_dist_name()}.dist-info"
    entries = list(files) + [(f"{dist_info}/{n}", data, False)
                             for n, data in _dist_info_files().items()]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arcname, data, _ in entries:
        writer.writerow(_record_line(arcname, data))
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode("utf-8"),
                    False))
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, name)
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data, executable in entries:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, path)
    return name


# --- PEP 517 hooks -----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = f"{_dist_name()}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    for n, data in _dist_info_files().items():
        with open(os.path.join(metadata_directory, dist_info, n), "wb") as f:
            f.write(data)
    return dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    settings = dict(config_settings or {})
    unknown = set(settings) - {"build-dir", "jobs"}
    if unknown:
        raise BuildError("unknown --config-settings: " + ", ".join(sorted(unknown))
                         + " (known: build-dir, jobs)")
    ext = _build_extension(settings)
    files = []
    for arcname, path in _package_files():
        with open(path, "rb") as f:
            files.append((arcname, f.read(), False))
    with open(ext, "rb") as f:
        files.append((f"{PACKAGE}/{os.path.basename(ext)}", f.read(), True))
    name = _write_wheel(wheel_directory, files)
    _log(f"wrote {os.path.join(wheel_directory, name)}")
    return name


def build_sdist(sdist_directory, config_settings=None):
    base = _dist_name()
    name = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    path = os.path.join(sdist_directory, name)

    def keep(info):
        parts = info.name.split("/")
        if "__pycache__" in parts or info.name.endswith(".pyc"):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as t:
        for p in SDIST_PATHS:
            src = os.path.join(ROOT, p)
            if os.path.exists(src):
                t.add(src, arcname=f"{base}/{p}", filter=keep)
        pkg_info = _metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
        t.addfile(info, io.BytesIO(pkg_info))
    os.replace(path + ".part", path)
    return name
