#!/usr/bin/env python3
"""Writes the fuzz seed corpora test/fuzz/corpus/<target>/ from hand-written
bytes (the helpers of test/corpus/make_corpus.py, which follow the spec, not
this project's writer). Targets whose first input byte selects options
(box, composite, decomposed) get a 0x00 (strict) or 0x01 (lenient) prefix.

Run: /usr/bin/python3 test/fuzz/make_seeds.py
"""
import io
import os
import shutil
import struct
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import make_corpus as mc  # noqa: E402

ROOT = os.path.join(HERE, "corpus")
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

seeds = {t: {} for t in ("box", "composite", "decomposed", "snapshot",
                         "classic",
                         "npy_header", "shape", "roundtrip",
                         "literal_decoder", "unpack_cmdline", "npy_reader",
                         "bundle_meta", "pt_reader", "wire_reader",
                         "compare", "stats", "three_way", "bisect", "hlo_text",
                         "eval")}

# --- box ----------------------------------------------------------------------
seeds["box"]["zero"] = b"\x00" + mc.box(0)
seeds["box"]["v128"] = b"\x00" + mc.box(128)
seeds["box"]["max"] = b"\x00" + mc.box((1 << 64) - 1)
seeds["box"]["unpacked"] = b"\x00" + b"\x02\x38\x05"
# LiteralUtil::CreateR0<uint64_t>(7).ToProto(), older XLA: empty layout.
seeds["box"]["with_shape"] = b"\x00" + b"\x09\x0a\x04\x10\x09\x2a\x00\x3a\x01\x07"
# Modern XLA: layout { tail_padding_alignment_in_elements: 1 } (field 16).
seeds["box"]["tail_padding"] = (b"\x01" + b"\x0c\x0a\x07\x10\x09\x2a\x03\x80"
                                b"\x01\x01\x3a\x01\x07")
seeds["box"]["lenient_0x80"] = b"\x01\x80" + b"\x3a\x01\x01" + b"\x00" * 125
# Issue 9: the u64s tag 3a padded to 6 bytes, which protobuf refuses.
seeds["box"]["tag_6_bytes"] = b"\x00" + b"\x08\xba\x80\x80\x80\x80\x00\x01\x05"
seeds["box"]["shape_tag_6_bytes"] = (b"\x00" + b"\x0c\x0a\x07\x90\x80\x80"
                                     b"\x80\x80\x00\x09\x3a\x01\x05")

# --- wire reader: one message of every wire type -------------------------------
# field 1 varint 150; field 2 fixed64; field 3 fixed32; field 4 LEN "abc";
# field 5 packed varints; field 7 a nested message { field 1: 42 }.
seeds["wire_reader"]["every_type"] = (
    b"\x08\x96\x01" + b"\x11" + bytes(range(1, 9)) + b"\x1d\x78\x56\x34\x12" +
    b"\x22\x03abc" + b"\x2a\x04\x01\x96\x01\x00" + b"\x3a\x02\x08\x2a")
seeds["wire_reader"]["tag_5_bytes"] = b"\x88\x80\x80\x80\x00\x01"
seeds["wire_reader"]["size_5_bytes"] = b"\x22\x83\x80\x80\x80\x00abc"
seeds["wire_reader"]["group"] = b"\x08\x01\x2b\x08\x01\x2c"
seeds["wire_reader"]["literal"] = mc.LIT

# --- shapes and literals --------------------------------------------------------
F32_23 = mc.shape(mc.F32, [2, 3])
TUP = (mc.field(2, 0) + mc.varint(mc.TUPLE) + mc.ld(4, F32_23) +
       mc.ld(4, mc.shape(4, [])))
DYN = mc.shape(mc.F32, [4, 8]) + mc.packed(6, [1, 0])
seeds["shape"]["f32_2x3"] = F32_23
seeds["shape"]["tuple"] = TUP
seeds["shape"]["dynamic"] = DYN
seeds["shape"]["scalar_no_layout"] = mc.field(2, 0) + mc.varint(16)
seeds["shape"]["tiles"] = (mc.field(2, 0) + mc.varint(mc.F32) +
                           mc.packed(3, [8]) +
                           mc.ld(5, mc.packed(1, [0]) + mc.ld(6, b"\x0a\x01\x08")))

