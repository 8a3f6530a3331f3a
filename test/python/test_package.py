"""The package as a package: one version number, type stubs that name
exactly what the extension defines, the library's dtype tables (no copies
in Python), PyTorch optional at run time, and capture plan / bundle ls
through the same library functions as the CLI."""
import ast
import json
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import decomposed
from decomposed import _decomposed

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(SOURCE, "examples", "example.decomposed_hlo_snapshot")
STUBS = os.path.join(SOURCE, "python", "decomposed", "_decomposed.pyi")
ENV = "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_"


def run(cli, *args, env=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, env=env)


# --- the version ----------------------------------------------------------------

def tree_version():
    with open(os.path.join(SOURCE, "include", "decomposed", "version.h")) as f:
        m = re.search(r'^#define DECOMPOSED_VERSION "(\d+)\.(\d+)\.(\d+)"$',
                      f.read(), re.M)
    assert m, "version.h has no DECOMPOSED_VERSION"
    return ".".join(m.groups())


def test_one_version(cli):
    v = tree_version()
    assert decomposed.__version__ == v
    r = run(cli, "--version")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == f"decomposed {v}\n"
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        cmake = f.read()
    assert "project(decomposed VERSION ${_decomposed_version}" in cmake


# --- the stubs ------------------------------------------------------------------

# What every module and every pybind11 class has without defining it.
MODULE_IMPLICIT = {"__doc__", "__file__", "__loader__", "__name__",
                   "__package__", "__spec__"}
CLASS_IMPLICIT = {"__doc__", "__module__", "__dict__", "__weakref__",
                  "__qualname__"}


def stub_names():
    """Top-level names of the stub, and each class's member names."""
    tree = ast.parse(open(STUBS).read())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets)
        if isinstance(node, ast.ClassDef):
            names = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    names.add(item.target.id)
            members[node.name] = names
    return top, members


def defined_by(cls):
    """What a class of the extension defines itself (after `import
    decomposed`, which adds Literal.torch and Literal.__array__). A class
    without a constructor has pybind11's __init__ slot, which only raises:
    not a name to complete."""
    return {n for n, v in vars(cls).items() if n not in CLASS_IMPLICIT
            and not n.startswith("_pybind11")
            and not (n == "__init__" and isinstance(v, types.WrapperDescriptorType))}


def test_stubs_name_exactly_what_the_extension_defines():
    top, members = stub_names()
    actual = set(dir(_decomposed)) - MODULE_IMPLICIT
    assert sorted(actual - top) == [], "in the extension, not in the stubs"
    assert sorted(top - actual) == [], "in the stubs, not in the extension"
    for name, names in members.items():
        cls = getattr(_decomposed, name)
        assert isinstance(cls, type)
        have = defined_by(cls)
        assert sorted(have - names) == [], f"{name}: missing from the stubs"
        assert sorted(names - have) == [], f"{name}: not in the extension"


def test_stubs_check_themselves():
    """The stub finds a name missing on either side: a copy of it without
    one class member and with one name too many fails the comparison."""
    top, members = stub_names()
    assert "numpy" in members["Literal"] and "_open" in top
    members["Literal"].discard("numpy")
    assert defined_by(_decomposed.Literal) - members["Literal"] == {"numpy"}
    assert (top | {"_no_such_name"}) - set(dir(_decomposed)) == {"_no_such_name"}


def test_stubs_are_valid_python_stubs():
    compile(open(STUBS).read(), STUBS, "exec")  # parses as Python
    pkg = os.path.dirname(decomposed.__file__)
    # Installed next to the extension, with the PEP 561 marker.
    assert os.path.isfile(os.path.join(pkg, "_decomposed.pyi"))
    assert os.path.isfile(os.path.join(pkg, "py.typed"))


# --- dtype tables from the library ---------------------------------------------

def test_dtype_tables_are_the_librarys():
    rows = {r[0]: r for r in _decomposed._element_types()}
    # Spot checks against xla_data.proto / docs/format.md §8.2, by hand.
    assert rows["f32"] == ("f32", 4, "<f4", None, True, "float32")
    assert rows["pred"] == ("pred", 1, "|b1", None, True, "bool")
    assert rows["bf16"] == ("bf16", 2, None, "bfloat16", True, "bfloat16")
    assert rows["s4"] == ("s4", 1, None, "int4", True, None)
    assert rows["f8e8m0fnu"][5] == "float8_e8m0fnu"
    assert not rows["s1"][4]  # not loadable: not read or written
    assert "tuple" not in rows and "token" not in rows
    # The package's maps are built from them: 28 loadable array types.
    assert set(decomposed._STORAGE) == {n for n, r in rows.items() if r[4]}
    assert len(decomposed._STORAGE) == 28
    assert decomposed._STORAGE["f64"] == np.float64
    assert decomposed._STORAGE["c64"] == np.complex64
    if decomposed._ml_dtypes is None:
        assert decomposed._STORAGE["bf16"] == np.uint16
        assert decomposed._STORAGE["f8e4m3fn"] == np.uint8
        assert np.dtype(np.uint16) in decomposed._FROM_NUMPY
        assert decomposed._FROM_NUMPY[np.dtype(np.uint16)] == "u16"  # not bf16
    assert decomposed._TORCH["bf16"] == "bfloat16"
    assert "s4" not in decomposed._TORCH
    torch_rows = {r[0]: r for r in _decomposed._torch_dtypes()}
    assert torch_rows["torch.bfloat16"] == ("torch.bfloat16", "bfloat16", 2, "bf16")
    assert torch_rows["torch.complex32"][3] is None
    assert decomposed.bundle._XLA["torch.float8_e5m2"] == "f8e5m2"
    assert "torch.complex32" not in decomposed.bundle._XLA
    assert decomposed.capture.ENV_PREFIX == ENV


