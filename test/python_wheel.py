#!/usr/bin/python3
"""The Python package installs as Python packages do (test/python_wheel.cmake).

    python_wheel.py --source SRC --python PY [--build-dir DIR]

1. `pip wheel SRC` with the venv's pip (the build backend of pyproject.toml,
   pip's build isolation on, no package index), reusing the configured build
   tree DIR (--build-dir: its decomposed_python target is brought up to
   date, nothing is compiled when it is), or without --build-dir in the
   backend's own build folder, as a user's `pip install .` does (minutes
   the first time: see the README's Python section);
2. the wheel installed into a fresh venv (--system-site-packages, so that
   Debian's NumPy satisfies its one dependency), imported from outside the
   tree: __version__ and the installed metadata's version equal version.h's,
   the stubs are installed beside the extension, and the shipped example
   reads back as examples/make_example.py wrote it;
3. `pip uninstall decomposed` removes every file it installed;
4. the same wheel into Debian's own interpreter the way Debian allows it
   (--user --break-system-packages, into a temporary user base), imported
   and uninstalled.

Exit 77 (ctest: skipped) with the reason when pip or venv is missing.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

SKIP = 77
failures = []
passes = []
timings = []


def check(name, ok, detail=""):
    if ok:
        passes.append(name)
        print(f"ok   {name}")
    else:
        failures.append(name)
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))


def run(cmd, env, cwd, what, show_failure=True):
    start = time.monotonic()
    r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    timings.append((what, time.monotonic() - start))
    if r.returncode != 0 and show_failure:
        print(f"$ {' '.join(cmd)}\n{r.stdout}")
    return r


def tree_version(source):
    with open(os.path.join(source, "include", "decomposed", "version.h")) as f:
        return re.search(r'^#define DECOMPOSED_VERSION "([0-9.]+)"$', f.read(),
                         re.M).group(1)


def clean_env(**extra):
    """The environment without anything that would make Python find the
    build tree's package or pip reach out (no index, no cache)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env.update(PIP_NO_INDEX="1", PIP_NO_CACHE_DIR="1", PIP_NO_INPUT="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


# Run by the installed interpreter, from a directory outside the tree.
IMPORT_CHECK = r"""
import importlib.metadata, json, os, sys
import numpy as np
import decomposed
ex = sys.argv[1]
with decomposed.open(ex) as f:
    a, b = f.inputs[0].numpy(), f.inputs[1].numpy()
    out = f.outputs[0].numpy()
    name = f.module_name
pkg = os.path.dirname(decomposed.__file__)
print(json.dumps({
    "file": decomposed.__file__,
    "version": decomposed.__version__,
    "metadata_version": importlib.metadata.version("decomposed"),
    "stubs": sorted(n for n in os.listdir(pkg) if n.endswith(".pyi") or n == "py.typed"),
    "module_name": name,
    "input0": a.tolist(), "input1": b.tolist(),
    "output_is_twice_input": bool(np.array_equal(out, a * 2)),
    "verify": decomposed.verify(ex),
}))
"""


def import_check(python, env, cwd, example, where, version, label):
    r = run([python, "-c", IMPORT_CHECK, example], env, cwd, f"import ({label})")
    check(f"{label}: imports outside the tree", r.returncode == 0, r.stdout[-2000:])
    if r.returncode != 0:
        return
    import json
    got = json.loads(r.stdout.strip().splitlines()[-1])
    check(f"{label}: imported from {where}",
          os.path.realpath(got["file"]).startswith(os.path.realpath(where) + os.sep),
          got["file"])
    check(f"{label}: __version__ == version.h's {version}",
          got["version"] == version, got["version"])
    check(f"{label}: installed metadata's version", got["metadata_version"] == version,
          got["metadata_version"])
    check(f"{label}: stubs installed", got["stubs"] == ["_decomposed.pyi", "py.typed"],
          str(got["stubs"]))
    # examples/make_example.py: input 0 F32[2,3], input 1 S32[4], output 0 =
    # input 0 * 2, module "example".
    check(f"{label}: reads the shipped example",
          got["module_name"] == "example"
          and got["input0"] == [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]
          and got["input1"] == [-2, -1, 0, 7]
          and got["output_is_twice_input"] and got["verify"] == [], str(got))