LIT = mc.LIT
LIT_S32 = mc.ld(1, mc.shape(4, [3])) + mc.packed(4, [1, -1, 300])
LIT_BF16 = mc.ld(1, mc.shape(16, [2])) + mc.ld(13, b"\x80\x3f\x00\x40")
LIT_TUPLE = mc.ld(1, TUP) + mc.ld(10, mc.f32_literal([2, 3]))
bodies = [LIT, LIT_S32, LIT_BF16, LIT_TUPLE]

seeds["composite"]["one"] = b"\x00" + mc.block([LIT])
seeds["composite"]["four"] = b"\x00" + mc.block(bodies)
seeds["composite"]["empty"] = b"\x00" + mc.block([])

seeds["decomposed"]["good"] = b"\x00" + mc.GOOD
seeds["decomposed"]["no_region2"] = b"\x00" + mc.HEADER + mc.block(bodies)
seeds["decomposed"]["boxes_with_shape"] = (
    b"\x00" + b"\x09\x0a\x04\x10\x09\x2a\x00\x3a\x01\x00" +
    b"\x09\x0a\x04\x10\x09\x2a\x00\x3a\x01\x01" +
    b"\x09\x0a\x04\x10\x09\x2a\x00\x3a\x01" + bytes([len(LIT)]) + LIT)
with open(os.path.join(REPO, "examples", "example.decomposed_hlo_snapshot"),
          "rb") as f:
    example = f.read()
seeds["decomposed"]["example"] = b"\x00" + example
# The malformed corpus is a good start for finding the edges.
files = os.path.join(REPO, "test", "corpus", "files")
for name in sorted(os.listdir(files)):
    if name.endswith(".bin"):
        with open(os.path.join(files, name), "rb") as f:
            seeds["decomposed"]["bad_" + name[:-4]] = b"\x00" + f.read()

# --- classic snapshot ------------------------------------------------------------
# The example's region [0] is an HloSnapshot {hlo {hlo_module {...}}}; add
# arguments (field 2) and a result (field 3) by hand.
# Its header box: length byte n, then u64s (field 7, packed: 3a L <varint>)
# holding the snapshot's length.
n = example[0]
assert example[1] == 0x3a and example[2] == n - 2
snap_len = 0
for k, b in enumerate(example[3:1 + n]):
    snap_len |= (b & 0x7f) << (7 * k)
SNAP = example[1 + n:1 + n + snap_len]
assert len(SNAP) == snap_len
seeds["snapshot"]["module_only"] = SNAP
seeds["snapshot"]["with_literals"] = (SNAP + mc.ld(2, LIT) + mc.ld(2, LIT_S32) +
                                      mc.ld(3, LIT_TUPLE) + mc.ld(4, b"neuron"))
seeds["snapshot"]["empty"] = b""
# The classic mapping's walks (classic_fuzz): the same snapshots, a result
# given twice (protobuf merges it) and unknown fields around the literals.
seeds["classic"] = dict(seeds["snapshot"])
seeds["classic"]["repeated_result"] = (SNAP + mc.ld(2, LIT) + mc.ld(3, LIT_TUPLE) +
                                       mc.ld(3, LIT_TUPLE))
seeds["classic"]["unknown_fields"] = (SNAP + mc.field(2, 0) + mc.varint(7) +
                                      mc.ld(9, b"x") + mc.ld(2, LIT))

# --- npy -----------------------------------------------------------------------
def npy(text, major=1):
    text = text.encode()
    fixed = 10 if major == 1 else 12
    pad = (-(fixed + len(text) + 1)) % 64
    text += b" " * pad + b"\n"
    if major == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text
    return b"\x93NUMPY" + bytes([major, 0]) + struct.pack("<I", len(text)) + text

seeds["npy_header"]["f4_2"] = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")
seeds["npy_header"]["scalar"] = npy("{'descr': '|b1', 'fortran_order': False, 'shape': (), }")
seeds["npy_header"]["v2_fortran"] = npy("{'shape': (2, 3), 'fortran_order': True, 'descr': '<i8'}", 2)
seeds["npy_header"]["v3_void"] = npy('{"descr": "|V2", "fortran_order": False, "shape": (4, 5, 6)}', 3)

