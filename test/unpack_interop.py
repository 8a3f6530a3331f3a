#!/usr/bin/python3
"""Interop test for build/bin/snapshot-unpack against NumPy.

The script builds decomposed and classic HloSnapshot files itself, with
protobuf wire encoding written by hand from the spec
(docs/format.md): no protobuf library and none of
this project's writers. Every expected array is constructed here with NumPy.
For every loadable element type it covers scalar, zero-size and 1-D..4-D
shapes, default, column-major and random layouts, and several legal wire
encodings (canonical, data before shape, packed fields split over several
records, unpacked repeated fields, a bytes field given twice where the last
wins, a shape split over two records, unknown fields). It runs snapshot-unpack
in both modes, with and without --dump-snapshot-outputs, loads every output
with numpy.load and compares it with the expected array. It also checks the
module bytes, the .npy.meta sidecar, and that a failing run keeps finished
files and leaves no partial file.

usage: unpack_interop.py <snapshot-unpack> <scratch dir> <decomposed CLI> <example file>
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import box, f_varint, ld as f_len, tag, varint  # noqa: E402,F401

# ---------------------------------------------------------------- XLA types
# name: (number, LiteralProto field, kind, numpy dtype or void width)
TYPES = {
    "PRED": (1, 2, "bool", np.bool_),
    "S8": (2, 15, "bytes", np.int8),
    "S16": (3, 17, "bytes", np.int16),
    "S32": (4, 4, "varint", np.int32),
    "S64": (5, 5, "varint", np.int64),
    "U8": (6, 3, "bytes", np.uint8),
    "U16": (7, 16, "bytes", np.uint16),
    "U32": (8, 6, "varint", np.uint32),
    "U64": (9, 7, "varint", np.uint64),
    "F16": (10, 11, "bytes", np.float16),
    "F32": (11, 8, "f32", np.float32),
    "F64": (12, 9, "f64", np.float64),
    "C64": (15, 12, "f32", np.complex64),
    "BF16": (16, 13, "bytes", "V2"),
    "C128": (18, 18, "f64", np.complex128),
    "F8E5M2": (19, 19, "bytes", "V1"),
    "F8E4M3FN": (20, 20, "bytes", "V1"),
    "S4": (21, 21, "bytes", "V1"),
    "U4": (22, 22, "bytes", "V1"),
    "F8E4M3B11FNUZ": (23, 23, "bytes", "V1"),
    "F8E5M2FNUZ": (24, 24, "bytes", "V1"),
    "F8E4M3FNUZ": (25, 25, "bytes", "V1"),
    "S2": (26, 26, "bytes", "V1"),
    "U2": (27, 27, "bytes", "V1"),
    "F8E4M3": (28, 28, "bytes", "V1"),
    "F8E3M4": (29, 29, "bytes", "V1"),
    "F4E2M1FN": (32, 32, "bytes", "V1"),
    "F8E8M0FNU": (33, 33, "bytes", "V1"),
}
ML_DTYPES = {
    "BF16": "bfloat16", "F8E5M2": "float8_e5m2", "F8E4M3FN": "float8_e4m3fn",
    "S4": "int4", "U4": "uint4", "F8E4M3B11FNUZ": "float8_e4m3b11fnuz",
    "F8E5M2FNUZ": "float8_e5m2fnuz", "F8E4M3FNUZ": "float8_e4m3fnuz",
    "S2": "int2", "U2": "uint2", "F8E4M3": "float8_e4m3",
    "F8E3M4": "float8_e3m4", "F4E2M1FN": "float4_e2m1fn",
    "F8E8M0FNU": "float8_e8m0fnu",
}
DESCR = {"PRED": "|b1", "BF16": "|V2", "C64": "<c8", "C128": "<c16"}

SHAPES = [(), (0,), (2, 0, 3), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (3, 2, 2, 4)]

rng = np.random.default_rng(20261129)


def make_array(name, shape):
    kind, dt = TYPES[name][2], TYPES[name][3]
    n = int(np.prod(shape)) if shape else 1
    if isinstance(dt, str):  # void: raw bytes
        w = int(dt[1:])
        return np.frombuffer(rng.integers(0, 256, n * w, dtype=np.uint8).tobytes(),
                             dtype=dt).reshape(shape)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True).reshape(shape)
    if np.issubdtype(dt, np.complexfloating):
        f = np.float32 if dt == np.complex64 else np.float64
        return (rng.standard_normal(n).astype(f) + 1j * rng.standard_normal(n).astype(f)).astype(dt).reshape(shape)
    return (rng.standard_normal(n) * 100).astype(dt).reshape(shape)


def physical(arr, m2m):
    """Elements in minor_to_major order: m2m[0] varies fastest."""
    if arr.ndim == 0:
        return arr.reshape(1)
    return np.transpose(arr, axes=list(reversed(m2m))).ravel(order="C")


def shape_proto(type_num, dims, m2m, xla_style):
    s = f_varint(2, type_num)
    if dims:
        s += f_len(3, b"".join(varint(d) for d in dims))
    layout = f_len(1, b"".join(varint(d) for d in m2m)) if dims else b""
    if xla_style:
        layout += f_varint(16, 1)  # tail_padding_alignment_in_elements
    s += f_len(5, layout)
    if dims and xla_style:
        s += f_len(6, b"".join(varint(0) for _ in dims))
    return s


def data_records(name, phys, variant):
    """List of encoded records holding `phys` (physical-order elements)."""
    _, field, kind, _ = TYPES[name]
    if kind == "bytes":
        raw = phys.tobytes()
        recs = [f_len(field, raw)]
        if variant == "twice":  # bytes: the last occurrence wins
            recs = [f_len(field, b"\xAB" * (len(raw) + 3))] + recs
        return recs
    if kind in ("bool", "varint"):
        if kind == "bool":
            vals = [(5 if v else 0) if i % 3 == 0 else int(v) for i, v in enumerate(phys)]
        else:
            vals = [int(v) for v in phys]
        if variant == "unpacked":
            return [f_varint(field, v) for v in vals]
        enc = [varint(v) for v in vals]
    else:
        w = 4 if kind == "f32" else 8
        flat = phys.view(np.float32 if w == 4 else np.float64) if np.iscomplexobj(phys) else phys
        fmt = "<f" if w == 4 else "<d"
        if variant == "unpacked":
            wt = 5 if w == 4 else 1
            return [tag(field, wt) + struct.pack(fmt, float(v)) for v in flat]
        enc = [struct.pack(fmt, float(v)) for v in flat]
    if variant == "split" and len(enc) >= 2:
        a = len(enc) // 3 or 1
        b = 2 * len(enc) // 3 or 1
        parts = [enc[:a], enc[a:b], enc[b:]]
        return [f_len(field, b"".join(p)) for p in parts if p or True]
    return [f_len(field, b"".join(enc))] if enc else []


VARIANTS = ["canonical", "data_first", "split", "unpacked", "twice", "shape_split", "unknown"]


def literal(name, arr, m2m, variant):
    type_num = TYPES[name][0]
    phys = physical(arr, m2m)
    xla_style = variant in ("canonical", "unknown")
    shp = shape_proto(type_num, list(arr.shape), m2m, xla_style)
    recs = data_records(name, phys, variant)
    if variant == "shape_split":
        # Two shape records merge: type+dims first, the layout second.
        first = f_varint(2, type_num) + (f_len(3, b"".join(varint(d) for d in arr.shape)) if arr.ndim else b"")
        second = f_len(5, f_len(1, b"".join(varint(d) for d in m2m)) if arr.ndim else b"")
        return f_len(1, first) + b"".join(recs) + f_len(1, second)
    if variant == "data_first":
        return b"".join(recs) + f_len(1, shp)
    body = f_len(1, shp) + b"".join(recs)
    if variant == "unknown":
        body = f_varint(99, 7) + body + f_len(100, b"zz") + tag(101, 5) + b"abcd"
    return body


def layouts(rank, i):
    default = list(range(rank - 1, -1, -1))
    out = [("default", default)]
    if rank >= 2:
        out.append(("colmajor", list(range(rank))))
    if rank >= 3:
        while True:
            p = list(rng.permutation(rank))
            if p != default and p != list(range(rank)):
                break
        out.append(("random", [int(x) for x in p]))
    return out


def cases_for(name):
    cases = []
    k = 0
    for shape in SHAPES:
        for lname, m2m in layouts(len(shape), k):
            arr = make_array(name, shape)
            variant = VARIANTS[k % len(VARIANTS)]
            if TYPES[name][2] == "bytes" and variant in ("split", "unpacked"):
                variant = "twice"
            k += 1
            cases.append((arr, m2m, variant, "%s %s %s %s" % (name, shape, lname, variant)))
    return cases


# ---------------------------------------------------------------- files

MODULE = (f_len(1, b"interop") + f_len(2, b"main") + f_varint(5, 42)
          + f_len(3, f_len(1, b"comp") + f_varint(5, 1)))


def hlo_snapshot(arguments=(), result=None):
    s = f_len(1, f_len(1, MODULE))
    for a in arguments:
        s += f_len(2, a)
    if result is not None:
        s += f_len(3, result)
    s += f_len(4, b"neuron")
    return s


def decomposed_file(inputs, outputs, with_outputs_region, boxed_shapes=False):
    snap = hlo_snapshot()
    data = box(len(snap), boxed_shapes) + snap
    data += box(len(inputs), boxed_shapes)
    for b in inputs:
        data += box(len(b), boxed_shapes) + b
    if with_outputs_region:
        data += box(len(outputs), boxed_shapes)
        for b in outputs:
            data += box(len(b), boxed_shapes) + b
    return data


def tuple_literal(elements, element_types):
    shp = f_varint(2, 13) + b"".join(f_len(4, t) for t in element_types)
    return f_len(1, shp) + b"".join(f_len(10, e) for e in elements)


# ---------------------------------------------------------------- checks

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(tool, args):
    return subprocess.run([tool] + args, capture_output=True, text=True)


def compare(path, arr, name, what):
    if not os.path.exists(path):
        check(False, "%s: %s missing" % (what, path))
        return
    got = np.load(path)
    check(got.shape == arr.shape, "%s: shape %s != %s" % (what, got.shape, arr.shape))
    descr = DESCR.get(name, arr.dtype.str)
    check(got.dtype.str == descr, "%s: dtype %s != %s" % (what, got.dtype.str, descr))
    if got.shape == arr.shape:
        check(got.tobytes() == np.ascontiguousarray(arr).tobytes(),
              "%s: values differ" % what)
        if got.dtype.kind != "V" and not np.array_equal(got, arr):
            check(False, "%s: array_equal failed" % what)


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d + "/"


def no_temp_files(d, what):
    leftovers = [f for f in os.listdir(d) if ".tmp." in f]
    check(not leftovers, "%s: temp files left: %s" % (what, leftovers))


def main():
    tool, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    total = 0
    for name in TYPES:
        cases = cases_for(name)
        arrs = [c[0] for c in cases]
        bodies = [literal(name, c[0], c[1], c[2]) for c in cases]
        labels = [c[3] for c in cases]
        # Outputs: the same literals reversed, so indices differ.
        out_arrs, out_bodies, out_labels = arrs[::-1], bodies[::-1], labels[::-1]
        dec_path = os.path.join(scratch, "%s.decomposed_hlo_snapshot" % name)
        with open(dec_path, "wb") as f:
            f.write(decomposed_file(bodies, out_bodies, True, boxed_shapes=(name == "F32")))
        res = tuple_literal(out_bodies, [b"" for _ in out_bodies])
        snap_path = os.path.join(scratch, "%s.hlo_snapshot.pb" % name)
        with open(snap_path, "wb") as f:
            f.write(hlo_snapshot(bodies, res))
        for mode, path in (("decomposed", dec_path), ("snapshot", snap_path)):
            for dump in (False, True):
                d = fresh(os.path.join(scratch, "out_%s_%s_%d" % (name, mode, dump)))
                args = ["--snapshot-type=" + mode, "-output-prefix", d]
                if dump:
                    args.append("-dump-snapshot-outputs")
                if name in ML_DTYPES or name == "F32":
                    args.append("--ml-dtype-sidecar=true")
                args.append(path)
                r = run(tool, args)
                what = "%s %s dump=%s" % (name, mode, dump)
                check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr))
                with open(d + "model.hlo", "rb") as f:
                    check(f.read() == MODULE, what + ": module bytes differ")
                for i, a in enumerate(arrs):
                    compare("%svalue_input%d.npy" % (d, i), a, name, "%s input %s" % (what, labels[i]))
                    total += 1
                    meta = "%svalue_input%d.npy.meta" % (d, i)
                    if name in ML_DTYPES:
                        with open(meta) as f:
                            check(json.load(f) == {"ml_dtype": ML_DTYPES[name]}, what + ": meta")
                    else:
                        check(not os.path.exists(meta), what + ": unexpected meta")
                outs = sorted(f for f in os.listdir(d) if f.startswith("snapshot_output") and f.endswith(".npy"))
                if dump:
                    check(len(outs) == len(out_arrs), "%s: %d outputs" % (what, len(outs)))
                    for j, a in enumerate(out_arrs):
                        compare("%ssnapshot_output%d.npy" % (d, j), a, name, "%s output %s" % (what, out_labels[j]))
                        total += 1
                else:
                    check(not outs, what + ": outputs written without the flag")
                no_temp_files(d, what)

    # Snapshot mode, non-tuple result -> snapshot_output0.npy.
    a = make_array("F32", (2, 3))
    snap = hlo_snapshot([literal("F32", a, [1, 0], "canonical")],
                        literal("S32", np.arange(6, dtype=np.int32).reshape(3, 2) - 3, [0, 1], "canonical"))
    p = os.path.join(scratch, "single_result.pb")
    with open(p, "wb") as f:
        f.write(snap)
    d = fresh(os.path.join(scratch, "out_single"))
    r = run(tool, ["-dump-snapshot-outputs=1", "-output-prefix=" + d, p])
    check(r.returncode == 0, "single result: " + r.stderr)
    compare(d + "value_input0.npy", a, "F32", "single result input")
    compare(d + "snapshot_output0.npy", np.arange(6, dtype=np.int32).reshape(3, 2) - 3, "S32", "single result output")

    # Plain concatenation of the prefix: -output-prefix=<dir>/pre_
    d = fresh(os.path.join(scratch, "out_concat"))
    r = run(tool, ["--snapshot-type", "auto", "--output-prefix=" + d + "pre_",
                   os.path.join(scratch, "S32.decomposed_hlo_snapshot")])
    check(r.returncode == 0 and os.path.exists(d + "pre_model.hlo")
          and os.path.exists(d + "pre_value_input0.npy"), "prefix concat / auto: " + r.stderr)

    # A failing run: input 2 of 4 is corrupt (its count is wrong). Inputs 0
    # and 1 stay, input 2 has no file under its final name, no temp files.
    good = [literal("F32", make_array("F32", (4,)), [0], "canonical") for _ in range(4)]
    bad = f_len(1, shape_proto(11, [5], [0], True)) + f_len(8, b"\0" * 16)
    p = os.path.join(scratch, "bad.decomposed_hlo_snapshot")
    with open(p, "wb") as f:
        f.write(decomposed_file(good[:2] + [bad] + good[2:], [], True))
    d = fresh(os.path.join(scratch, "out_bad"))
    r = run(tool, ["--snapshot-type=decomposed", "--output-prefix=" + d, p])
    check(r.returncode == 1, "bad input: exit %d" % r.returncode)
    check("input 2 body" in r.stderr, "bad input: message does not name input 2 body: " + r.stderr)
    check("at byte" in r.stderr, "bad input: message has no byte offset: " + r.stderr)
    check(os.path.exists(d + "value_input0.npy") and os.path.exists(d + "value_input1.npy"),
          "bad input: finished files removed")
    check(not os.path.exists(d + "value_input2.npy") and not os.path.exists(d + "value_input3.npy"),
          "bad input: a file for the failed literal exists")
    no_temp_files(d, "bad input")

    # Tool texts.
    missing = os.path.join(scratch, "does-not-exist")
    r = run(tool, [missing])
    # The tool's words, then the system's reason.
    check(r.returncode == 1 and r.stderr == "Could not open: " + missing +
          ": No such file or directory\n", "missing file: " + r.stderr)
    r = run(tool, ["--snapshot-type=other", p])
    check(r.returncode == 1 and "ERROR: Unsupported snapshot format" in r.stderr, "bad type: " + r.stderr)
    r = run(tool, ["-help"])
    check(r.returncode == 0 and "snapshot-type" in r.stdout, "help")
    # --flag false is not a bool value: 'false' becomes a second positional.
    r = run(tool, ["--dump-snapshot-outputs", "false", p])
    check(r.returncode == 1 and "Too many positional" in r.stderr, "-flag false: " + r.stderr)

    # The multi-command CLI on the committed example (examples/make_example.py
    # documents its content): prints what it wrote, files load as expected.
    cli, example = sys.argv[3], sys.argv[4]
    d = fresh(os.path.join(scratch, "out_cli")) + "sub/"
    r = run(cli, ["unpack", "--snapshot-type=decomposed", "--dump-snapshot-outputs",
                  "--output-prefix=" + d, example])
    check(r.returncode == 0, "decomposed unpack: " + r.stderr)
    check(r.stdout.count("wrote ") == 4 and "unpacked 4 files" in r.stdout,
          "decomposed unpack output: " + r.stdout)
    x = np.array([[0.5, 1, 1.5], [2, 2.5, 3]], dtype=np.float32)
    compare(d + "value_input0.npy", x, "F32", "example input 0")
    compare(d + "value_input1.npy", np.array([-2, -1, 0, 7], dtype=np.int32), "S32", "example input 1")
    compare(d + "snapshot_output0.npy", 2 * x, "F32", "example output 0")

    print("checked %d arrays over %d types; %d failures" % (total, len(TYPES), len(failures)))
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
