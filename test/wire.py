"""The protobuf wire encoding, written by hand from the encoding's rules
(docs/format.md §2), for the test and benchmark scripts that build files
without this project's writer: the one Python copy they all import.

    varint(300) == b"\\xac\\x02"; ld(1, b"x") == b"\\x0a\\x01x"
"""


def varint(n):
    """A base-128 varint; a negative n as its 64-bit two's complement (as
    protobuf writes a negative int32 or int64)."""
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def tag(num, wt):
    """A field's key: its number and wire type (0 varint, 1 fixed64,
    2 length-delimited, 5 fixed32)."""
    return varint((num << 3) | wt)


def f_varint(num, v):
    """A varint field."""
    return tag(num, 0) + varint(v)


def ld(num, payload):
    """A length-delimited field."""
    return tag(num, 2) + varint(len(payload)) + payload


def packed(num, values):
    """A packed repeated varint field."""
    return ld(num, b"".join(varint(v) for v in values))


def box(v, with_shape=False):
    """A decomposed snapshot's length box: one length byte, then a
    LiteralProto with u64s = [v] (field 7), after a U64 scalar shape
    (element_type 9, an empty layout) when `with_shape`, as older XLA wrote
    it."""
    payload = ld(7, varint(v))
    if with_shape:
        payload = ld(1, f_varint(2, 9) + ld(5, b"")) + payload
    assert len(payload) < 128
    return bytes([len(payload)]) + payload