# --- streaming literal decoder: byte 0 = buffer size / split point ----------
seeds["literal_decoder"]["f32"] = b"\x03" + LIT
seeds["literal_decoder"]["s32"] = b"\x11" + LIT_S32
seeds["literal_decoder"]["bf16"] = b"\x07" + LIT_BF16
seeds["literal_decoder"]["fortran"] = b"\x05" + mc.f32_literal([2, 3], m2m=[0, 1])
seeds["literal_decoder"]["transpose"] = (
    b"\x02" + mc.ld(1, mc.shape(mc.F32, [2, 3, 4], m2m=[1, 0, 2])) +
    mc.ld(8, bytes(96)))
seeds["literal_decoder"]["data_first_unpacked"] = (
    b"\x01" + mc.field(4, 0) + mc.varint(7) + mc.field(4, 0) + mc.varint(9) +
    mc.ld(1, mc.shape(4, [2])))
seeds["literal_decoder"]["pred"] = (b"\x00" + mc.ld(1, mc.shape(1, [3])) +
                                    mc.packed(2, [1, 0, 1]))

# --- snapshot-unpack command line: arguments separated by NUL -------------------
seeds["unpack_cmdline"]["decomposed"] = (
    b"-snapshot-type=decomposed\0--dump-snapshot-outputs\0-output-prefix\0"
    b"out/\0x.decomposed_hlo_snapshot")
seeds["unpack_cmdline"]["module"] = b"--module=m.hlo\0-dump-snapshot-outputs=false\0x"
seeds["unpack_cmdline"]["help"] = b"-help"
seeds["unpack_cmdline"]["dashdash"] = b"--\0-weird-name"

# --- streaming npy reader: byte 0 = options ----------------------------------
F4_2 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")
seeds["npy_reader"]["f4"] = b"\x03" + F4_2 + struct.pack("<2f", 1.5, -2)
seeds["npy_reader"]["big_endian_i2"] = (
    b"\x01" + npy("{'descr': '>i2', 'fortran_order': False, 'shape': (3,), }")
    + b"\x00\x01\x00\x02\x80\x00")
seeds["npy_reader"]["void_bf16"] = (
    b"\x06" + npy("{'descr': '|V2', 'fortran_order': False, 'shape': (2, 1), }")
    + b"\x80\x3f\x00\x40")
seeds["npy_reader"]["c16_fortran"] = (
    b"\x03" + npy("{'descr': '<c16', 'fortran_order': True, 'shape': (1, 1), }")
    + bytes(16))

# --- bundle meta.json + tensor0.npy, split at "\0\0" ---------------------------
META1 = mc.META.replace(b""",
    {
      "dtype": "torch.float32",
      "index": 1,
      "shape": [2]
    }""", b"")
assert META1 != mc.META
seeds["bundle_meta"]["one_npy"] = META1 + b"\0\0" + mc.NPY_F32_2
seeds["bundle_meta"]["missing_tensor"] = mc.META + b"\0\0" + mc.NPY_F32_2
seeds["bundle_meta"]["bf16"] = (
    META1.replace(b"torch.float32", b"torch.bfloat16") + b"\0\0" +
    npy("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }") +
    b"\x80\x3f\x00\x40")

# --- .pt files: torch.save's stored zip of one tensor ---------------------------
# The pickle as torch.save writes it (protocol 2, pickletools.dis of a
# torch 1.13 file), written opcode by opcode; the zip by Python's zipfile.
def p_str(s):
    return b"X" + struct.pack("<I", len(s)) + s.encode()


def p_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    return b"J" + struct.pack("<i", v)


def p_tuple(items):
    if not items:
        return b")"
    body = b"".join(items)
    if len(items) <= 3:
        return body + bytes([0x84 + len(items)])
    return b"(" + body + b"t"


