"""unpack / verify / inspect / convert / compare / stats wrappers, bundles
and the capture hook, each checked against the CLI or the files it writes."""
import json
import os
import subprocess

import numpy as np
import pytest

import decomposed
import unpack_interop as ui

MODULE = ui.MODULE


@pytest.fixture()
def sample(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([1, -2, 3], dtype=np.int32)
    o = np.array([0.5, np.nan, np.inf], dtype=np.float32)
    path = str(tmp_path / "s.dhs")
    decomposed.write(path, MODULE, [a, b], [o])
    return path, (a, b), (o,)


def run(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


def test_unpack(sample, tmp_path):
    path, ins, outs = sample
    files = decomposed.unpack(path, str(tmp_path / "u") + "/", outputs=True)
    kinds = [f["kind"] for f in files]
    # The spelling of manifest.json: input / output, no index for the module.
    assert kinds == ["module", "input", "input", "output"]
    assert [f["index"] for f in files] == [None, 0, 1, 0]
    assert all(f["entry"] is None for f in files)
    assert np.array_equal(np.load(files[1]["path"]), ins[0])
    assert files[1]["shape"] == "F32[3,4]{1,0}"
    assert files[1]["descr"] == "<f4"
    # No array, no shape or dtype: None, as manifest.json leaves them out.
    assert files[0]["shape"] is None and files[0]["descr"] is None
    with open(files[0]["path"], "rb") as f:
        assert f.read() == MODULE


def test_unpack_to_npz_with_manifest(sample, tmp_path):
    path, ins, outs = sample
    npz = tmp_path / "s.npz"
    files = decomposed.unpack(path, outputs=True, npz=npz, manifest=True)
    entries = [f["entry"] for f in files if f["entry"]]
    assert entries == ["model.hlo", "value_input0.npy", "value_input1.npy",
                       "snapshot_output0.npy", "manifest.json"]
    with np.load(npz) as z:
        assert np.array_equal(z["value_input0"], ins[0])
        assert np.array_equal(z["value_input1"], ins[1])
        assert np.array_equal(z["snapshot_output0"], outs[0], equal_nan=True)
    assert sorted(os.listdir(tmp_path)) == ["s.dhs", "s.npz"]  # one file


def test_verify_and_inspect_match_cli(sample, tmp_path, cli):
    path, _, _ = sample
    assert decomposed.verify(path) == []
    data = open(path, "rb").read()
    bad = tmp_path / "bad.dhs"
    bad.write_bytes(data[:-3])
    problems = decomposed.verify(bad, kind="decomposed")
    r = run(cli, "verify", "--json", "--snapshot-type=decomposed", str(bad))
    assert r.returncode == 1
    assert problems == json.loads(r.stdout)[0]["problems"]
    assert problems and problems[0]["frame"] == "output 0 body"
    info = decomposed.inspect(path)
    r = run(cli, "inspect", "--json", path)
    assert info == json.loads(r.stdout)
    assert [i["element_type"] for i in info["inputs"]] == ["F32", "S32"]


def test_convert_round_trip(sample, tmp_path):
    path, ins, outs = sample
    classic = tmp_path / "c.pb"
    back = tmp_path / "b.dhs"
    decomposed.convert(path, classic, to="classic")
    decomposed.convert(classic, back, to="decomposed")
    with decomposed.open(classic) as f:
        assert f.kind == "snapshot"
        assert np.array_equal(f.inputs[0].numpy(), ins[0])
        assert np.array_equal(f.outputs[0].numpy(), outs[0], equal_nan=True)
    assert open(back, "rb").read() == open(path, "rb").read()
    with pytest.raises(ValueError):
        decomposed.convert(path, classic, to="npy")


def test_os_errors_name_the_file_once(sample, tmp_path):
    """An OSError names the file at fault, once: the input that is missing,
    the output that cannot be written (not the input it came from)."""
    path, _, _ = sample
    missing = str(tmp_path / "missing.dhs")
    with pytest.raises(FileNotFoundError) as e:
        decomposed.open(missing)
    assert e.value.filename == missing and str(e.value).count(missing) == 1
    # A file of neither form: the CLI's message, whichever way asked.
    readme = tmp_path / "README.md"
    readme.write_text("# not a snapshot\n")
    for to in ("classic", "decomposed"):
        with pytest.raises(decomposed.FormatError,
                           match="^file: not a decomposed or classic snapshot; "):
            decomposed.convert(readme, tmp_path / "r.out", to=to)
    bad = str(tmp_path / "no-such-dir" / "x.pb")
    with pytest.raises(FileNotFoundError) as e:
        decomposed.convert(path, bad, to="classic")
    assert e.value.filename == bad, str(e.value)
    assert str(e.value).count(bad) == 1 and path not in str(e.value)


def test_compare_and_stats(sample, tmp_path):
    path, ins, outs = sample
    other = str(tmp_path / "o.dhs")
    o2 = outs[0].copy()
    o2[0] = 0.75
    decomposed.write(other, MODULE, list(ins), [o2])
    # Compared as unpack directories (what snapshot-unpack writes).
    decomposed.unpack(path, str(tmp_path / "a") + "/", outputs=True)
    decomposed.unpack(other, str(tmp_path / "b") + "/", outputs=True)
    path, other = str(tmp_path / "a"), str(tmp_path / "b")
    same = decomposed.compare(path, path, equal_nan=True)
    assert same["pass"] is True
    diff = decomposed.compare(path, other, equal_nan=True)
    assert diff["pass"] is False
    t = diff["tensors"][0]
    assert t["status"] == "fail" and t["mismatches"] == 1
    assert t["max_abs_error"] == pytest.approx(0.25)
    # A tolerance is a finite number >= 0, checked before any file is read.
    for bad in (dict(atol=float("nan")), dict(rtol=-1e-3), dict(atol=float("inf"))):
        with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
            decomposed.compare(path, other, **bad)
        with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
            decomposed.compare(path, other, plot=str(tmp_path / "p.svg"), **bad)
    assert not (tmp_path / "p.svg").exists()
    ins_cmp = decomposed.compare(path, other, inputs=True)
    assert ins_cmp["pass"] is True and len(ins_cmp["tensors"]) == 2
    s = decomposed.stats(path)
    (entry,) = [e for e in s["tensors"] if e["set"] == "outputs"]
    assert entry["nan"] == 1 and entry["pos_inf"] == 1
    assert entry["dtype"] == "f32"


# --- capture and bundles -------------------------------------------------------

ENV = "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_"


def test_config_from_env():
    c = decomposed.capture.Config.from_env({
        ENV + "ENABLE": "1", ENV + "CAPTURE_AT_CALL": " 2, 0 ",
        ENV + "MAX_CAPTURES": "3", ENV + "FORMAT": "npy", "OTHER": "x"})
    assert c.enabled is True
    assert c.call_indices == [0, 2]
    assert c.max_captures == 3 and c.format == "npy"
    with pytest.raises(decomposed.FormatError, match="CAPTURE_AT_CALL"):
        decomposed.capture.Config.from_env({ENV + "ENABLE": "1",
                                            ENV + "CAPTURE_AT_CALL": "1,,2"})


@pytest.mark.parametrize("fmt", ["npy", "pt"])
def test_capturer_writes_bundles_the_reader_and_cli_accept(tmp_path, cli, fmt):
    torch = pytest.importorskip("torch")
    config = decomposed.capture.Config.from_env({
        ENV + "ENABLE": "1", ENV + "CAPTURE_AT_CALL": "1",
        ENV + "MAX_CAPTURES": "100", ENV + "FORMAT": fmt})
    cap = decomposed.capture.Capturer(config, global_rank=0, tp_rank=0,
                                      root=tmp_path / "snap")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    y = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    z = np.arange(4, dtype=np.int64).reshape(2, 2).T  # strided NumPy
    d = cap(f"neff{fmt}", [x, y, z])  # no forward context: warmup
    assert d["has_context"] is False and d["capture"] is False
    d0 = cap(f"neff{fmt}", [x, y, z], request_ids=["r1"], positions=[3])
    assert d0["call_index"] == 0 and not d0["capture"]
    d1 = cap(f"neff{fmt}", [x, y, z], request_ids=["r1"], positions=[4])
    assert d1["call_index"] == 1 and d1["capture"]
    call_dir = d1["call_dir"]
    assert call_dir.endswith(os.path.join(f"neff{fmt}", "rank0", "call1"))
    r = run(cli, "bundle", "verify", call_dir)
    assert r.returncode == 0, r.stderr
    b = decomposed.bundle.open(call_dir)
    assert b.format == fmt and len(b) == 3
    assert b.meta["call_index"] == 1
    # XLA's names, as literals and reports spell them; meta.json's beside.
    assert [t.dtype for t in b] == ["f32", "bf16", "s64"]
    assert [t.torch_dtype for t in b] == ["torch.float32", "torch.bfloat16",
                                          "torch.int64"]
    assert np.array_equal(b[0].numpy(), x.numpy())
    assert torch.equal(b[1].torch(), y)
    assert np.array_equal(b[2].numpy(), z)
    assert not b[0].numpy().flags.writeable
    if fmt == "pt":
        loaded = torch.load(os.path.join(call_dir, "tensor1.pt"))
        assert torch.equal(loaded, y)


def test_bundle_errors(tmp_path):
    with pytest.raises((decomposed.FormatError, OSError)):
        decomposed.bundle.open(tmp_path)
    here = os.path.dirname(os.path.abspath(__file__))
    missing = os.path.join(os.path.dirname(here), "corpus", "files",
                           "bundle_missing_tensor", "call0")
    b = decomposed.bundle.open(missing)  # meta.json is fine
    assert b[0].numpy().size >= 0
    with pytest.raises(FileNotFoundError, match="tensor1"):
        b[1].numpy()
