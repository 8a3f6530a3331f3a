#!/usr/bin/env python3
"""Writes the malformed-input corpus (test/corpus/files/) and its manifest
(test/corpus/manifest.tsv) from hand-written bytes.

Nothing here uses this project's writer or protobuf: every file is spelled
out byte by byte from the wire rules (docs/format.md §3 to §9), with two
tiny helpers (varint, box) that follow the spec's definition of a box: one
length byte L, then L bytes of `3a <n> <varint>` (LiteralProto.u64s, packed).

Manifest columns (tab-separated, one row per file x command):
  file      path under test/corpus/files/
  command   CLI command word(s) that must reject the file: inspect, verify,
            unpack, pack, "bundle verify", and the analysis commands:
            "compare" (the file as EXPECTED against compare_reference.bin),
            "compare actual" (as ACTUAL) and "stats", which exit 2
  exit      expected exit code of build/bin/decomposed
  code      the absl::StatusCode name the library returns (checked directly
            by test/snapshot/corpus_test.cc for `inspect`; documents the contract for
            the others, whose CLI prints only the message)
  frame     the frame the message must name ("input 0 body length box")
  fragment  another substring the message must contain
  state     "checked": the expectation was worked out against the code that
            exists; "provisional": written from the spec before the command
            landed, to be confirmed (a mismatch fails the run then)
  what      what is wrong with the file

Run: /usr/bin/python3 test/corpus/make_corpus.py   (rewrites both outputs)
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from wire import box, ld, packed, tag as field, varint  # noqa: E402,F401

OUT = os.path.join(HERE, "files")


# ShapeProto: element_type = 2, dimensions = 3, tuple_shapes = 4, layout = 5.
# LayoutProto: minor_to_major = 1.  LiteralProto: shape = 1, f32s = 8.
F32, U64, TUPLE = 11, 9, 13


def shape(etype, dims, m2m=None, layout=True):
    s = field(2, 0) + varint(etype)
    if dims:
        s += packed(3, dims)
    if layout:
        s += ld(5, packed(1, m2m if m2m is not None
                          else list(range(len(dims) - 1, -1, -1))))
    return s


def f32_literal(dims, count=None, **kw):
    n = 1
    for d in dims:
        n *= d
    if count is None:
        count = n
    data = b"".join(struct.pack("<f", float(i)) for i in range(count))
    return ld(1, shape(F32, dims, **kw)) + ld(8, data)


def element(body):
    return box(len(body)) + body


def block(bodies):
    return box(len(bodies)) + b"".join(element(b) for b in bodies)


SNAP = b""  # an empty HloSnapshot is a valid message
HEADER = box(len(SNAP)) + SNAP
LIT = f32_literal([2])            # F32[2]{0}: 22 bytes
GOOD_INPUTS = block([LIT])
GOOD = HEADER + GOOD_INPUTS + block([LIT])  # with region [2]

cases = []  # (file, bytes, [(command, exit, code, frame, fragment, state)], what)
FRAMING_CMDS = ("inspect", "verify", "unpack")


ANALYSIS_CMDS = ("compare", "compare actual", "stats")


def analysis(code, frame, fragment, **per_command):
    """Rows for compare (either side) and stats: unreadable input exits 2
    with the same message."""
    return [(c, 2, code, frame, per_command.get(c.split()[0], fragment),
             "checked") for c in ANALYSIS_CMDS]


def framing(name, data, code, frame, fragment, what, analysis_skip=(),
            **per_command):
    """A framing defect: inspect, verify and unpack must all reject it, and
    so must compare and stats (but for the commands in analysis_skip).
    per_command overrides the fragment for one command (unpack=...,
    compare=..., stats=...), where that command words the same finding
    differently."""
    rows = [("inspect", 1, code, frame, per_command.get("inspect", fragment),
             "checked")]
    for c in ("verify", "unpack"):
        rows.append((c, 1, code, frame, per_command.get(c, fragment),
                     "checked"))
    rows += [r for r in analysis(code, frame,
                                 per_command.get("inspect", fragment),
                                 **per_command)
             if r[0].split()[0] not in analysis_skip]
    cases.append((name, data, rows, what))


def literal(name, data, code, frame, fragment, what):
    rows = [(c, 1, code, frame, fragment, "checked")
            for c in ("verify", "unpack")]
    rows += analysis(code, frame, fragment)
    cases.append((name, data, rows, what))


# --- region [0] ---------------------------------------------------------------
framing("empty.bin", b"", "INVALID_ARGUMENT", "file",
        "found an empty file", "empty file (docs/format.md §7.8)")
framing("trunc_header_box.bin", b"\x03\x3a", "OUT_OF_RANGE",
        "header length box", "declared 3 bytes but 1 remain",
        "truncated inside the header length box")
framing("trunc_header_body.bin", box(10) + b"\x0a\x08abcd",
        "OUT_OF_RANGE", "header", "declared 10 bytes but 6 remain",
        "truncated inside the header (region [0])")
framing("header_len_2_40.bin", box(1 << 40) + b"\x0a\x00",
        "OUT_OF_RANGE", "header",
        "declared 1099511627776 bytes but 2 remain",
        "header length past the end of the file")
framing("len_byte_zero.bin", b"\x00" + GOOD, "INVALID_ARGUMENT",
        "header length box", "found 0 (an empty box)", "length byte 0")
framing("len_byte_0x80.bin", b"\x80" + b"\x3a\x01\x00" * 50,
        "INVALID_ARGUMENT", "header length box", "found 0x80",
        "length byte >= 0x80 (sign-extended by snapshot-unpack)")
framing("len_byte_0xff.bin", b"\xff" + b"\x00" * 300, "INVALID_ARGUMENT",
        "header length box", "found 0xff", "length byte 0xff")
framing("box_no_u64s.bin", b"\x06\x0a\x04\x10\x09\x2a\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box", "found 0 values",
        "box with a U64 shape and no u64s")
framing("box_two_values_packed.bin", b"\x04\x3a\x02\x00\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box", "found 2 values",
        "box with two packed u64s values")
framing("box_two_values_unpacked.bin",
        HEADER + b"\x04\x38\x01\x38\x01" + element(LIT),
        "INVALID_ARGUMENT", "input count box", "found 2 values",
        "count box with two unpacked u64s records")
framing("box_shape_f32.bin",
        b"\x09\x0a\x04\x10\x0b\x2a\x00\x3a\x01\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box", "found element_type 11",
        "box whose shape is F32, not U64")
framing("box_shape_dims.bin",
        b"\x0a\x0a\x05\x10\x09\x1a\x01\x01\x3a\x01\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box",
        "found a shape with dimensions", "box whose shape has dimensions")
framing("box_shape_m2m.bin",
        b"\x0c\x0a\x07\x10\x09\x2a\x03\x0a\x01\x00\x3a\x01\x00" +
        GOOD_INPUTS, "INVALID_ARGUMENT", "header length box",
        "found a non-empty minor_to_major",
        "box whose shape layout has a minor_to_major")
framing("box_shape_no_type.bin",
        b"\x07\x0a\x02\x2a\x00\x3a\x01\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box",
        "no element_type (PRIMITIVE_TYPE_INVALID)",
        "box whose shape has no element_type")
framing("box_unknown_field.bin", b"\x05\x3a\x01\x00\x40\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box", "found field 8 wire type 0",
        "box with an unknown field (f32s varint)")
framing("box_varint_overflow.bin",
        b"\x0d\x3a\x0b" + b"\xff" * 10 + b"\x01" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box",
        "a u64s varint, found a malformed varint",
        "box whose varint has 11 bytes")
framing("box_packed_len_past_box.bin", b"\x03\x3a\x05\x00" + GOOD_INPUTS,
        "INVALID_ARGUMENT", "header length box",
        "field 7 length within the 1 byte left of the LiteralProto",
        "packed u64s length past the box end")

# --- region [1] ---------------------------------------------------------------
framing("trunc_input_count.bin", HEADER + b"\x03\x3a\x01", "OUT_OF_RANGE",
        "input count box", "declared 3 bytes but 2 remain",
        "truncated inside the input count box")
framing("input_count_missing.bin", HEADER, "OUT_OF_RANGE", "input count box",
        "found the end of the data", "file ends after region [0]")
framing("input_count_2_60.bin", HEADER + box(1 << 60) + element(LIT),
        "OUT_OF_RANGE", "input count box",
        "found a count of 1152921504606846976", "input count of 2^60")
framing("input_count_len_zero.bin", HEADER + b"\x00" + element(LIT),
        "INVALID_ARGUMENT", "input count box", "found 0 (an empty box)",
        "input count box with length byte 0")
framing("trunc_input_len_box.bin", HEADER + box(1) + b"\x03\x3a\x01",
        "OUT_OF_RANGE", "input 0 body length box",
        "declared 3 bytes but 2 remain",
        "truncated inside an input body length box")
framing("input_len_byte_0x80.bin", HEADER + box(1) + b"\x80" + LIT * 8,
        "INVALID_ARGUMENT", "input 0 body length box", "found 0x80",
        "input body length box with length byte 0x80")
framing("trunc_input_body.bin", HEADER + box(1) + box(len(LIT)) + LIT[:10],
        "OUT_OF_RANGE", "input 0 body", "declared 22 bytes but 10 remain",
        "truncated inside an input body")
framing("trunc_second_input_body.bin",
        HEADER + box(2) + element(LIT) + box(len(LIT)) + LIT[:21],
        "OUT_OF_RANGE", "input 1 body", "declared 22 bytes but 21 remain",
        "truncated inside the second input body")
framing("input_body_len_2_62.bin", HEADER + box(1) + box(1 << 62) + LIT,
        "OUT_OF_RANGE", "input 0 body",
        "declared 4611686018427387904 bytes", "body length 2^62")
framing("body_not_literal.bin",
        HEADER + block([b"\x93NUMPY\x01\x00\x76\x00{'descr': '<f4'}"]),
        "INVALID_ARGUMENT", "input 0 body", "found field 1250 wire type 3",
        "an .npy file where a LiteralProto body should be")
framing("body_shape_as_varint.bin", HEADER + block([b"\x08\x0b"]),
        "INVALID_ARGUMENT", "input 0 body", "found wire type 0",
        "literal shape (field 1) encoded as a varint",
        # protobuf would keep the varint as an unknown field: no shape.
        unpack="LiteralProto has no shape",
        verify="LiteralProto has no shape",
        compare="LiteralProto has no shape",
        stats="LiteralProto has no shape")
framing("body_field_past_end.bin", HEADER + block([b"\x42\x10\x00\x00"]),
        "INVALID_ARGUMENT", "input 0 body",
        "field 8 length within the 2",
        "literal field length past the body end")
framing("body_tag_truncated.bin", HEADER + block([LIT + b"\xc2"]),
        "INVALID_ARGUMENT", "input 0 body",
        "found a malformed or truncated varint",
        "literal body ending inside a field tag")
framing("body_shape_dims_past_end.bin",
        HEADER + block([ld(1, b"\x10\x0b\x1a\x09\x02") + ld(8, b"\0" * 8)]),
        "INVALID_ARGUMENT", "input 0 shape",
        "field 3 length within the 1 byte left of the ShapeProto",
        "packed dimensions running past the shape's end")
framing("body_rank_65.bin",
        HEADER + block([ld(1, field(2, 0) + varint(F32) +
                           packed(3, [1] * 65))]),
        "RESOURCE_EXHAUSTED", "input 0 shape", "at most 64 entries in field 3",
        "rank 65, one past kMaxRank")
nested = shape(F32, [], layout=True)
for _ in range(66):
    nested = field(2, 0) + varint(TUPLE) + ld(4, nested)
framing("body_tuple_depth_66.bin", HEADER + block([ld(1, nested)]),
        "RESOURCE_EXHAUSTED", "input 0 shape", "tuple nesting of at most 64",
        "tuple shapes nested 66 deep")

# --- region [2] ---------------------------------------------------------------
framing("trunc_output_count.bin", HEADER + GOOD_INPUTS + b"\x03\x3a",
        "OUT_OF_RANGE", "output count box", "declared 3 bytes but 1 remain",
        "truncated inside the output count box")
framing("output_count_2_60.bin",
        HEADER + GOOD_INPUTS + box(1 << 60) + element(LIT),
        "OUT_OF_RANGE", "output count box",
        "found a count of 1152921504606846976", "output count of 2^60")
framing("output_count_len_zero.bin", HEADER + GOOD_INPUTS + b"\x00\x00",
        "INVALID_ARGUMENT", "output count box", "found 0 (an empty box)",
        "output count box with length byte 0")
framing("trunc_output_body.bin",
        HEADER + GOOD_INPUTS + box(1) + box(len(LIT)) + LIT[:5],
        "OUT_OF_RANGE", "output 0 body", "declared 22 bytes but 5 remain",
        "truncated inside an output body")
framing("output_body_not_literal.bin",
        HEADER + GOOD_INPUTS + block([b"\x07\x07\x07"]),
        "INVALID_ARGUMENT", "output 0 body", "found field number 0",
        "output body that is not a LiteralProto",
        # compare --inputs (the corpus runs it so) never decodes outputs.
        analysis_skip=("compare",))
framing("trailing_after_region2.bin", GOOD + b"XYZ", "INVALID_ARGUMENT",
        "trailing data", "found 3 more bytes",
        "trailing bytes after region [2]")
framing("trailing_box_after_region2.bin", GOOD + box(0), "INVALID_ARGUMENT",
        "trailing data", "the end of the file after region [2]",
        "a fourth region (another count box) after region [2]")

# --- literal rules (XLA's CreateFromProto): verify and unpack ----------------
literal("literal_no_shape.bin", HEADER + block([ld(8, b"\0" * 8)]),
        "INVALID_ARGUMENT", "input 0", "shape", "a literal without a shape")
literal("literal_no_layout.bin",
        HEADER + block([f32_literal([2], layout=False)]),
        "INVALID_ARGUMENT", "input 0", "--lenient-layout reads none",
        "a literal shape without a layout (the error names the option)")
literal("literal_count_mismatch.bin",
        HEADER + block([f32_literal([2, 3], count=5)]),
        "INVALID_ARGUMENT", "input 0", "found 5 values",
        "F32[2,3] literal holding 5 values (20 bytes, 24 expected)")
literal("literal_dims_overflow.bin",
        HEADER + block([ld(1, shape(F32, [1 << 32, 1 << 32]))]),
        "RESOURCE_EXHAUSTED", "input 0", "4294967296",
        "dimensions whose product overflows 64 bits")
literal("literal_negative_dim.bin",
        HEADER + block([ld(1, shape(F32, [-1], m2m=[0]))]),
        "INVALID_ARGUMENT", "input 0", "-1", "a negative dimension")
literal("literal_layout_not_perm.bin",
        HEADER + block([f32_literal([2, 3], m2m=[0, 0])]),
        "INVALID_ARGUMENT", "input 0", "permutation",
        "minor_to_major {0,0} is not a permutation")
literal("literal_tuple_input.bin",
        HEADER + block([ld(1, field(2, 0) + varint(TUPLE) +
                           ld(4, shape(F32, [2]))) +
                        ld(10, f32_literal([2]))]),
        "INVALID_ARGUMENT", "input 0", "TUPLE",
        "a TUPLE literal where an array (one .npy) is needed")
literal("literal_unknown_type.bin",
        HEADER + block([ld(1, shape(99, [2])) + ld(8, b"\0" * 8)]),
        "INVALID_ARGUMENT", "input 0", "99", "element type 99")

# --- unpack only --------------------------------------------------------------
cases.append(("header_not_hlosnapshot.bin",
              box(4) + b"\xff\xff\xff\xff" + GOOD_INPUTS,
              [("unpack", 1, "INVALID_ARGUMENT", "header", "(at byte 4",
                "checked")],
              "region [0] bytes that do not parse as an HloSnapshot"))
cases.append(("no_region2_dump_outputs.bin", HEADER + GOOD_INPUTS,
              [("unpack", 1, "OUT_OF_RANGE", "output", "region [2]",
                "checked")],
              "-dump-snapshot-outputs on a file without region [2]"))

# --- .npy (the npy reader, through pack) -------------------------------------
NPY_OK_TEXT = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
NPY_OK_TEXT += b" " * (118 - len(NPY_OK_TEXT) - 1) + b"\n"
for name, data, code, frag, what in [
    ("npy_truncated_header.npy",
     b"\x93NUMPY\x01\x00\x76\x00" + NPY_OK_TEXT[:40], "OUT_OF_RANGE",
     "declared 118 bytes but 40 remain", "truncated .npy header"),
    ("npy_short_prefix.npy", b"\x93NUMPY\x01", "OUT_OF_RANGE",
     "found a file of 7 bytes", ".npy shorter than its fixed prefix"),
    ("npy_bad_magic.npy", b"\x93NUMPZ\x01\x00\x76\x00" + NPY_OK_TEXT,
     "INVALID_ARGUMENT", "magic", ".npy with a wrong magic"),
    ("npy_version_9.npy", b"\x93NUMPY\x09\x00\x76\x00" + NPY_OK_TEXT,
     "INVALID_ARGUMENT", "found 9.0", ".npy version 9.0"),
    ("npy_header_4gib.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\xff" + b"{",
     "RESOURCE_EXHAUSTED", "4294967295 bytes",
     ".npy 2.0 header length 2^32-1 (past kMaxNpyHeaderBytes)"),
]:
    cases.append((name, data,
                  [("pack", 1, code, "npy header", frag, "checked")] +
                  analysis(code, "npy header", frag),
                  what))
NPY_F_TEXT = b"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }"
NPY_F_TEXT += b" " * (118 - len(NPY_F_TEXT) - 1) + b"\n"
cases.append(("npy_fortran_short_data.npy",
              b"\x93NUMPY\x01\x00\x76\x00" + NPY_F_TEXT + b"\0" * 40,
              analysis("OUT_OF_RANGE", "npy data", "found 40"),
              "Fortran-order F32[3,4] .npy holding 40 of its 48 data bytes"))

# --- bundles ------------------------------------------------------------------
META = b"""{
  "call_index": 0,
  "dp_rank": 0,
  "format": "npy",
  "global_rank": 0,
  "global_step": null,
  "hash": "abc",
  "inputs": [
    {
      "dtype": "torch.float32",
      "index": 0,
      "shape": [2]
    },
    {
      "dtype": "torch.float32",
      "index": 1,
      "shape": [2]
    }
  ],
  "is_prompt": null,
  "matches": [],
  "positions": [],
  "req_ids": [],
  "schema": 1,
  "selected_by": ["call_index"],
  "tp_rank": 0
}
"""
NPY_F32_2 = b"\x93NUMPY\x01\x00\x76\x00" + NPY_OK_TEXT + struct.pack("<2f", 1, 2)
cases.append(("bundle_missing_tensor/call0/meta.json", META,
              [("bundle verify", 1, "NOT_FOUND", "tensor1", "tensor1",
                "checked")] +
              analysis("NOT_FOUND", "tensor1", "tensor1"),
              "bundle whose meta.json lists tensor1, which is missing"))
cases.append(("bundle_missing_tensor/call0/tensor0.npy", NPY_F32_2, [], ""))

# --- read, with a warning (docs/format.md §7.2): exit 0 -------------------------
# A header carrying one argument (HloSnapshot field 2 = LIT): verify reports
# a warning and stays valid; unpack warns on stderr and ignores it.
_HDR_ARGS = ld(2, LIT)
cases.append(("header_with_arguments.bin",
              box(len(_HDR_ARGS)) + _HDR_ARGS + GOOD_INPUTS + block([]),
              [(c, 0, "FAILED_PRECONDITION", "header",
                "header: carries 1 argument", "checked")
               for c in ("verify", "unpack")],
              "a header (region [0]) carrying an argument: a warning"))

# --- .pt files and classic snapshots (compare and stats) ----------------------
def stored_zip(entries):
    """A zip of stored entries (what torch.save writes), by Python's zipfile."""
    import io
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for n, body in entries:
            z.writestr(zipfile.ZipInfo(n, (1980, 1, 1, 0, 0, 0)), body)
    return out.getvalue()