def dtype_tables_in(source):
    """The dict and set literals of `source` that hold two or more element
    type names (XLA's, torch's or NumPy's) as keys or values: dtype tables
    kept in Python."""
    names = set()
    for name, _, descr, ml, _, attr in _decomposed._element_types():
        names.update(n for n in (name, ml, attr) if n)
        if descr:
            names.add(np.dtype(descr).name)
    for name, attr, _, _ in _decomposed._torch_dtypes():
        names.update((name, attr))
    tables = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            items = list(node.keys) + list(node.values)
        elif isinstance(node, ast.Set):
            items = node.elts
        else:
            continue
        found = {i.value for i in items if isinstance(i, ast.Constant)
                 and isinstance(i.value, str) and i.value in names}
        if len(found) >= 2:
            tables.append((node.lineno, sorted(found)[:4]))
    return tables


def test_no_dtype_tables_kept_in_python():
    """The package's sources keep no table of element type names: they read
    the library's (the check finds the dicts the package used to keep)."""
    pkg = os.path.join(SOURCE, "python", "decomposed")
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name)) as f:
                assert dtype_tables_in(f.read()) == [], name
    assert dtype_tables_in('_T = {"pred": "bool", "s8": "int8"}') == \
        [(1, ["bool", "int8", "pred", "s8"])]
    assert dtype_tables_in('X = {"torch.float64": "f64"}') == [(1, ["f64", "torch.float64"])]


def test_torch_name_of_numpy_arrays():
    assert decomposed.capture._torch_dtype_name(np.zeros(1, np.float32)) == "torch.float32"
    assert decomposed.capture._torch_dtype_name(np.zeros(1, np.bool_)) == "torch.bool"
    assert decomposed.capture._torch_dtype_name(np.zeros(1, np.uint16)) == "torch.uint16"
    with pytest.raises(TypeError, match="no torch dtype"):
        decomposed.capture._torch_dtype_name(np.zeros(1, "U3"))


# --- PyTorch optional -----------------------------------------------------------

NO_TORCH = r"""
import sys
sys.modules["torch"] = None  # as if PyTorch were not installed
import decomposed
assert "torch" not in [m for m in sys.modules if sys.modules[m] is not None]
with decomposed.open(sys.argv[1]) as f:
    x = f.inputs[0]
    assert x.numpy().tolist() == [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]
    for call in (lambda: x.torch(), lambda: x.torch(upcast=True)):
        try:
            call()
        except ImportError as e:
            print(e)
        else:
            raise SystemExit("no ImportError")
"""


