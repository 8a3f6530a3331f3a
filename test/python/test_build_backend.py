"""The build backend of pyproject.toml (python/build_backend.py) without
building: the metadata it writes and the sdist it packs.
test/python_wheel.py builds, installs and uninstalls the wheel."""
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def tree_version():
    with open(os.path.join(SOURCE, "include", "decomposed", "version.h")) as f:
        m = re.search(r'^#define DECOMPOSED_VERSION "(\d+)\.(\d+)\.(\d+)"$',
                      f.read(), re.M)
    assert m, "version.h has no DECOMPOSED_VERSION"
    return ".".join(m.groups())


def backend():
    sys.path.insert(0, os.path.join(SOURCE, "python"))
    try:
        import build_backend
    finally:
        sys.path.pop(0)
    return build_backend


def _pyproject_project():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(SOURCE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def test_pyproject_takes_its_version_from_the_header():
    p = _pyproject_project()
    assert "version" not in p and p["dynamic"] == ["version"]
    build_backend = backend()
    assert build_backend._version() == tree_version()
    meta = build_backend._metadata()
    assert f"\nVersion: {tree_version()}\n" in meta
    assert "\nRequires-Dist: numpy\n" in meta


def test_sdist_holds_the_build_inputs(tmp_path):
    """build_sdist (PEP 517's other mandatory hook): what CMake reads to
    build the extension, the package, and PKG-INFO with version.h's
    version; no caches."""
    import tarfile
    name = backend().build_sdist(str(tmp_path))
    v = tree_version()
    assert name == f"decomposed-{v}.tar.gz"
    with tarfile.open(tmp_path / name) as t:
        names = set(t.getnames())
        pkg_info = t.extractfile(f"decomposed-{v}/PKG-INFO").read().decode()
    for need in ("CMakeLists.txt", "pyproject.toml", "python/build_backend.py",
                 "include/decomposed/version.h", "python/src/module.cc",
                 "python/decomposed/_decomposed.pyi", "python/decomposed/py.typed",
                 "proto/hlo.proto", "src/capture/plan.cc", "examples/cli/main.cc"):
        assert f"decomposed-{v}/{need}" in names, need
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if n.split("/")[1:2] in (["build"], ["test"], ["bench"])]
    assert f"\nVersion: {v}\n" in pkg_info


def test_no_build_requirements():
    """Nothing for pip to fetch into its isolated build environment."""
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(SOURCE, "pyproject.toml"), "rb") as f:
        system = tomllib.load(f)["build-system"]
    assert system["requires"] == []
    assert system["build-backend"] == "build_backend"
    assert system["backend-path"] == ["python"]
    b = backend()
    assert b.get_requires_for_build_wheel() == []
    assert b.get_requires_for_build_sdist() == []


def test_wheel_tag_is_this_interpreters():
    import sysconfig
    py, abi, plat = backend()._tag().split("-")
    assert py == f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert abi == py + sys.abiflags
    assert plat == sysconfig.get_platform().replace("-", "_").replace(".", "_")


def test_metadata_without_building(tmp_path):
    name = backend().prepare_metadata_for_build_wheel(str(tmp_path))
    assert name == f"decomposed-{tree_version()}.dist-info"
    assert sorted(os.listdir(tmp_path / name)) == ["METADATA", "WHEEL", "top_level.txt"]
    wheel = (tmp_path / name / "WHEEL").read_text()
    assert "Root-Is-Purelib: false\n" in wheel
    assert f"Tag: {backend()._tag()}\n" in wheel


def test_refusals(tmp_path):
    b = backend()
    with pytest.raises(b.BuildError, match="unknown --config-settings: bogus"):
        b.build_wheel(str(tmp_path), {"bogus": "1"})
    # A configured build tree of another interpreter is not used.
    other = tmp_path / "other"
    other.mkdir()
    (other / "CMakeCache.txt").write_text(
        "Python_EXECUTABLE:FILEPATH=/nonexistent/python3\n"
        "DECOMPOSED_BUILD_PYTHON:BOOL=ON\n")
    with pytest.raises(b.BuildError, match="configured for Python '/nonexistent/python3'"):
        b.build_wheel(str(tmp_path), {"build-dir": str(other)})
    (other / "CMakeCache.txt").write_text(
        f"Python_EXECUTABLE:FILEPATH={sys.executable}\n"
        "DECOMPOSED_BUILD_PYTHON:BOOL=OFF\n")
    with pytest.raises(b.BuildError, match="DECOMPOSED_BUILD_PYTHON is off"):
        b.build_wheel(str(tmp_path), {"build-dir": str(other)})
    with pytest.raises(b.BuildError, match="jobs='x': expected a number"):
        b._jobs({"jobs": "x"})
