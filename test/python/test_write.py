"""decomposed.write(): every type, byte-identical to `decomposed pack` given
the same arrays as .npy, accepted by the CLI's verify and unpack, read back
equal; atomic on failure; torch tensors and buffers as inputs."""
import os
import subprocess

import numpy as np
import pytest

import decomposed
import unpack_interop as ui

MODULE = ui.MODULE

# XLA name -> (NumPy dtype of the array handed over, needs a dtypes entry)
WRITE_TYPES = {
    "pred": (np.bool_, False), "s8": (np.int8, False), "s16": (np.int16, False),
    "s32": (np.int32, False), "s64": (np.int64, False), "u8": (np.uint8, False),
    "u16": (np.uint16, False), "u32": (np.uint32, False),
    "u64": (np.uint64, False), "f16": (np.float16, False),
    "f32": (np.float32, False), "f64": (np.float64, False),
    "c64": (np.complex64, False), "c128": (np.complex128, False),
    "bf16": (np.uint16, True), "f8e5m2": (np.uint8, True),
    "f8e4m3fn": (np.uint8, True), "f8e4m3b11fnuz": (np.uint8, True),
    "f8e5m2fnuz": (np.uint8, True), "f8e4m3fnuz": (np.uint8, True),
    "f8e4m3": (np.uint8, True), "f8e3m4": (np.uint8, True),
    "f8e8m0fnu": (np.uint8, True), "f4e2m1fn": (np.uint8, True),
    "s4": (np.uint8, True), "u4": (np.uint8, True), "s2": (np.uint8, True),
    "u2": (np.uint8, True),
}
SUB_BYTE_BITS = {"s4": 4, "u4": 4, "s2": 2, "u2": 2, "f4e2m1fn": 4}

rng = np.random.default_rng(11)


def arrays_for(name):
    dt, _ = WRITE_TYPES[name]
    out = []
    for shape, order in (((), "C"), ((0,), "C"), ((7,), "C"), ((3, 4), "C"),
                         ((3, 4), "F"), ((2, 3, 4), "F"), ((2, 1, 3), "C")):
        n = int(np.prod(shape)) if shape else 1
        if dt == np.bool_:
            a = rng.integers(0, 2, n).astype(np.bool_)
        elif np.issubdtype(dt, np.complexfloating):
            a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
        elif np.issubdtype(dt, np.floating):
            a = (rng.standard_normal(n) * 50).astype(dt)
        else:
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
            if name in SUB_BYTE_BITS:  # canonical: the value in the low bits
                a &= (1 << SUB_BYTE_BITS[name]) - 1
        out.append(np.asarray(a.reshape(shape), order=order))
    return out


