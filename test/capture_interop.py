#!/usr/bin/python3
"""Bundle round trips: bundles written by capture_interop_writer are loaded
with NumPy (.npy) and PyTorch's torch.load (.pt) and compared with the
element bytes recomputed here from the writer's documented formula.

Dtypes newer than torch 1.13's legacy storages (float8_*, uint16/32/64,
complex32) are written in the _rebuild_tensor_v3 form; torch 1.13 cannot
load them, so for those this test checks the zip and the pickle structure
and the raw storage bytes, and loads them only when the installed PyTorch
has the dtype.
"""
import argparse
import collections
import io
import json
import os
import pickle
import pickletools
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import torch

# (attr, element bytes, npy descr or None, legacy storage?) in the writer's
# table order (kTorchDtypes in torch_dtype.h).
DTYPES = [
    ("float64", 8, "<f8", True), ("float32", 4, "<f4", True),
    ("float16", 2, "<f2", True), ("bfloat16", 2, "|V2", True),
    ("complex128", 16, "<c16", True), ("complex64", 8, "<c8", True),
    ("int64", 8, "<i8", True), ("int32", 4, "<i4", True),
    ("int16", 2, "<i2", True), ("int8", 1, "|i1", True),
    ("uint8", 1, "|u1", True), ("bool", 1, "|b1", True),
    ("uint16", 2, "<u2", False), ("uint32", 4, "<u4", False),
    ("uint64", 8, "<u8", False), ("float8_e4m3fn", 1, "|V1", False),
    ("float8_e5m2", 1, "|V1", False), ("float8_e4m3fnuz", 1, "|V1", False),
    ("float8_e5m2fnuz", 1, "|V1", False), ("float8_e8m0fnu", 1, "|V1", False),
    ("complex32", 4, None, False),
]
LAYOUTS = {"c": [2, 3, 4], "t": [3, 5], "scalar": [], "empty": [0, 3]}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def expected_bytes(di, attr, size, shape):
    n = 1
    for d in shape:
        n *= d
    if attr == "bool":
        return bytes(k % 2 for k in range(n))
    return bytes((k * 37 + 11 * di + 5) % 256 for k in range(n * size))


