#!/usr/bin/env python3
"""Writes examples/example.decomposed_hlo_snapshot, byte by byte from the
spec (docs/format.md §4 to §9), with no protobuf library and no code from
this project, so it can serve as an independent reference file.

Content:
  region [0]  HloSnapshot { hlo { hlo_module { name "example"
              entry_computation_name "main" computations { main }
              host_program_shape { parameters F32[2,3]{1,0},
              parameters S32[4]{0}, result (F32[2,3]{1,0}) } id 1
              entry_computation_id 1 } } }
  region [1]  input 0: F32[2,3] = [[0.5, 1, 1.5], [2, 2.5, 3]]
              input 1: S32[4]   = [-2, -1, 0, 7]
  region [2]  output 0: F32[2,3] = input 0 * 2 = [[1, 2, 3], [4, 5, 6]]

The entry computation, in HLO text:
  ENTRY main {
    x = f32[2,3]{1,0} parameter(0)
    y = s32[4]{0} parameter(1)
    two = f32[] constant(2)
    twos = f32[2,3]{1,0} broadcast(two), dimensions={}
    product = f32[2,3]{1,0} multiply(x, twos), metadata={op_type="mul"
        op_name="example/twice" source_file="examples/make_example.py"
        source_line=112}
    ROOT result = (f32[2,3]{1,0}) tuple(product)
  }
so the recorded output is exactly what the module computes (each input
element times 2 is exact in f32): `decomposed run --compare` passes.
Run: python3 examples/make_example.py [OUT]
"""
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_varint(n, v):
    return varint(n << 3) + varint(v)


def field_len(n, payload):
    return varint((n << 3) | 2) + varint(len(payload)) + payload


def packed_varints(n, values):
    return field_len(n, b"".join(varint(v) for v in values))


def shape(etype, dims):
    # ShapeProto: element_type=2, dimensions=3 (packed), layout=5
    # {minor_to_major=1 (packed)}, is_dynamic_dimension=6 (packed bools)
    s = field_varint(2, etype)
    if dims:
        s += packed_varints(3, dims)
    layout = packed_varints(1, list(range(len(dims) - 1, -1, -1))) if dims else b""
    s += field_len(5, layout)
    if dims:
        s += packed_varints(6, [0] * len(dims))
    return s


F32, S32, TUPLE = 11, 4, 13


def literal_f32(dims, values):
    return field_len(1, shape(F32, dims)) + field_len(8, struct.pack("<%df" % len(values), *values))


def literal_s32(dims, values):
    return field_len(1, shape(S32, dims)) + packed_varints(4, values)


def instruction(iid, name, opcode, shp, operands=(), **extra):
    # HloInstructionProto: name=1, opcode=2, shape=3, metadata=7, literal=8,
    # parameter_number=9, dimensions=14 (packed), id=35, operand_ids=36
    # (packed).
    i = field_len(1, name.encode()) + field_len(2, opcode.encode()) + field_len(3, shp)
    if "metadata" in extra:
        i += field_len(7, extra["metadata"])
    if "literal" in extra:
        i += field_len(8, extra["literal"])
    if "parameter_number" in extra:
        i += field_varint(9, extra["parameter_number"])
    i += field_varint(35, iid)
    if operands:
        i += packed_varints(36, operands)
    return i


def metadata(op_type, op_name, source_file, source_line):
    # OpMetadata: op_type=1, op_name=2, source_file=3, source_line=4
    return (field_len(1, op_type.encode()) + field_len(2, op_name.encode())
            + field_len(3, source_file.encode()) + field_varint(4, source_line))


def main_computation():
    # HloComputationProto: name=1, instructions=2, id=5, root_id=6.
    f23 = shape(F32, [2, 3])
    instrs = [
        instruction(1, "x", "parameter", f23, parameter_number=0),
        instruction(2, "y", "parameter", shape(S32, [4]), parameter_number=1),
        instruction(3, "two", "constant", shape(F32, []), literal=literal_f32([], [2.0])),
        instruction(4, "twos", "broadcast", f23, [3]),
        instruction(5, "product", "multiply", f23, [1, 4],
                    metadata=metadata("mul", "example/twice", "examples/make_example.py", 112)),
        instruction(6, "result", "tuple", field_varint(2, TUPLE) + field_len(4, f23), [5]),
    ]
    c = field_len(1, b"main")
    for i in instrs:
        c += field_len(2, i)
    return c + field_varint(5, 1) + field_varint(6, 6)


def box(v):
    payload = field_len(7, varint(v))  # LiteralProto { u64s: [v] }
    assert len(payload) < 128
    return bytes([len(payload)]) + payload


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "examples/example.decomposed_hlo_snapshot"
    program_shape = (field_len(1, shape(F32, [2, 3])) + field_len(1, shape(S32, [4]))
                     + field_len(2, field_varint(2, TUPLE) + field_len(4, shape(F32, [2, 3])))
                     + field_len(3, b"x") + field_len(3, b"y"))
    module = (field_len(1, b"example") + field_len(2, b"main")
              + field_len(3, main_computation())
              + field_len(4, program_shape) + field_varint(5, 1) + field_varint(6, 1))
    snapshot = field_len(1, field_len(1, module))  # HloSnapshot.hlo.hlo_module
    x = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    inputs = [literal_f32([2, 3], x), literal_s32([4], [-2, -1, 0, 7])]
    outputs = [literal_f32([2, 3], [2 * v for v in x])]
    data = box(len(snapshot)) + snapshot
    for block in (inputs, outputs):
        data += box(len(block))
        for body in block:
            data += box(len(body)) + body
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