def tensor_pickle(storage, count, shape, stride, offset=0, dtype=None):
    v3 = dtype is not None
    p = b"\x80\x02"
    p += b"ctorch._utils\n_rebuild_tensor_v%d\nq\x00" % (3 if v3 else 2)
    p += b"((" + p_str("storage") + b"q\x01ctorch\n" + storage.encode()
    p += b"\nq\x02" + p_str("0") + b"q\x03" + p_str("cpu") + b"q\x04"
    p += p_int(count) + b"tq\x05Q" + p_int(offset)
    p += p_tuple([p_int(d) for d in shape]) + b"q\x06"
    p += p_tuple([p_int(d) for d in stride]) + b"q\x07\x89"
    p += b"ccollections\nOrderedDict\nq\x08)Rq\t"
    if v3:
        p += b"ctorch\n" + dtype.encode() + b"\n"
    return p + b"tq\nRq\x0b."


def pt_file(pickle_bytes, data, archive="tensor0"):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, body in ((archive + "/data.pkl", pickle_bytes),
                           (archive + "/data/0", data),
                           (archive + "/version", b"3\n")):
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), body)
    return out.getvalue()


F32_PKL = tensor_pickle("FloatStorage", 2, [2], [1])
seeds["pt_reader"]["f32_2"] = pt_file(F32_PKL, struct.pack("<2f", 1.5, -2))
seeds["pt_reader"]["bf16_2x3"] = pt_file(
    tensor_pickle("BFloat16Storage", 6, [2, 3], [3, 1]), bytes(range(12)))
seeds["pt_reader"]["u16_v3"] = pt_file(
    tensor_pickle("UntypedStorage", 8, [4], [1], dtype="uint16"), bytes(8))
seeds["pt_reader"]["scalar_offset"] = pt_file(
    tensor_pickle("LongStorage", 3, [], [], offset=2), bytes(24))
seeds["pt_reader"]["rank4"] = pt_file(
    tensor_pickle("ByteStorage", 24, [2, 1, 3, 4], [12, 12, 4, 1]), bytes(24))
seeds["pt_reader"]["pickle_only"] = F32_PKL

# --- compare and stats: sides in any form (test/fuzz/analysis_sides.h) ---------
# compare: byte 0 = forms (bits 0-1 expected, 2-3 actual: 0 snapshot, 1 .npy,
# 2 .pt, 3 unpack directory), byte 1 = options (bits 0-1 mode, 2 equal-nan,
# 3 inputs, 4 allow-dtype-mismatch, 5 actual = expected, 6-7 show), bytes
# 2-3 = the expected side's length; stats: byte 0 = form, byte 1 = void dtype.
def side_pair(eform, aform, opts, e, a=b""):
    return bytes([eform | (aform << 2), opts]) + struct.pack("<H", len(e)) + e + a


PT_F32_2 = pt_file(F32_PKL, struct.pack("<2f", 0, 1))
NPY_F4_2 = F4_2 + struct.pack("<2f", 0, 1)
NPY_BF16 = (npy("{'descr': '|V2', 'fortran_order': False, 'shape': (2, 1), }")
            + b"\x80\x3f\x00\x40")
NPY_FORTRAN = (npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }")
               + struct.pack("<6f", 0, 3, 1, 4, 2, 5))
NPY_BE = (npy("{'descr': '>f8', 'fortran_order': True, 'shape': (2, 2), }")
          + struct.pack(">4d", 1, float("nan"), float("inf"), -0.0))
CLASSIC = seeds["snapshot"]["with_literals"]
COLMAJOR = (mc.HEADER + mc.block([]) +
            mc.block([mc.f32_literal([2, 3], m2m=[0, 1])]))
