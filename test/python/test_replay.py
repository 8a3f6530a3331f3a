"""decomposed.run(..., bisect=True) and decomposed.run([rank0, rank1, ...]):
divergence origins and the ranks of one step from Python (python/src/run.cc
over run/replay.h; docs/eval.md §9, §10)."""
import json
import os
import subprocess

import numpy as np
import pytest

import decomposed


@pytest.fixture(scope="module")
def example(source_dir):
    return os.path.join(source_dir, "examples", "example.decomposed_hlo_snapshot")


# --- bisect ----------------------------------------------------------------------

def test_bisect_against_f32_and_against_a_dump(example, tmp_path):
    r = decomposed.run(example, bisect=True)
    assert r["actual"] == "xla" and r["reference"] == "f32"
    assert r["origins"] == [] and not r["outputs"][0]["differs"]
    dump = tmp_path / "dump"
    decomposed.run(example, dump=str(dump))
    r = decomposed.run(example, bisect=True, against=str(dump))
    assert r["origins"] == [] and r["compared"] == r["instructions"]
    # One element of the multiply's dumped value changed: the multiply is
    # where the runs part.
    index = json.loads((dump / "index.json").read_text())
    mul = [e for e in index["instructions"] if e["opcode"] == "multiply"][0]
    path = dump / mul["files"][0]
    a = np.load(path)
    a[1, 2] -= 3
    np.save(path, a)
    r = decomposed.run(example, bisect=True, against=dump, top=1)
    assert [o["name"] for o in r["origins"]] == [mul["name"]]
    o = r["origins"][0]
    assert o["opcode"] == "multiply" and o["shape"] == "f32[2,3]"
    assert o["max_abs_error_index"] == 5 and o["max_abs_error"] == 3
    assert o["op_name"] and o["source"]
    assert r["outputs"][0]["differs"]
    # A tolerance wide enough: nothing differs.
    r = decomposed.run(example, bisect=True, against=dump, atol=10)
    assert r["origins"] == []


def test_bisect_with_inputs_from_python(example):
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    y = np.zeros(4, dtype=np.int32)
    r = decomposed.run(example, bisect=True, inputs=[x, y], against="neuron")
    assert r["origins"] == []  # no dot: neuron and xla compute alike


def test_bisect_errors(example):
    with pytest.raises(ValueError):
        decomposed.run(example, bisect=True, dump="somewhere")
    with pytest.raises(ValueError):
        decomposed.run(example, bisect=True, mode="other")
    with pytest.raises(ValueError, match="rtol must be a finite number >= 0, not nan"):
        decomposed.run(example, bisect=True, rtol=float("nan"))
    with pytest.raises(FileNotFoundError):
        decomposed.run(example, bisect=True, against="/nonexistent/dump")


# --- the ranks of one step ---------------------------------------------------------

TP_MODULE = """HloModule tp, entry_computation_layout={(f32[4]{0})->(f32[8]{0})}

ENTRY main {
  x = f32[4]{0} parameter(0)
  id = u32[] partition-id()
  f = f32[] convert(id)
  b = f32[4]{0} broadcast(f), dimensions={}
  y = f32[4]{0} add(x, b)
  g = f32[8]{0} all-gather(y), replica_groups={{0,1}}, dimensions={0}
  ROOT t = (f32[8]{0}) tuple(g)
}
"""


def name(device):
    return (f"tp-process000000-executable000002-device{device:06d}-"
            f"execution000009.inputs.decomposed_hlo_snapshot")


def test_the_ranks_of_one_step(tmp_path, cli):
    hlo = tmp_path / "tp.hlo"
    hlo.write_text(TP_MODULE)
    xs = [np.array([1, 2, 3, 4], dtype=np.float32), np.array([-1, 0, 5, 9], dtype=np.float32)]
    # Rank r adds its id, then the two are gathered: [x0 + 0, x1 + 1].
    want = np.concatenate([xs[0], xs[1] + 1])
    files = []
    for r, x in enumerate(xs):
        np.save(tmp_path / f"x{r}.npy", x)
        f = tmp_path / name(r)
        p = subprocess.run([cli, "pack", "--module", str(hlo), "--input", str(tmp_path / f"x{r}.npy"),
                            "-o", str(f)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        files.append(str(f))
    out = decomposed.run([files[1], files[0]])  # put in device order
    assert len(out) == 2
    for rank in out:
        assert len(rank) == 1
        np.testing.assert_array_equal(rank[0], want)
    # A wrong group (naming a rank the step does not have): named.
    with pytest.raises(decomposed.FormatError, match=r"replica_groups=\{\{0,2\}\} names replica 2"):
        bad = tmp_path / "bad.hlo"
        bad.write_text(TP_MODULE.replace("replica_groups={{0,1}}", "replica_groups={{0,2}}"))
        badfiles = []
        for r in range(2):
            f = tmp_path / f"bad-{name(r)}"
            subprocess.run([cli, "pack", "--module", str(bad), "--input",
                            str(tmp_path / f"x{r}.npy"), "-o", str(f)], check=True,
                           capture_output=True)
            badfiles.append(str(f))
        decomposed.run(badfiles)
    with pytest.raises(ValueError):
        decomposed.run(files, bisect=True)