def torch_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def check_pt(path, attr, legacy, shape, want, stats):
    zf = zipfile.ZipFile(path)
    check(zf.testzip() is None, f"{path}: zip CRC check")
    names = zf.namelist()
    stem = os.path.splitext(os.path.basename(path))[0]
    check(names == [f"{stem}/data.pkl", f"{stem}/byteorder", f"{stem}/data/0",
                    f"{stem}/version"], f"{path}: entries {names}")
    info = zf.getinfo(f"{stem}/data/0")
    check(info.compress_type == zipfile.ZIP_STORED, f"{path}: stored")
    with open(path, "rb") as f:
        raw = f.read()
    name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    data_at = info.header_offset + 30 + name_len + extra_len
    check(data_at % 64 == 0, f"{path}: data/0 at {data_at} not 64-aligned")
    check(zf.read(f"{stem}/data/0") == want, f"{path}: storage bytes")
    check(zf.read(f"{stem}/version") == b"3\n", f"{path}: version")
    check(zf.read(f"{stem}/byteorder") == b"little", f"{path}: byteorder")
    pkl = zf.read(f"{stem}/data.pkl")
    out = io.StringIO()
    pickletools.dis(pkl, out=out)
    text = out.getvalue()
    if legacy:
        check("_rebuild_tensor_v2" in text, f"{path}: v2 pickle")
        t = torch.load(path)
        check(t.dtype == getattr(torch, attr), f"{path}: dtype {t.dtype}")
        check(list(t.shape) == shape, f"{path}: shape {list(t.shape)}")
        check(t.is_contiguous(), f"{path}: contiguous")
        check(torch_bytes(t) == want, f"{path}: values")
        # The pickle is the one torch.save itself writes, modulo memo
        # opcodes (torch's pickler emits BINPUTs, ours none).
        buf = io.BytesIO()
        torch.save(t, buf)
        theirs = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
        tp = [n for n in theirs.namelist() if n.endswith("/data.pkl")][0]
        check(pickletools.optimize(theirs.read(tp)) == pickletools.optimize(pkl),
              f"{path}: pickle differs from torch.save's")
        stats["pt_loaded"] += 1
    else:
        check("_rebuild_tensor_v3" in text and "UntypedStorage" in text
              and attr in text, f"{path}: v3 pickle")
        # Unpickle with stand-ins to check the call torch >= 2.1 would make:
        # _rebuild_tensor_v3(storage, 0, size, stride, False, OrderedDict(),
        # dtype) over ('storage', UntypedStorage, '0', 'cpu', nbytes).
        class Stub(pickle.Unpickler):
            def find_class(self, mod, name):
                if (mod, name) == ("torch._utils", "_rebuild_tensor_v3"):
                    return lambda *args: ("v3",) + args
                if (mod, name) == ("collections", "OrderedDict"):
                    return collections.OrderedDict
                if mod == "torch":
                    return ("torch", name)
                raise pickle.UnpicklingError(f"unexpected global {mod}.{name}")

            def persistent_load(self, pid):
                return ("pid",) + tuple(pid)
        got = Stub(io.BytesIO(pkl)).load()
        strides = []
        acc = 1
        for d in reversed(shape):
            strides.insert(0, acc)
            acc *= max(d, 1)
        check(got == ("v3", ("pid", "storage", ("torch", "UntypedStorage"),
                             "0", "cpu", len(want)), 0, tuple(shape),
                      tuple(strides), False, collections.OrderedDict(),
                      ("torch", attr)), f"{path}: v3 call {got}")
        if hasattr(torch, attr) and hasattr(torch._utils, "_rebuild_tensor_v3"):
            t = torch.load(path)
            check(t.dtype == getattr(torch, attr), f"{path}: dtype")
            check(list(t.shape) == shape, f"{path}: shape")
            check(t.contiguous().view(torch.uint8).numpy().tobytes() == want,
                  f"{path}: values")
            stats["pt_loaded"] += 1
        else:
            try:
                torch.load(path)
                check(False, f"{path}: torch {torch.__version__} loaded a "
                             f"dtype it does not have")
            except Exception:
                stats["pt_needs_newer_torch"].add(attr)