ROWMAJOR = mc.HEADER + mc.block([]) + mc.block([mc.f32_literal([2, 3])])
seeds["compare"]["decomposed_self"] = side_pair(0, 0, 0x24, mc.GOOD)
seeds["compare"]["decomposed_vs_npy"] = side_pair(0, 1, 0x00, mc.GOOD, NPY_F4_2)
seeds["compare"]["npy_vs_pt_numpy"] = side_pair(1, 2, 0x41, NPY_F4_2, PT_F32_2)
seeds["compare"]["classic_inputs_xla"] = side_pair(0, 0, 0x0e, CLASSIC, mc.GOOD)
seeds["compare"]["colmajor_vs_rowmajor"] = side_pair(0, 0, 0xc0, COLMAJOR, ROWMAJOR)
seeds["compare"]["fortran_vs_decomposed"] = side_pair(1, 0, 0x80, NPY_FORTRAN, ROWMAJOR)
seeds["compare"]["unpack_dir_dtypes"] = side_pair(3, 1, 0x10, NPY_F4_2, NPY_BE)
seeds["compare"]["big_endian_self"] = side_pair(1, 1, 0x24, NPY_BE)
seeds["stats"]["decomposed"] = b"\x00\x00" + mc.GOOD
seeds["stats"]["classic"] = b"\x00\x00" + CLASSIC
seeds["stats"]["colmajor"] = b"\x00\x00" + COLMAJOR
seeds["stats"]["npy"] = b"\x01\x00" + NPY_F4_2
seeds["stats"]["npy_bf16"] = b"\x01\x01" + NPY_BF16
seeds["stats"]["fortran"] = b"\x01\x00" + NPY_FORTRAN
seeds["stats"]["big_endian_fortran"] = b"\x01\x00" + NPY_BE
seeds["stats"]["pt"] = b"\x02\x00" + PT_F32_2
seeds["stats"]["pt_bf16"] = b"\x02\x00" + seeds["pt_reader"]["bf16_2x3"]
seeds["stats"]["unpack_dir"] = b"\x03\x00" + NPY_F4_2

# three_way: byte 0 = forms (bits 0-1 expected, 2-3 actual, 4-5 baseline),
# byte 1 = options (0 equal-nan, 1 inputs, 2 actual = expected, 3 errors to
# the temp file, 4-7 bins - 1), bytes 2-3 and 4-5 = the expected and actual
# sides' lengths; then the three sides.
def side_triple(eform, aform, bform, opts, e, a, b):
    return (bytes([eform | (aform << 2) | (bform << 4), opts]) +
            struct.pack("<HH", len(e), len(a)) + e + a + b)


NPY_F4_2B = F4_2 + struct.pack("<2f", 0.5, 1.25)
seeds["three_way"]["npy"] = side_triple(1, 1, 1, 0xf0, NPY_F4_2, NPY_F4_2B, NPY_F4_2)
seeds["three_way"]["same_spilled"] = side_triple(1, 1, 1, 0x0c, NPY_F4_2B, b"", NPY_F4_2)
seeds["three_way"]["snapshot_vs_pt"] = side_triple(0, 2, 1, 0x32, mc.GOOD, PT_F32_2, NPY_F4_2)
seeds["three_way"]["colmajor_nan"] = side_triple(0, 0, 1, 0x91, COLMAJOR, ROWMAJOR, NPY_BE)
seeds["three_way"]["unpack_dir"] = side_triple(3, 1, 3, 0x00, NPY_F4_2, NPY_F4_2B, NPY_F4_2)

# --- round trip: the input drives the writer; any bytes will do -------------
seeds["roundtrip"]["a"] = bytes(range(64))
seeds["roundtrip"]["b"] = b"\xff" * 32 + b"\x01" * 200
seeds["roundtrip"]["c"] = mc.GOOD * 4

