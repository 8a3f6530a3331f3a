"""The README's Python section runs as pasted: its ```python block, run from
a directory laid out as the repository root (the shipped example under
examples/), prints what its comments say it prints. Twice in the same
directory, as a reader may paste it twice (it starts by clearing out/py/),
the second time without PyTorch."""
import os
import re
import shutil
import subprocess
import sys

import decomposed

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(SOURCE, "examples", "example.decomposed_hlo_snapshot")


def python_block():
    with open(os.path.join(SOURCE, "README.md")) as f:
        text = f.read()
    start = text.index("\n## Python\n")
    section = text[start:text.index("\n## ", start + 1)]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) == 1, "the Python section has one ```python block"
    return blocks[0]


def test_readme_python_section_runs_as_pasted(tmp_path):
    os.mkdir(tmp_path / "examples")
    shutil.copy(EXAMPLE, tmp_path / "examples")
    block = python_block()
    # The package under test, wherever the suite found it.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(decomposed.__file__))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    # Twice: as --test's set-up level has it, then as --python's does (no
    # PyTorch: .torch() says how to get it, the rest runs the same).
    without_torch = 'import sys; sys.modules["torch"] = None\n'
    outs = []
    for prefix in ("", without_torch):
        r = subprocess.run([sys.executable, "-c", prefix + block], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert "needs PyTorch" not in outs[0]
    assert (".torch() needs PyTorch, which is not installed: apt-get install "
            "python3-torch") in outs[1]
    out = outs[1]
    # What the comments in the block say, from examples/make_example.py's
    # content: F32[2,3] [[0.5, 1, 1.5], [2, 2.5, 3]] (sum 10.5) and
    # S32[4]; output 0 = input 0 * 2.
    assert ("decomposed example main (F32[2,3]{1,0}, S32[4]{0}) -> "
            "(F32[2,3]{1,0}) ('x', 'y')\n") in out
    assert "f32 (2, 3) (1, 0) 24\n" in out
    assert "\n10.5\n" in out
    # The copy without its last 3 bytes: output 0's body is the example's
    # last 44 bytes, from byte 511 of its 555 (the 3-byte box before it, at
    # 507, ends in its length, 0x2c).
    with open(EXAMPLE, "rb") as f:
        data = f.read()
    assert len(data) == 555 and data[507] == 3 and data[510] == 44
    assert "OUT_OF_RANGE output 0 body 511\n" in out
    assert ("output 0 body: declared 44 bytes but 41 remain (at byte 511 of "
            "out/py/broken.dhs)") in out
    assert "2 out/py/missing.dhs\n" in out
    assert "True out/py/snapshots/neff_a1b2/rank0/call0\n" in out
    assert "['req-1'] f32 [[0.5 1.  1.5]" in out
    for name in ("y.decomposed_hlo_snapshot", "y.pb", "x.pb", "x.npz",
                 "scatter.svg", "errors.svg", "model.hlo",
                 "snapshot_output0.npy"):
        assert os.path.isfile(tmp_path / "out" / "py" / name), name