def write_foreign(cdir, fmt, tensors):
    os.makedirs(cdir)
    inputs = []
    for i, t in enumerate(tensors):
        if fmt == "pt":
            torch.save(t, os.path.join(cdir, f"tensor{i}.pt"))
        else:
            np.save(os.path.join(cdir, f"tensor{i}.npy"), t.numpy())
        inputs.append({"index": i, "dtype": str(t.dtype), "shape": list(t.shape)})
    meta = {"schema": 1, "hash": "foreign", "format": fmt, "global_rank": 0,
            "tp_rank": 0, "dp_rank": 0, "call_index": 0, "selected_by": [],
            "inputs": inputs, "global_step": None, "is_prompt": None,
            "matches": [], "req_ids": [], "positions": []}
    with open(os.path.join(cdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2, sort_keys=True)


def check_foreign_bundles(cli, root):
    shutil.rmtree(root, ignore_errors=True)
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    legacy = [torch.float64, torch.float32, torch.float16, torch.bfloat16,
              torch.complex64, torch.complex128, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool]
    tensors = [base.to(d) for d in legacy]
    tensors.append(base[1:3])            # a view at a storage offset
    tensors.append(torch.tensor(7))      # a scalar
    write_foreign(os.path.join(root, "h/rank0/call0"), "pt", tensors)
    npys = [base.to(d) for d in legacy if d != torch.bfloat16] + [base[1:3]]
    write_foreign(os.path.join(root, "h/rank0/call1"), "npy", npys)
    write_foreign(os.path.join(root, "h/rank0/call2"), "pt", [base.t()])
    for call in ("call0", "call1"):
        r = subprocess.run([cli, "bundle", "verify", os.path.join(root, "h/rank0", call)],
                           capture_output=True, text=True)
        check(r.returncode == 0, f"verify torch/numpy-written {call}: {r.stderr}")
    r = subprocess.run([cli, "bundle", "verify", os.path.join(root, "h/rank0/call2")],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "non-contiguous" in r.stderr,
          f"non-contiguous torch.save must be refused: {r.returncode} {r.stderr}")


def npy_data(path):
    return np.load(path).tobytes()


def pt_data(path):
    zf = zipfile.ZipFile(path)
    name = [n for n in zf.namelist() if n.endswith("/data/0")][0]
    return zf.read(name)


def check_replay(cli, unpack, root, work):
    """bundle -> decomposed -> snapshot-unpack / bundle, values unchanged."""
    module = b"\x0a\x07interop\x12\x04main"   # HloModuleProto{name, entry}
    mod = os.path.join(work, "model.hlo")
    with open(mod, "wb") as f:
        f.write(module)
    # 1. Every dtype with an XLA type, both formats: round trip through a
    #    decomposed file and back into a bundle of either format.
    n = 0
    for di, (attr, size, descr, legacy) in enumerate(DTYPES):
        for fmt in ("npy", "pt"):
            src = os.path.join(root, f"h_{attr}_{fmt}_c", "rank0")
            if not os.path.isdir(src):
                continue
            cdir = os.path.join(src, os.listdir(src)[0])
            want = expected_bytes(di, attr, size, [2, 3, 4])
            dec = os.path.join(work, f"{attr}_{fmt}.decomposed")
            r = subprocess.run([cli, "bundle", "to-decomposed", cdir, "--module", mod,
                                "-o", dec], capture_output=True, text=True)
            if attr == "complex32":
                check(r.returncode == 1 and "no XLA element type" in r.stderr
                      and not os.path.exists(dec), f"complex32 to-decomposed: {r.stderr}")
                continue
            check(r.returncode == 0, f"to-decomposed {cdir}: {r.stderr}")
            # snapshot-unpack reads the decomposed file.
            out = os.path.join(work, f"un_{attr}_{fmt}") + "/"
            os.makedirs(out)
            r = subprocess.run([unpack, dec, "--snapshot-type=decomposed",
                                "--output-prefix=" + out], capture_output=True, text=True)
            check(r.returncode == 0, f"snapshot-unpack {dec}: {r.stderr}")
            got = open(out + "value_input0.npy", "rb").read()
            check(got.endswith(want), f"snapshot-unpack {attr}: values")
            check(open(out + "model.hlo", "rb").read() == module, "module bytes")
            for back in ("npy", "pt"):
                if back == "npy" and descr is None:
                    continue
                bdir = os.path.join(work, "back", f"{attr}_{fmt}_{back}", "rank0", "call5")
                r = subprocess.run([cli, "bundle", "from-decomposed", dec, "-o", bdir,
                                    "--format", back, "--hash", "hb"],
                                   capture_output=True, text=True)
                check(r.returncode == 0, f"from-decomposed {dec} {back}: {r.stderr}")
                if r.returncode:
                    continue
                meta = json.load(open(os.path.join(bdir, "meta.json")))
                check(meta["inputs"] == [{"index": 0, "dtype": "torch." + attr,
                                          "shape": [2, 3, 4]}] and meta["call_index"] == 5
                      and meta["hash"] == "hb", f"from-decomposed meta {meta}")
                path = os.path.join(bdir, "tensor0." + back)
                got = npy_data(path) if back == "npy" else pt_data(path)
                check(got == want, f"round trip {attr} {fmt}->{back}: values")
                v = subprocess.run([cli, "bundle", "verify", bdir], capture_output=True, text=True)
                check(v.returncode == 0, f"verify {bdir}: {v.stderr}")
                n += 1
    # 2. A many-input bundle written by PyTorch itself.
    fdir = os.path.join(work, "foreign", "h", "rank0", "call0")
    dec = os.path.join(work, "foreign.decomposed")
    r = subprocess.run([cli, "bundle", "to-decomposed", fdir, "--module", mod, "-o", dec],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"to-decomposed foreign: {r.stderr}")
    bdir = os.path.join(work, "back", "foreign", "rank0", "call0")
    r = subprocess.run([cli, "bundle", "from-decomposed", dec, "-o", bdir],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"from-decomposed foreign: {r.stderr}")
    for i in range(14):
        a = torch.load(os.path.join(fdir, f"tensor{i}.pt"))
        b = torch.load(os.path.join(bdir, f"tensor{i}.pt"))
        check(a.dtype == b.dtype and a.shape == b.shape and
              torch_bytes(a) == torch_bytes(b), f"foreign round trip tensor{i}")
    # An existing call directory is never overwritten.
    r = subprocess.run([cli, "bundle", "from-decomposed", dec, "-o", bdir],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "already exists" in r.stderr, "from-decomposed overwrite")
    leftovers = [x for x in os.listdir(os.path.dirname(bdir)) if x.startswith(".")]
    check(not leftovers, f"temporaries left: {leftovers}")
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writer", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--unpack", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    root = os.path.join(a.workdir, "root")
    subprocess.run([a.writer, root], check=True)
    stats = {"npy": 0, "pt": 0, "pt_loaded": 0, "pt_needs_newer_torch": set()}
    for di, (attr, size, descr, legacy) in enumerate(DTYPES):
        for fmt in ("npy", "pt"):
            for lname, shape in LAYOUTS.items():
                h = f"h_{attr}_{fmt}_{lname}"
                hdir = os.path.join(root, h, "rank0")
                if fmt == "npy" and descr is None:
                    check(not os.path.exists(os.path.join(root, h)),
                          f"{h}: npy of {attr} must not be written")
                    continue
                calls = os.listdir(hdir)
                check(len(calls) == 1 and calls[0].startswith("call"),
                      f"{h}: {calls}")
                cdir = os.path.join(hdir, calls[0])
                with open(os.path.join(cdir, "meta.json")) as f:
                    text = f.read()
                meta = json.loads(text)
                check(text == json.dumps(meta, indent=2, sort_keys=True),
                      f"{h}: meta.json is not json.dumps(indent=2, sort_keys=True)")
                check(meta["inputs"] == [{"index": 0, "dtype": "torch." + attr,
                                          "shape": shape}], f"{h}: inputs")
                check(meta["format"] == fmt and meta["schema"] == 1 and
                      meta["hash"] == h, f"{h}: meta identity")
                want = expected_bytes(di, attr, size, shape)
                path = os.path.join(cdir, "tensor0." + fmt)
                if fmt == "npy":
                    arr = np.load(path)
                    check(arr.dtype.str == descr, f"{h}: descr {arr.dtype.str}")
                    check(list(arr.shape) == shape, f"{h}: shape")
                    check(arr.tobytes() == want, f"{h}: values")
                    stats["npy"] += 1
                else:
                    check_pt(path, attr, legacy, shape, want, stats)
                    stats["pt"] += 1
                leftovers = [x for x in os.listdir(hdir) if x.startswith(".")]
                check(not leftovers, f"{h}: temp dirs left: {leftovers}")
    z = os.path.join(root, "zip64.pt")
    zf = zipfile.ZipFile(z)
    check(zf.testzip() is None, "zip64: CRC")
    t = torch.load(z)
    check(t.dtype == torch.float32 and t.tolist() == [float(i) for i in range(10)],
          f"zip64: {t}")
    os.unlink(z)
    # The CLI reads and verifies what the library wrote.
    r = subprocess.run([a.cli, "bundle", "ls", root, "--json"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"bundle ls: {r.stderr}")
    listed = json.loads(r.stdout) if r.returncode == 0 else []
    check(len(listed) == stats["npy"] + stats["pt"],
          f"bundle ls listed {len(listed)}")
    for b in listed:
        v = subprocess.run([a.cli, "bundle", "verify", b["path"]],
                           capture_output=True, text=True)
        check(v.returncode == 0, f"bundle verify {b['path']}: {v.stderr}")
    # Bundles written by PyTorch and NumPy themselves, read by our reader.
    check_foreign_bundles(a.cli, os.path.join(a.workdir, "foreign"))
    stats["replayed"] = check_replay(a.cli, a.unpack, root, a.workdir)
    print(f"torch {torch.__version__}, numpy {np.__version__}: "
          f"{stats['npy']} npy bundles, {stats['pt']} pt bundles, "
          f"{stats['pt_loaded']} loaded by torch.load; need a newer PyTorch: "
          f"{sorted(stats['pt_needs_newer_torch'])}; "
          f"{stats.get('replayed', 0)} bundle->decomposed->bundle round trips")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