# --- HLO text: hand-written modules in XLA's three styles ---------------------
seeds["hlo_text"]["long"] = b"""HloModule SyncTensorsGraph.21, input_output_alias={ {0}: (1, {}, must-alias) }, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->(f32[2,3]{1,0}, f32[])}

%AddComputation.9 (x.10: f32[], y.11: f32[]) -> f32[] {
  %x.10 = f32[] parameter(0)
  %y.11 = f32[] parameter(1)
  ROOT %add.12 = f32[] add(f32[] %x.10, f32[] %y.11)
}

ENTRY %SyncTensorsGraph.21 (p0.1: f32[2,3], p1.2: f32[2,3]) -> (f32[2,3], f32[]) {
  %p1.2 = f32[2,3]{1,0} parameter(1), frontend_attributes={neff_input_names="input1"}
  %p0.1 = f32[2,3]{1,0} parameter(0), frontend_attributes={neff_input_names="input0"}
  %multiply.3 = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %p0.1, f32[2,3]{1,0} %p1.2), metadata={op_type="aten__mul" op_name="aten__mul" source_file="/tmp/m.py" source_line=12}
  %constant.4 = f32[] constant(0)
  %big = f32[11]{0} constant({...})
  %reduce.13 = f32[] reduce(f32[2,3]{1,0} %multiply.3, f32[] %constant.4), dimensions={0,1}, to_apply=%AddComputation.9
  ROOT %tuple.14 = (f32[2,3]{1,0}, f32[]) tuple(f32[2,3]{1,0} %multiply.3, f32[] %reduce.13), sharding={{replicated}, {maximal device=0}}
}
"""
seeds["hlo_text"]["modern_scheduled"] = b"""HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, num_partitions=2

%region_0.1 (Arg_0.2: f32[], Arg_1.3: f32[]) -> f32[] {
  %Arg_0.2 = f32[] parameter(0)
  %Arg_1.3 = f32[] parameter(1)
  ROOT %maximum.4 = f32[] maximum(%Arg_0.2, %Arg_1.3), metadata={op_name="jit(f)/max" source_file="f.py" source_line=4 stack_frame_id=1}
}

ENTRY %main.12 (Arg_0.5: f32[8]) -> f32[8] {
  %Arg_0.5 = f32[8]{0} parameter(0)
  %constant.13 = f32[] constant(-inf)
  %reduce.14 = f32[] reduce(%Arg_0.5, %constant.13), dimensions={0}, to_apply=%region_0.1
  %broadcast.15 = f32[8]{0} broadcast(%reduce.14), dimensions={}
  %async-start = ((f32[8]{0}), f32[8]{0}) negate-start(%broadcast.15)
  %async-done = f32[8]{0} negate-done(%async-start)
  ROOT %subtract.16 = f32[8]{0} subtract(%Arg_0.5, %async-done), sharding={devices=[2]<=[2]}
}
"""
seeds["hlo_text"]["short_while"] = b"""body {
  p = (s32[], f32[3]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  add = s32[] add(i, s32[] constant(1))
  x = f32[3]{0} get-tuple-element(p), index=1
  m = f32[3]{0} multiply(x, f32[3]{0} constant({1.5, -2, nan}))
  ROOT t = (s32[], f32[3]{0}) tuple(add, m)
}

cond {
  p = (s32[], f32[3]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ROOT lt = pred[] compare(i, s32[] constant(7)), direction=LT
}

ENTRY main {
  a = f32[3]{0} parameter(0)
  t = (s32[], f32[3]{0}) tuple(s32[] constant(0), a)
  w = (s32[], f32[3]{0}) while(t), condition=cond, body=body
  ROOT r = f32[3]{0} get-tuple-element(w), index=1
}
"""
seeds["hlo_text"]["attributes"] = b"""HloModule attrs
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  m = f32[2,3]{1,0} parameter(0)
  i = s32[] parameter(1)
  img = f32[1,5,5,2]{3,2,1,0} parameter(2)
  ker = f32[3,3,2,4]{3,2,1,0} parameter(3)
  idx = s32[3,1]{1,0} parameter(4)
  sl = f32[1,2]{1,0} slice(m), slice={[1:2], [0:3:2]}
  pd = f32[3,9]{1,0} pad(m, f32[] constant(0)), padding=0_1x1_1_2
  ds = f32[1,2]{1,0} dynamic-slice(m, i, i), dynamic_slice_sizes={1,2}
  tr = f32[3,2]{0,1} transpose(m), dimensions={1,0}
  dot.1 = f32[2,2]{1,0} dot(m, tr), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
  conv = f32[1,5,5,4]{3,2,1,0} convolution(img, ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  rw = f32[2,1]{1,0} reduce-window(m, f32[] constant(0)), window={size=1x3 stride=1x2 pad=0_0x-1_1}, to_apply=add
  gth = f32[3,3]{1,0} gather(m, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  ar = f32[2,3]{1,0} all-reduce(m), channel_id=3, replica_groups={{0,1},{2,3}}, to_apply=add
  ag = f32[4,3]{1,0} all-gather(m), replica_groups=[2,2]<=[4], dimensions={0}
  cc = f32[2,3]{1,0} custom-call(m), custom_call_target="AwsNeuronSoftmax", api_version=API_VERSION_UNSPECIFIED, backend_config="1"
  c2 = (f32[], s32[2]) constant((1.5, {1, 2}))
  ROOT r = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(ar, cc), control-predecessors={sl, pd}
}
"""
seeds["hlo_text"]["literals"] = b"""ENTRY e {
  a = bf16[2]{0} constant({1.5, -inf})
  b = f16[2,2]{0,1} constant({ { 1, 2 }, { 3, 65504 } })
  c = s4[3]{0} constant({-8, -3, 7})
  d = c64[2]{0} constant({(1, 2), (3, -4.5)})
  e2 = pred[4]{0} constant({1, 0, true, false})
  f = f8e4m3fn[2]{0} constant({1.5, 448})
  g = s32[2,2,2]{2,1,0} constant({ /*i0=0*/ { { 1, 2 }, { 3, 4 } }, /*i0=1*/ { { 5, 6 }, { 7, 8 } } })
  h = u64[] constant(18446744073709551615)
  ROOT t = (bf16[2]{0}, f16[2,2]{0,1}) tuple(a, b)
}
"""
seeds["hlo_text"]["stack_frames"] = b"""HloModule m, buffer_donor={ (0, {}) }

FileNames
1 "a.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=4}
StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY e {
  ROOT a = f32[] parameter(0), metadata={op_name="x" stack_frame_id=1}
}
"""
seeds["hlo_text"]["error"] = b"ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] add(p, q)\n}\n"
# What fuzzing found earlier (docs/testing-and-hardening.md): a layout
# that is not a permutation, a name starting with `-`, an iota sharding of
# the wrong device count, a tuple constant elided as `{...}`.
seeds["hlo_text"]["found_layout"] = b"ENTRY e {\n  ROOT b = f16[2,2]{10,1} constant({ { 1, 2 }, { 3, 4 } })\n}\n"
seeds["hlo_text"]["found_name"] = b"ENTRY e {\n  -inf = u64[] constant(1)\n  ROOT r = u64[] negate(-inf)\n}\n"
seeds["hlo_text"]["found_iota"] = b"ENTRY e {\n  ROOT p = f32[8]{0} parameter(0), sharding={devices=[2]<=[0]}\n}\n"
seeds["hlo_text"]["found_tuple_constant"] = b"ENTRY e {\n  ROOT c = (f32[], s32[2]{0}) constant({...})\n}\n"
# The text parsed to bytes reads its instructions back: a tuple nested past
# protobuf's recursion limit, a string that is not UTF-8, a sugared
# fusion-start.
seeds["hlo_text"]["found_deep_tuple"] = (
    b"HloModule m\n\nENTRY e {\n  ROOT p = " + b"(" * 100 + b"f32[]" + b")" * 100 +
    b" parameter(0)\n}\n")