def test_torch_is_optional():
    r = subprocess.run([sys.executable, "-c", NO_TORCH, EXAMPLE],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith(".torch() needs PyTorch, which is not installed")
        assert "apt-get install python3-torch" in line


# --- capture plan and bundle ls: the CLI's library functions -------------------

FORWARDS = [
    {"neffs": ["A"]},
    {"is_prompt": True, "req_ids": ["abc-1"], "positions": [5], "neffs": ["A", "B"]},
    {"req_ids": ["abc-1", "zz"], "positions": [5, 10], "neffs": ["B", "B"]},
    {"req_ids": ["q", "w"], "positions": [0, 9], "max_generated": 2, "neffs": ["A"]},
]


def cli_env(extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith(ENV)}
    e.update(extra)
    e["VLLM_CACHE_ROOT"] = "/cache"
    return e


@pytest.mark.parametrize("env", [
    {ENV + "ENABLE": "1"},
    {ENV + "ENABLE": "1", ENV + "CAPTURE_AT_CALL": "-1", ENV + "MAX_CAPTURES": "3"},
    {ENV + "ENABLE": "1", ENV + "CAPTURE_REQUEST": "abc", ENV + "CAPTURE_TOKEN": "11,12"},
    {ENV + "ENABLE": "1", ENV + "RANKS": "one"},
])
def test_capture_plan_is_the_clis(tmp_path, cli, env):
    path = tmp_path / "forwards.json"
    path.write_text(json.dumps(FORWARDS))
    r = run(cli, "capture", "plan", "--global-rank", "3", "--tp-rank", "1",
            str(path), env=cli_env(env))
    assert r.returncode == 0, r.stderr
    config = decomposed.capture.Config.from_env(env)
    for forwards in (FORWARDS, path):
        got = decomposed.capture.plan(forwards, config, global_rank=3,
                                      tp_rank=1, root="/cache/neuron/snapshots")
        assert got == json.loads(r.stdout)


def test_capture_plan_by_hand():
    # Token 11 only (so the call rule never fires). Forward 1 is a prompt:
    # the token rule skips it, but it counts A's and B's call 0. Forward 2,
    # max_generated left out (1): row 1 at 10 reaches 11, on B's calls 1
    # and 2. Forward 3, max_generated 2: row 1 at 9 reaches 11 (9 + 2), on
    # A's call 1.
    config = decomposed.capture.Config.from_env({ENV + "ENABLE": "1",
                                                 ENV + "CAPTURE_TOKEN": "11"})
    got = decomposed.capture.plan(FORWARDS, config, root="/r")
    assert [(c["forward"], c["neff"], c["call_index"]) for c in got["captures"]] == \
        [(2, "B", 1), (2, "B", 2), (3, "A", 1)]
    token = {"batch_index": 1, "position": 11, "reason": "token"}
    assert got["captures"][0]["matches"] == [dict(token, request_id="zz")]
    assert got["captures"][2]["matches"] == [dict(token, request_id="w")]


def test_capture_plan_errors():
    config = decomposed.capture.Config.from_env({ENV + "ENABLE": "1"})
    with pytest.raises(decomposed.FormatError,
                       match=r'forward 0: "positions": expected a list of integers'):
        decomposed.capture.plan([{"req_ids": ["a"], "positions": ["x"],
                                  "neffs": ["A"]}], config)
    with pytest.raises(decomposed.FormatError, match="no \"neffs\" list"):
        decomposed.capture.plan([{"req_ids": ["a"]}], config)


def test_hook_and_plan_read_forwards_alike(tmp_path):
    """Capturer's omitted arguments are the library's defaults, as in a
    plan: the same selections for the same forwards."""
    env = {ENV + "ENABLE": "1", ENV + "CAPTURE_TOKEN": "11",
           ENV + "MAX_CAPTURES": "100", ENV + "FORMAT": "npy"}
    config = decomposed.capture.Config.from_env(env)
    planned = decomposed.capture.plan(FORWARDS, config, root=str(tmp_path))
    cap = decomposed.capture.Capturer(config, root=tmp_path)
    hooked = []
    x = np.arange(3, dtype=np.float32)
    for k, f in enumerate(FORWARDS):
        for neff in f["neffs"]:
            kwargs = {key: f[key] for key in ("is_prompt", "max_generated") if key in f}
            d = cap(neff, [x], f.get("req_ids"), f.get("positions"), **kwargs)
            if d["capture"]:
                hooked.append((k, neff, d["call_index"]))
    assert hooked == [(c["forward"], c["neff"], c["call_index"])
                      for c in planned["captures"]]
    with pytest.raises(decomposed.FormatError, match='"req_ids"'):
        cap._for("A").capture(json.dumps({"req_ids": "a"}), [])


def test_bundle_ls_is_the_clis(tmp_path, cli):
    root = tmp_path / "snap"
    config = decomposed.capture.Config.from_env({
        ENV + "ENABLE": "1", ENV + "CAPTURE_AT_CALL": "0,1",
        ENV + "MAX_CAPTURES": "100", ENV + "FORMAT": "npy"})
    cap = decomposed.capture.Capturer(config, global_rank=2, root=root)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):
        assert cap("n1", [x, x], request_ids=["r"], positions=[1])["capture"]
    os.makedirs(root / "n1" / "rank2" / "call7")          # incomplete
    os.makedirs(root / "n0" / "rank0" / "call3")
    (root / "n0" / "rank0" / "call3" / "meta.json").write_text("[]")  # invalid
    got = decomposed.bundle.ls(root)
    r = run(cli, "bundle", "ls", "--json", str(root))
    assert r.returncode == 0, r.stderr
    assert got == json.loads(r.stdout)
    assert [(b["hash"], b["call_index"], b["complete"]) for b in got] == \
        [("n0", 3, True), ("n1", 0, True), ("n1", 1, True), ("n1", 7, False)]
    assert "error" in got[0] and got[1]["inputs"] == 2
    assert got[1]["format"] == "npy" and got[1]["selected_by"] == ["call_index"]
    with pytest.raises(FileNotFoundError):
        decomposed.bundle.ls(tmp_path / "nope")

