#!/usr/bin/python3
"""Interop test for `decomposed pack`: NumPy writes .npy files, our CLI packs
them, and a reader written here from the spec alone (docs/format.md
§4 to §7, with AWS's Python reader's rules) reads them back:

  * the box length byte is read UNSIGNED, the box must hold exactly one
    u64s value (its shape, if any, is ignored);
  * region [2] is ALWAYS read (a file ending after region [1] fails);
  * every LiteralProto body is decoded by a minimal protobuf wire parser
    here, and its data reassembled with NumPy using the layout.

The same arrays are also checked in the classic HloSnapshot written by
`pack --format snapshot`.

usage: produce_interop.py DECOMPOSED_BINARY WORK_DIR
"""
import os
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import ld as field_len, varint  # noqa: E402


# ---------------------------------------------------------------- protobuf

def read_varint(b, i):
    v = 0
    shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """Yields (field, wire_type, value) for each record of message bytes."""
    i = 0
    while i < len(b):
        tag, i = read_varint(b, i)
        f, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        elif wt == 2:
            n, i = read_varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                raise ValueError("truncated field %d" % f)
            i += n
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def packed_varints(v):
    out, i = [], 0
    while i < len(v):
        x, i = read_varint(v, i)
        out.append(x)
    return out


def parse_shape(b):
    s = {"type": 0, "dims": [], "layout": None, "tuple": []}
    for f, wt, v in fields(b):
        if f == 2:
            s["type"] = v
        elif f == 3:
            s["dims"] += packed_varints(v) if wt == 2 else [v]
        elif f == 4:
            s["tuple"].append(parse_shape(v))
        elif f == 5:
            m2m = []
            for lf, lwt, lv in fields(v):
                if lf == 1:
                    m2m += packed_varints(lv) if lwt == 2 else [lv]
            s["layout"] = m2m
    return s


def parse_literal(b):
    lit = {"shape": None, "data": {}, "tuple": []}
    for f, wt, v in fields(b):
        if f == 1:
            lit["shape"] = parse_shape(v)
        elif f == 10:
            lit["tuple"].append(parse_literal(v))
        else:
            lit["data"].setdefault(f, []).append((wt, v))
    return lit


# XLA type number -> (data field, numpy dtype, how stored)
TYPES = {
    1: (2, np.bool_, "varint"), 2: (15, np.int8, "bytes"),
    3: (17, "<i2", "bytes"), 4: (4, np.int32, "svarint"),
    5: (5, np.int64, "svarint"), 6: (3, np.uint8, "bytes"),
    7: (16, "<u2", "bytes"), 8: (6, np.uint32, "varint"),
    9: (7, np.uint64, "varint"), 10: (11, "<f2", "bytes"),
    11: (8, "<f4", "fixed"), 12: (9, "<f8", "fixed"),
    15: (12, "<c8", "fixed"), 16: (13, "<u2", "bytes"),  # bf16 bits
    18: (18, "<c16", "fixed"),
}
# F8*, S4/U4/S2/U2, F4E2M1FN, F8E8M0FNU: one byte per element, field number
# equal to the type number.
for _t in (19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 32, 33):
    TYPES[_t] = (_t, np.uint8, "bytes")


def literal_array(lit):
    shape = lit["shape"]
    assert shape is not None, "literal without a shape"
    assert shape["layout"] is not None, "literal without a layout"
    field, dtype, how = TYPES[shape["type"]]
    dims = shape["dims"]
    n = int(np.prod(dims)) if dims else 1
    recs = lit["data"].get(field, [])
    if how in ("bytes", "fixed"):
        raw = b"".join(v for _, v in recs)
        flat = np.frombuffer(raw, dtype=dtype)
    else:
        vals = []
        for wt, v in recs:
            vals += packed_varints(v) if wt == 2 else [v]
        if how == "svarint":
            vals = [x - (1 << 64) if x >= (1 << 63) else x for x in vals]
        flat = np.array(vals, dtype=dtype)
    assert flat.size == n, "expected %d elements, found %d" % (n, flat.size)
    m2m = shape["layout"]
    rank = len(dims)
    assert sorted(m2m) == list(range(rank)), m2m
    major_to_minor = list(reversed(m2m))
    phys = flat.reshape([dims[d] for d in major_to_minor]) if rank else flat.reshape(())
    # Axis k of `phys` is logical dimension major_to_minor[k].
    return np.transpose(phys, np.argsort(major_to_minor)) if rank else phys


# ---------------------------------------------------- the decomposed reader

class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        b = self.data[self.pos:self.pos + n]
        if len(b) != n:
            raise EOFError("wanted %d bytes at %d" % (n, self.pos))
        self.pos += n
        return b

    def box(self):
        length = self.take(1)[0]  # unsigned, as AWS's reader does
        payload = self.take(length)
        u64s = []
        for f, wt, v in fields(payload):
            if f == 7:
                u64s += packed_varints(v) if wt == 2 else [v]
        if len(u64s) != 1:
            raise ValueError("box must hold exactly one u64s, found %r" % u64s)
        return u64s[0]

    def repeated(self):
        return [self.take(self.box()) for _ in range(self.box())]