seeds["hlo_text"]["found_not_utf8"] = (
    b"HloModule m\n\nENTRY e {\n  x = f32[] parameter(0)\n"
    b"  s = ((f32[]), f32[], s32[]) negate-start(x), metadata={op_name=\"\xff\"}\n"
    b"  ROOT d = f32[] negate-done(s)\n}\n")
seeds["hlo_text"]["found_fusion_start"] = (
    b"HloModule m, is_scheduled=true\n\nfused {\n  a = f32[2] parameter(0)\n"
    b"  ROOT n = f32[2] negate(a)\n}\n\nENTRY e {\n  x = f32[2] parameter(0)\n"
    b"  s = ((f32[2]), f32[2], s32[]) fusion-start(x), kind=kLoop, calls=fused\n"
    b"  ROOT d = f32[2] fusion-done(s)\n}\n")
# torch-xla's graph dump: a report, then the module between the markers.
seeds["hlo_text"]["graph_dump"] = (
    b"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  step (t.py:3)\n\nHashes: (ab12)\n\n"
    b"## BEGIN_GRAPH\nHloModule g, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n"
    b"ENTRY %g (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n"
    b"  ROOT %n = f32[2]{0} negate(f32[2]{0} %p)\n}\n\n\n## END_GRAPH\n\n\n")