# torch.save's pickle of a float32 tensor of 2 elements (protocol 2), as in
# test/fuzz/make_seeds.py.
PT_PICKLE = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00"
             b"storageq\x01ctorch\nFloatStorage\nq\x02X\x01\x00\x00\x000q\x03X"
             b"\x03\x00\x00\x00cpuq\x04K\x02tq\x05QK\x00K\x02\x85q\x06K\x01\x85q\x07"
             b"\x89ccollections\nOrderedDict\nq\x08)Rq\ttq\nRq\x0b.")
PT_OK = stored_zip([("t/data.pkl", PT_PICKLE), ("t/data/0", struct.pack("<2f", 1, 2)),
                    ("t/version", b"3\n")])
cases.append(("pt_truncated.pt", PT_OK[:len(PT_OK) // 2],
              analysis("INVALID_ARGUMENT", "pt_truncated.pt", "end-of-central-directory"),
              ".pt (a zip) cut in half: no central directory"))
cases.append(("pt_short_storage.pt",
              stored_zip([("t/data.pkl", PT_PICKLE), ("t/data/0", b"\0" * 4),
                          ("t/version", b"3\n")]),
              analysis("INVALID_ARGUMENT", "pt_short_storage.pt", "4 bytes"),
              ".pt whose storage holds 4 bytes for a FloatStorage of 2"))
cases.append(("pt_not_a_tensor.pt",
              stored_zip([("t/data.pkl", b"\x80\x02K\x07."), ("t/version", b"3\n")]),
              analysis("INVALID_ARGUMENT", "pt_not_a_tensor.pt", "data.pkl"),
              ".pt whose pickle is the integer 7, not a tensor"))
# A classic HloSnapshot (field 2: an F32[2] argument) cut inside the
# argument: every command reads it through the one snapshot reader, so
# every command names the same frame, the message, at the same offset
# (files ending in .pb or .auto are read with --snapshot-type=auto).
CLASSIC = ld(2, LIT) + ld(3, LIT)


def every_command(code, frame, fragment):
    """inspect, verify, unpack (exit 1) and compare, stats (exit 2): the
    same code, frame and message."""
    return [(c, 1, code, frame, fragment, "checked")
            for c in FRAMING_CMDS] + analysis(code, frame, fragment)


cases.append(("classic_truncated.pb", CLASSIC[:-6],
              every_command("INVALID_ARGUMENT", "HloSnapshot", "(at byte 24"),
              "classic HloSnapshot cut 6 bytes into its result"))
# Read as auto: neither form. The message says so first, then why each
# reading failed.
cases.append(("not_a_snapshot.auto",
              b"# decomposed\n\nA README, not a snapshot.\n",
              every_command("INVALID_ARGUMENT", "file",
                            "not a decomposed or classic snapshot; read as "
                            "decomposed, header length box: "),
              "a text file read with --snapshot-type=auto"))
# The bytes of len_byte_0x80.bin read as auto: taken for neither form, and
# the message explains the sign-extended length byte as the decomposed
# reading does.
cases.append(("len_byte_0x80.auto", b"\x80" + b"\x3a\x01\x00" * 50,
              every_command("INVALID_ARGUMENT", "file",
                            "sign-extends it to a negative length; "
                            "--lenient-length-byte reads it as unsigned"),
              "length byte 0x80 read with --snapshot-type=auto"))

# An HloModuleProto (what --xla_dump_hlo_as_proto's .hlo_module.pb holds)
# read as auto: its field 1 is the module's name, text, where an
# HloSnapshot's field 1 is an HloProto (whose own first record would be
# 0a, 12 or 1a): neither form, said first.
MODULE_PROTO = ld(1, b"jit_main_module") + ld(2, b"main.3")
cases.append(("module_proto.auto", MODULE_PROTO,
              every_command("INVALID_ARGUMENT", "file",
                            "not a decomposed or classic snapshot; read as "
                            "decomposed, "),
              "an HloModuleProto read with --snapshot-type=auto"))
# An HloProto (an --xla_dump_hlo_as_proto dump: field 1 the module itself)
# read as auto: its records index as an HloSnapshot's, but the "module"
# then is the module's name, which protobuf rejects as an HloModuleProto
# (0x6a: field 13, length 0x69 past the end): neither form.
cases.append(("hlo_proto.auto", ld(1, MODULE_PROTO),
              every_command("INVALID_ARGUMENT", "file",
                            "not a decomposed or classic snapshot; read as "
                            "decomposed, "),
              "an HloProto read with --snapshot-type=auto"))

# Support files (valid): the module that `pack` rows use, and the reference
# side of the compare rows (one F32[2] input, one output).
cases.append(("module.hlo", b"\x0a\x01m", [], ""))
cases.append(("compare_reference.bin", GOOD, [], ""))


def main():
    rows = []
    seen = set()
    for name, data, checks, what in cases:
        assert name not in seen, name
        seen.add(name)
        path = os.path.join(OUT, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        target = name
        if name.startswith("bundle_missing_tensor/"):
            target = "bundle_missing_tensor/call0"
        for cmd, code_exit, code, frame, frag, state in checks:
            rows.append("\t".join([target, cmd, str(code_exit), code, frame,
                                   frag, state, what]))
    with open(os.path.join(HERE, "manifest.tsv"), "w") as f:
        f.write("# generated by make_corpus.py; see its docstring\n")
        f.write("file\tcommand\texit\tcode\tframe\tfragment\tstate\twhat\n")
        f.write("\n".join(rows) + "\n")
    n_files = len({r.split("\t")[0] for r in rows})
    print(f"{n_files} malformed inputs, {len(rows)} manifest rows",
          file=sys.stderr)


if __name__ == "__main__":
    main()