def pack(cli, tmp, arrays, outputs, dtype_name, needs, fmt):
    mod = os.path.join(tmp, "model.hlo")
    with open(mod, "wb") as f:
        f.write(MODULE)
    args = [cli, "pack", "--module", mod, "--format", fmt]
    for region, arrs in (("input", arrays), ("output", outputs)):
        for i, a in enumerate(arrs):
            p = os.path.join(tmp, f"{region}{i}.npy")
            np.save(p, a)
            args += ["--" + region, p]
            if needs:
                args += ["--dtype" if region == "input" else "--output-dtype",
                         f"{i}={dtype_name}"]
    ref = os.path.join(tmp, "ref." + fmt)
    r = subprocess.run(args + ["-o", ref], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(ref, "rb") as f:
        return f.read()


@pytest.mark.parametrize("fmt", ["decomposed", "snapshot"])
@pytest.mark.parametrize("name", list(WRITE_TYPES))
def test_write_equals_pack_and_reads_back(tmp_path, cli, name, fmt):
    _, needs = WRITE_TYPES[name]
    ins = arrays_for(name)
    outs = arrays_for(name)[:3]
    dtypes = {}
    if needs:
        dtypes = {i: name for i in range(len(ins))}
        dtypes.update({f"output {j}": name for j in range(len(outs))})
    path = str(tmp_path / ("w." + fmt))
    decomposed.write(path, MODULE, ins, outs,
                     format="classic" if fmt == "snapshot" else fmt,
                     dtypes=dtypes)
    with open(path, "rb") as f:
        mine = f.read()
    ref = pack(cli, str(tmp_path), ins, outs, name, needs, fmt)
    assert mine == ref
    r = subprocess.run([cli, "verify", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    out_dir = str(tmp_path / "u") + "/"
    r = subprocess.run([cli, "unpack", "--snapshot-type=" +
                        ("decomposed" if fmt == "decomposed" else "snapshot"),
                        "--dump-snapshot-outputs", "--output-prefix=" + out_dir,
                        path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with decomposed.open(path) as f:
        assert f.kind == ("decomposed" if fmt == "decomposed" else "snapshot")
        assert f.module == MODULE
        for region, arrs, stem in (("inputs", ins, "value_input"),
                                   ("outputs", outs, "snapshot_output")):
            lits = getattr(f, region)
            assert len(lits) == len(arrs)
            for i, (lit, a) in enumerate(zip(lits, arrs)):
                assert lit.dtype == name
                assert lit.shape == a.shape
                got = lit.numpy()
                assert got.tobytes() == np.ascontiguousarray(a).tobytes()
                u = np.load(os.path.join(out_dir, f"{stem}{i}.npy"))
                assert u.shape == a.shape
                assert np.ascontiguousarray(u).tobytes() == \
                    np.ascontiguousarray(a).tobytes()


def test_write_torch_and_buffers(tmp_path, cli):
    torch = pytest.importorskip("torch")
    t = torch.tensor([[1.5, -2.0], [3.25, 1e-2]], dtype=torch.bfloat16)
    f32 = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # strided
    buf = bytearray(np.arange(4, dtype=np.int16).tobytes())
    path = str(tmp_path / "t.dhs")
    decomposed.write(path, MODULE, [t, f32, memoryview(buf).cast("h")])
    with decomposed.open(path) as f:
        a, b, c = f.inputs
        assert a.dtype == "bf16" and a.shape == (2, 2)
        assert torch.equal(a.torch(), t)
        assert b.dtype == "f32" and torch.equal(b.torch(), f32.contiguous())
        assert c.dtype == "s16" and c.numpy().tolist() == [0, 1, 2, 3]
        assert f.outputs is not None and len(f.outputs) == 0
    r = subprocess.run([cli, "verify", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_module_from_path_and_no_output_block(tmp_path):
    mod = tmp_path / "model.hlo"
    mod.write_bytes(MODULE)
    path = tmp_path / "p.dhs"
    decomposed.write(path, mod, [np.ones(3, np.float32)], output_block=False)
    with decomposed.open(path) as f:
        assert f.module == MODULE
        assert f.outputs is None


def test_write_is_atomic(tmp_path):
    path = tmp_path / "x.dhs"
    with pytest.raises(decomposed.FormatError):
        decomposed.write(path, b"\xff\xff\xff", [np.ones(2, np.float32)])
    assert not path.exists()
    path.write_bytes(b"old")
    with pytest.raises(TypeError):  # void without a dtype name
        decomposed.write(path, MODULE, [np.zeros(2, "V2")])
    with pytest.raises(ValueError):  # width mismatch
        decomposed.write(path, MODULE, [np.zeros(2, np.float32)],
                         dtypes={0: "bf16"})
    with pytest.raises(OSError):
        decomposed.write(tmp_path / "no" / "dir" / "x", MODULE, [])
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.dhs"]


def test_big_endian_input_is_converted(tmp_path):
    a = np.arange(5, dtype=">f4")
    path = tmp_path / "be.dhs"
    decomposed.write(path, MODULE, [a])
    with decomposed.open(path) as f:
        assert np.array_equal(f.inputs[0].numpy(), a.astype("<f4"))