# --- bisect: module seed (8 bytes), steps, max_dim, attributes, input seed
# (8), finite inputs, the instruction (8), the element (8), same numerics
# (0 = f32 reference), the side the fault goes to ----------------------------
def bisect_seed(module_seed, steps, max_dim, attrs, inputs, finite, pick, element, same, side):
    return (struct.pack(">Q", module_seed) + bytes([steps, max_dim, attrs]) +
            struct.pack(">Q", inputs) + bytes([finite]) + struct.pack(">QQ", pick, element) +
            bytes([same, side]))


seeds["bisect"]["small"] = bisect_seed(1, 12, 3, 0, 0, 1, 5, 2, 1, 0)
seeds["bisect"]["attributes"] = bisect_seed(7, 20, 4, 1, 9, 1, 11, 0, 2, 1)
seeds["bisect"]["f32_reference"] = bisect_seed(259, 8, 2, 0, 3, 1, 1, 7, 0, 0)
seeds["bisect"]["nonfinite"] = bisect_seed(521, 27, 5, 1, 4, 0, 30, 1, 3, 1)
# Inputs the target once failed on (each fixed since): an s32 leaf of a
# tuple compared with the f32 tolerance; a complex element with an infinite
# part that the fault did not move; two dynamic-update-slices that wrote
# their operand in place before its last use.
seeds["bisect"]["found_int_leaf"] = bytes.fromhex(
    "b710b466f405ea654ab14b4ce8c74d2a7fcc240c22459a1cfc7ac4088a384b555b62855f17b5dc60a94ca5b7e52365")
seeds["bisect"]["found_complex_inf"] = bytes.fromhex(
    "d10d8cdc3c21be2d0e3327c65e11ffe948e3f068c60cdc530e7b069bccdfb9b2eadc773ee38d4398eb11156f046b15f8"
    "7e425ba55cdd32333729bbc94cffe8cf775d0438f0bcd8630651")
seeds["bisect"]["found_update_in_place_a"] = bytes.fromhex(
    "3efd43c61b59ec242e62e677045028e1e9fd1dc05fc2a998f45a50c2d7637cab3b6efe458b3e5556b95fbed7741080aa"
    "60c1ae3a20536adb76265eb9c381")
seeds["bisect"]["found_update_in_place_b"] = bytes.fromhex(
    "ae37b8daf00ad507806f24aafc89acafef925d7ddbf9c944b7bffae673a01f08da9b9237ed92d4a458223f43194b1faf"
    "23f927d373")


# --- eval: the generator of eval_fuzz.cc reads, in order: the reducer's
# opcode (even: add), each parameter's type (0: F32), rank (0: a scalar)
# and its 4 data bytes, then per instruction: opcode index, operand count,
# one byte per operand (which earlier instruction), the declared shape's
# choice (1: the first operand's), attribute counts and values (all 0
# here). One seed per opcode of its list, on two F32 scalars 1.5 and -2.0.
EVAL_OPS = ["add", "multiply", "divide", "maximum", "compare", "select",
            "exponential", "negate", "convert", "broadcast", "reshape",
            "transpose", "slice", "reverse", "concatenate", "pad", "iota",
            "reduce", "dot", "dynamic-slice", "dynamic-update-slice",
            "gather", "sort", "tuple", "get-tuple-element", "shift-left",
            "remainder", "clamp", "reduce-window", "bitcast", "constant",
            "while"]
for k, op in enumerate(EVAL_OPS):
    params = (b"\x00\x00" + struct.pack("<f", 1.5) +
              b"\x00\x00" + struct.pack("<f", -2.0))
    instruction = bytes([k, 2, 0, 1, 1]) + bytes(9)
    seeds["eval"][op] = b"\x00" + params + instruction


def main():
    for target, files in seeds.items():
        d = os.path.join(ROOT, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    print(", ".join(f"{t}: {len(f)}" for t, f in seeds.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