def read_decomposed(path):
    r = Reader(open(path, "rb").read())
    snapshot = r.take(r.box())
    inputs = r.repeated()
    outputs = r.repeated()  # always read
    assert r.pos == len(r.data), "trailing bytes"
    return snapshot, inputs, outputs


# ------------------------------------------------------------------ test

def same(a, b):
    if a.dtype.kind == "V" or b.dtype.kind == "V":
        return a.shape == b.shape and a.tobytes() == b.tobytes()
    return a.shape == b.shape and np.array_equal(a, b)


def main():
    exe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    arrays = [
        np.arange(6, dtype=np.float32).reshape(2, 3) / 3,
        np.array(2.5, dtype=np.float64),                         # scalar
        np.array([-2, -1, 0, 7, 2**31 - 1, -2**31], dtype=np.int32),
        rng.integers(-2**62, 2**62, size=(3, 2), dtype=np.int64),
        rng.integers(0, 255, size=(4,), dtype=np.uint8),
        np.array([True, False, True]),
        rng.standard_normal((2, 2)).astype(np.float16),
        (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64),
        np.array([1, -2, 300], dtype=">i2"),                     # big endian
        np.array([0, 1, 2**64 - 1], dtype=np.uint64),
        np.zeros((0, 4), dtype=np.int8),                         # zero-size
        np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)),
        np.array([2**32 - 1, 5], dtype=np.uint32),
        (np.arange(2) * (1 + 2j)).astype(np.complex128),
        np.arange(5, dtype=np.int16) - 2,
        np.array([7, 65535], dtype=np.uint16),
    ]
    # bf16 as ml_dtypes/neuronx-cc store it: void |V2, one with a .npy.meta
    # sidecar, one given its type with --dtype.
    bf16_bits = np.array([0x3F80, 0x4000, 0xC040], dtype=np.uint16)
    bf16 = bf16_bits.view("V2")
    paths = []
    for i, a in enumerate(arrays):
        p = os.path.join(work, "in%d.npy" % i)
        np.save(p, a)
        paths.append(p)
    p_side = os.path.join(work, "bf16_sidecar.npy")
    np.save(p_side, bf16)
    with open(p_side + ".meta", "w") as f:
        f.write('{"ml_dtype": "bfloat16"}')
    p_flag = os.path.join(work, "bf16_flag.npy")
    np.save(p_flag, bf16)
    if os.path.exists(p_flag + ".meta"):
        os.remove(p_flag + ".meta")
    paths += [p_side, p_flag]
    expected = arrays + [bf16, bf16]
    # One-byte void types (fp8, int4, fp4) through sidecars.
    for name, vals in (("float8_e4m3fn", [0x38, 0x40, 0xB8]),
                       ("float8_e5m2", [0x3C, 0x00]),
                       ("int4", [0x0D, 0x07, 0x00]),
                       ("float4_e2m1fn", [0x01, 0x0F])):
        v1 = np.array(vals, dtype=np.uint8).view("V1")
        p = os.path.join(work, name + ".npy")
        np.save(p, v1)
        with open(p + ".meta", "w") as f:
            f.write('{"ml_dtype": "%s"}' % name)
        paths.insert(len(paths) - 2, p)
        expected.insert(len(expected) - 2, v1)
    out_arr = np.arange(4, dtype=np.float32) * 2
    p_out = os.path.join(work, "out0.npy")
    np.save(p_out, out_arr)

    module = field_len(1, b"interop") + field_len(2, b"main")
    p_mod = os.path.join(work, "model.hlo")
    open(p_mod, "wb").write(module)

    args = [exe, "pack", "--module", p_mod]
    for p in paths:
        args += ["--input", p]
    args += ["--dtype", "%d=bf16" % (len(paths) - 1), "--output", p_out]
    dec = os.path.join(work, "packed.decomposed_hlo_snapshot")
    subprocess.run(args + ["-o", dec], check=True)
    classic = os.path.join(work, "packed.hlo_snapshot.pb")
    subprocess.run(args + ["--format", "snapshot", "-o", classic], check=True)

    # Decomposed, read from the spec.
    snapshot, inputs, outputs = read_decomposed(dec)
    hlo = [v for f, _, v in fields(snapshot) if f == 1]
    mod = [v for f, _, v in fields(hlo[0]) if f == 1]
    assert mod == [module], "module not embedded byte for byte"
    assert len(inputs) == len(expected), (len(inputs), len(expected))
    failures = 0
    for i, (body, want) in enumerate(zip(inputs, expected)):
        got = literal_array(parse_literal(body))
        if want.dtype.kind == "V":
            got = got.view("V%d" % want.dtype.itemsize)
        if not same(got, want.astype(want.dtype.newbyteorder("<"))
                    if want.dtype.byteorder == ">" else want):
            print("input %d differs:\n got %r\nwant %r" % (i, got, want))
            failures += 1
    assert len(outputs) == 1
    if not same(literal_array(parse_literal(outputs[0])), out_arr):
        print("output 0 differs")
        failures += 1

    # Classic: HloSnapshot { hlo = 1, arguments = 2, result = 3 }.
    data = open(classic, "rb").read()
    recs = list(fields(data))
    cargs = [v for f, _, v in recs if f == 2]
    cres = [v for f, _, v in recs if f == 3]
    assert [v for f, _, v in recs if f == 1] == hlo
    assert cargs == inputs, "classic arguments differ from decomposed inputs"
    res = parse_literal(cres[0])
    assert res["shape"]["type"] == 13, "result must be a TUPLE"
    assert len(res["tuple"]) == 1
    if not same(literal_array(res["tuple"][0]), out_arr):
        print("classic result differs")
        failures += 1

    # convert: decomposed -> classic gives the same bytes as pack --format
    # snapshot, and classic -> decomposed gives back the packed file.
    conv = os.path.join(work, "converted.pb")
    subprocess.run([exe, "convert", dec, conv, "--to", "snapshot"], check=True)
    if open(conv, "rb").read() != data:
        print("convert --to snapshot differs from pack --format snapshot")
        failures += 1
    back = os.path.join(work, "back.dhs")
    subprocess.run([exe, "convert", conv, back, "--to", "decomposed"],
                   check=True)
    if open(back, "rb").read() != open(dec, "rb").read():
        print("convert --to decomposed does not give back the packed file")
        failures += 1

    # --snapshot takes region [0] from an existing file, classic or
    # decomposed, dropping its literals.
    for src in (classic, dec):
        again = os.path.join(work, "from_snapshot.dhs")
        subprocess.run([exe, "pack", "--snapshot", src, "--input", paths[0],
                        "-o", again], check=True)
        snap2, ins2, outs2 = read_decomposed(again)
        if snap2 != snapshot or ins2 != inputs[:1] or outs2:
            print("pack --snapshot %s gave a different file" % src)
            failures += 1

    # Errors: exit 1, a message naming the input, and no output file.
    bad_out = os.path.join(work, "bad.dhs")
    if os.path.exists(bad_out):
        os.remove(bad_out)
    r = subprocess.run([exe, "pack", "--module", p_mod, "--input", p_flag,
                        "-o", bad_out], capture_output=True, text=True)
    if r.returncode != 1 or "input 0" not in r.stderr or \
            "true dtype" not in r.stderr or os.path.exists(bad_out):
        print("void input without a dtype: rc=%d stderr=%r" %
              (r.returncode, r.stderr))
        failures += 1
    r = subprocess.run([exe, "pack", "--module", p_mod, "--dtype", "3=bf16",
                        "--input", p_flag, "-o", bad_out],
                       capture_output=True, text=True)
    if r.returncode != 2 or os.path.exists(bad_out):
        print("--dtype out of range: rc=%d" % r.returncode)
        failures += 1

    # npy -> pack -> unpack (our snapshot-unpack equivalent) gives the same
    # arrays, and the module back byte for byte.
    udir = os.path.join(work, "unpacked") + "/"
    os.makedirs(udir, exist_ok=True)
    subprocess.run([exe, "unpack", "--snapshot-type=decomposed",
                    "--dump-snapshot-outputs", "--output-prefix=" + udir, dec],
                   check=True, stdout=subprocess.DEVNULL)
    if open(udir + "model.hlo", "rb").read() != module:
        print("unpacked model.hlo differs from the module given")
        failures += 1
    for i, want in enumerate(expected):
        got = np.load(udir + "value_input%d.npy" % i)
        if want.dtype.byteorder == ">":
            want = want.astype(want.dtype.newbyteorder("<"))
        if not same(got, want):
            print("unpacked value_input%d differs:\n got %r\nwant %r" %
                  (i, got, want))
            failures += 1
    if not same(np.load(udir + "snapshot_output0.npy"), out_arr):
        print("unpacked snapshot_output0 differs")
        failures += 1

    # verify: both packed files are valid; a damaged copy is not, with one
    # JSON problem naming the frame and offset.
    r = subprocess.run([exe, "verify", dec, classic], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("verify rejected our files: %s" % r.stdout)
        failures += 1
    damaged = os.path.join(work, "damaged.dhs")
    raw = bytearray(open(dec, "rb").read())
    open(damaged, "wb").write(bytes(raw[:-3]))
    r = subprocess.run([exe, "verify", "--json", damaged],
                       capture_output=True, text=True)
    import json
    rep = json.loads(r.stdout)
    if r.returncode != 1 or rep[0]["valid"] or not rep[0]["problems"] or \
            rep[0]["problems"][0]["offset"] is None:
        print("verify on a damaged file: rc=%d %s" % (r.returncode, r.stdout))
        failures += 1

    # A file that ends after region [1] must fail this reader.
    trunc = os.path.join(work, "no_outputs.dhs")
    subprocess.run([exe, "pack", "--module", p_mod, "--input", paths[0],
                    "--no-output-block", "-o", trunc], check=True)
    try:
        read_decomposed(trunc)
        print("a file without region [2] was accepted")
        failures += 1
    except EOFError:
        pass

    if failures:
        sys.exit(1)
    print("ok: %d inputs, 1 output, decomposed and classic" % len(inputs))


if __name__ == "__main__":
    main()