def gone(python, env, cwd, label):
    r = run([python, "-c", "import decomposed"], env, cwd,
            f"import after uninstall ({label})", show_failure=False)
    check(f"{label}: not importable after uninstall",
          r.returncode != 0 and "No module named 'decomposed'" in r.stdout, r.stdout[-500:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--build-dir")
    args = ap.parse_args()
    source = os.path.abspath(args.source)
    python = args.python
    version = tree_version(source)
    example = os.path.join(source, "examples", "example.decomposed_hlo_snapshot")

    for mod, pkg in (("venv", "python3-venv"), ("ensurepip", "python3-venv"),
                     ("pip", "python3-pip")):
        r = subprocess.run([python, "-c", f"import {mod}"], capture_output=True)
        if r.returncode != 0:
            print(f"SKIP: {python} has no {mod} module (Debian: apt-get install "
                  f"{pkg}; scripts/setup-debian.sh --python installs it)")
            return SKIP

    tmp = tempfile.mkdtemp(prefix="decomposed-wheel-")
    try:
        outside = os.path.join(tmp, "elsewhere")
        os.mkdir(outside)
        env = clean_env()

        # 1. The wheel, by pip run by the venv's interpreter. --without-pip:
        # the venv sees Debian's pip through its system site-packages, which
        # saves copying pip into it (ensurepip: 3 to 12 s here); pip run by
        # the venv's interpreter installs into the venv all the same.
        venv = os.path.join(tmp, "venv")
        r = run([python, "-m", "venv", "--system-site-packages", "--without-pip", venv],
                env, tmp, "python3 -m venv --system-site-packages --without-pip")
        if r.returncode != 0:
            print("SKIP: venv could not be created (python3-venv missing?)")
            return SKIP
        vpy = os.path.join(venv, "bin", "python")
        dist = os.path.join(tmp, "dist")
        settings = ["--config-settings", f"build-dir={args.build_dir}"] \
            if args.build_dir else []
        r = run([vpy, "-m", "pip", "wheel", source, "--no-deps", "-w", dist,
                 *settings], env, outside,
                "pip wheel ." + (" (build tree reused)" if args.build_dir
                                 else " (the backend's build folder)"))
        check("pip wheel . builds a wheel", r.returncode == 0, r.stdout[-3000:])
        wheels = glob.glob(os.path.join(dist, "decomposed-*.whl"))
        check("one wheel, named for this interpreter",
              len(wheels) == 1 and os.path.basename(wheels[0]).startswith(
                  f"decomposed-{version}-cp{sys.version_info[0]}"), str(wheels))
        if len(wheels) != 1:
            return 1
        wheel = wheels[0]
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
        ext = [n for n in names if re.fullmatch(r"decomposed/_decomposed\..*\.so", n)]
        check("wheel holds the package, the extension and the stubs",
              len(ext) == 1 and {"decomposed/__init__.py", "decomposed/_decomposed.pyi",
                                 "decomposed/py.typed",
                                 f"decomposed-{version}.dist-info/RECORD"} <= names,
              str(sorted(names)))

        # 2. Installed into the venv, imported from outside the tree.
        r = run([vpy, "-m", "pip", "install", wheel], env, outside, "pip install (venv)")
        check("pip install of the wheel into a venv", r.returncode == 0, r.stdout[-2000:])
        site = subprocess.run([vpy, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                              capture_output=True, text=True, env=env).stdout.strip()
        import_check(vpy, env, outside, example, site, version, "venv")

        # 3. Uninstalled: nothing of it is left.
        r = run([vpy, "-m", "pip", "uninstall", "-y", "decomposed"], env, outside,
                "pip uninstall (venv)")
        check("pip uninstall decomposed (venv)", r.returncode == 0, r.stdout[-2000:])
        left = [n for n in os.listdir(site) if n.startswith("decomposed")]
        check("uninstall leaves no file of the package", left == [], str(left))
        gone(vpy, env, outside, "venv")

        # 4. Debian's own interpreter, as Debian allows it (PEP 668).
        userbase = os.path.join(tmp, "userbase")
        uenv = clean_env(PYTHONUSERBASE=userbase)
        r = run([python, "-m", "pip", "install", "--user", "--break-system-packages",
                 wheel], uenv, outside, "pip install --user --break-system-packages")
        check("pip install --user --break-system-packages", r.returncode == 0,
              r.stdout[-2000:])
        import_check(python, uenv, outside, example, userbase, version, "system python")
        r = run([python, "-m", "pip", "uninstall", "-y", "--break-system-packages",
                 "decomposed"], uenv, outside, "pip uninstall (system python, --user)")
        check("pip uninstall decomposed (system python)", r.returncode == 0, r.stdout[-2000:])
        gone(python, uenv, outside, "system python")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("\ntimings:")
    for what, secs in timings:
        print(f"  {secs:6.1f} s  {what}")
    print(f"  {sum(s for _, s in timings):6.1f} s  in all")
    print(f"\nwheel: {len(passes)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
