"""Read and write AWS Neuron's HLO snapshots from Python.

    import decomposed
    with decomposed.open("x.decomposed_hlo_snapshot") as f:
        print(f.kind, f.module_name, f.program_shape)
        a = f.inputs[0].numpy()        # a read-only zero-copy view when it can be
    decomposed.write("y.decomposed_hlo_snapshot", f.module, [a, b], [out])

Reading maps the file and never reads it whole. ``Literal.numpy()`` is a
read-only view of the mapped file when the payload is the array as it is
(fixed width, little endian, row-major: f32, f64, c64, c128 and the
byte-encoded f16, bf16, s8, u8, s16, u16 and fp8/fp4/int4 types); otherwise
(varint types s32, s64, u32, u64, pred; other layouts) a decoded copy. A view
keeps the mapping alive after ``File.close()``.

Types NumPy lacks (bf16, fp8, fp4, int4, int2) never change value silently:
with ``ml_dtypes`` importable they get its dtypes, otherwise their bit
patterns as unsigned ints (uint16 for bf16, uint8 for the others); the true
type is ``Literal.dtype`` and ``numpy(upcast=True)`` gives float32 (int8 /
uint8 for the sub-byte integers).

Malformed input raises ``FormatError`` (a ``ValueError`` with ``.code``,
``.frame`` and ``.offset``, whose message is the CLI's); the system's errors
raise ``OSError`` (``.errno``, and ``.filename`` when the error names the
file: ``[Errno 2] No such file or directory: 'x.dhs'``). The attributes come
from the library status's payloads, never from its text. The GIL is
released during I/O and decoding, and one ``File`` may be read from
several threads.
"""

import json as _json
import os as _os

import numpy as _np

from . import _decomposed
from ._decomposed import FormatError, Literal, LiteralList

__all__ = [
    "FormatError", "File", "Literal", "LiteralList", "open", "write",
    "unpack", "verify", "inspect", "convert", "compare", "stats",
    "three_way", "bundle", "capture", "plot",
]

# --- dtypes --------------------------------------------------------------------

try:  # ml_dtypes is not a Debian package; use it where it is installed anyway
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the machine
    _ml_dtypes = None

# XLA's lower-case name -> NumPy dtype name, for the types NumPy has.
_NATIVE = {
    "pred": "bool", "s8": "int8", "s16": "int16", "s32": "int32",
    "s64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
    "u64": "uint64", "f16": "float16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
}
# XLA's lower-case name -> ml_dtypes name, for the types NumPy lacks, with
# the unsigned int of the same width that carries their bits without it.
_ML = {
    "bf16": ("bfloat16", "uint16"),
    "f8e5m2": ("float8_e5m2", "uint8"),
    "f8e4m3fn": ("float8_e4m3fn", "uint8"),
    "f8e4m3b11fnuz": ("float8_e4m3b11fnuz", "uint8"),
    "f8e5m2fnuz": ("float8_e5m2fnuz", "uint8"),
    "f8e4m3fnuz": ("float8_e4m3fnuz", "uint8"),
    "f8e4m3": ("float8_e4m3", "uint8"),
    "f8e3m4": ("float8_e3m4", "uint8"),
    "f8e8m0fnu": ("float8_e8m0fnu", "uint8"),
    "f4e2m1fn": ("float4_e2m1fn", "uint8"),
    "s4": ("int4", "uint8"),
    "u4": ("uint4", "uint8"),
    "s2": ("int2", "uint8"),
    "u2": ("uint2", "uint8"),
}


def _storage_dtypes():
    d = {k: _np.dtype(v) for k, v in _NATIVE.items()}
    for xla, (ml, bits) in _ML.items():
        t = getattr(_ml_dtypes, ml, None) if _ml_dtypes is not None else None
        d[xla] = _np.dtype(t) if t is not None else _np.dtype(bits)
    return d


_STORAGE = _storage_dtypes()
_decomposed._set_dtypes(_STORAGE)

# XLA's lower-case name -> torch attribute, where torch may have the type.
_TORCH = {
    "pred": "bool", "s8": "int8", "s16": "int16", "s32": "int32",
    "s64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
    "u64": "uint64", "f16": "float16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128", "bf16": "bfloat16",
    "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e8m0fnu": "float8_e8m0fnu",
}
# Same-width signed ints torch.from_numpy always accepts.
_SIGNED = {1: _np.int8, 2: _np.int16, 4: _np.int32, 8: _np.int64}


def _to_torch(array, xla_dtype):
    """A tensor that owns a copy of `array` (torch has no read-only
    tensors), of torch's dtype for `xla_dtype`."""
    import torch

    name = _TORCH.get(xla_dtype)
    tdt = getattr(torch, name, None) if name else None
    if tdt is None:
        raise TypeError(
            f"{xla_dtype}: torch {torch.__version__} has no such dtype; use "
            f".numpy() (bit patterns or ml_dtypes) or .torch(upcast=True)")
    owned = _np.array(array, copy=True, order="C")
    if owned.dtype.kind in "bfc" or owned.dtype in (_np.int8, _np.int16,
                                                    _np.int32, _np.int64,
                                                    _np.uint8):
        t = torch.from_numpy(owned)
        if t.dtype == tdt:
            return t
    # Reinterpret the bits (bf16, fp8, u16/u32/u64 on a torch that has them).
    signed = owned.view(_SIGNED[owned.dtype.itemsize])
    return torch.from_numpy(signed).view(tdt)


def _literal_torch(self, upcast=False):
    """A torch tensor of this literal (a copy): torch.bfloat16 for bf16 and
    so on; a TypeError where this torch lacks the type (fp8 before 2.1,
    u16/u32/u64 before 2.3, int4), unless upcast=True."""
    if upcast:
        import torch
        return torch.from_numpy(_np.array(self.numpy(upcast=True), copy=True))
    return _to_torch(self.numpy(), self.dtype)


Literal.torch = _literal_torch


def _literal_array(self, dtype=None):
    a = self.numpy()
    return a if dtype is None else a.astype(dtype)


Literal.__array__ = _literal_array


# --- Reading -------------------------------------------------------------------

class File:
    """A snapshot file opened by :func:`open`: ``kind`` ("decomposed" or
    "classic"), ``module`` (the HloModuleProto bytes), ``has_module``,
    ``module_name`` and ``entry`` (None when the snapshot has no module:
    an arguments-only snapshot, as XLA writes some), ``program_shape``
    (str, None without one),
    ``parameter_names``, ``inputs`` and ``outputs`` (sequences of
    :class:`Literal`; ``outputs`` is None when the file has none: no region
    [2], or a classic snapshot without ``result``). A context manager."""

    __slots__ = ("_state",)

    def __init__(self, state):
        self._state = state

    kind = property(lambda self: self._state.kind)
    path = property(lambda self: self._state.path)
    has_module = property(lambda self: self._state.has_module)
    module_name = property(lambda self: self._state.module_name)
    entry = property(lambda self: self._state.entry)
    program_shape = property(lambda self: self._state.program_shape)
    parameter_names = property(lambda self: self._state.parameter_names)
    closed = property(lambda self: self._state.closed)

    @property
    def module(self):
        """The HloModuleProto bytes, as unpack writes them to model.hlo."""
        return self._state.module

    @property
    def inputs(self):
        return self._state.inputs

    @property
    def outputs(self):
        return self._state.outputs

    def close(self):
        """Drops this File's hold on the mapping. Views already returned by
        numpy() stay valid; reading through the File raises ValueError."""
        self._state.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self.closed else "open"
        outs = self.outputs
        return (f"<decomposed.File {self.path!r} {self.kind} {state}, "
                f"{len(self.inputs) if not self.closed else '?'} inputs, "
                f"{'no' if outs is None else len(outs)} outputs>")


def open(path, *, kind="auto", lenient_length_byte=False):  # noqa: A001
    """Maps `path` and reads its framing and literal shapes (not the data).

    kind: "auto" (the library's detection rule, docs/format.md §7.8),
    "decomposed" or "classic". lenient_length_byte: read a box length byte
    >= 0x80 as unsigned, as AWS's Python reader does.
    Raises FormatError for malformed files, OSError for I/O errors."""
    if kind not in ("auto", "decomposed", "classic"):
        raise ValueError("kind must be 'auto', 'decomposed' or 'classic'")
    return File(_decomposed._open(_os.fspath(path), kind,
                                  bool(lenient_length_byte)))


# --- Writing -------------------------------------------------------------------

# NumPy dtype -> XLA type name.
_FROM_NUMPY = {_np.dtype(v): k for k, v in _NATIVE.items()}
if _ml_dtypes is not None:  # pragma: no cover - depends on the machine
    for _xla, (_ml, _bits) in _ML.items():
        _t = getattr(_ml_dtypes, _ml, None)
        if _t is not None:
            _FROM_NUMPY[_np.dtype(_t)] = _xla
_XLA_WIDTH = {k: v.itemsize for k, v in _STORAGE.items()}
_TORCH_TO_XLA = {v: k for k, v in _TORCH.items()}


def _xla_name(name):
    n = str(name).lower()
    if n in _XLA_WIDTH:
        return n
    try:  # NumPy names: float32, bfloat16 (with ml_dtypes), ...
        return _FROM_NUMPY[_np.dtype(n)]
    except (TypeError, KeyError):
        raise ValueError(f"unknown element type {name!r} (use an XLA name "
                         f"such as f32, bf16, f8e4m3fn, s4)") from None


def _as_array(x, what):
    """(keep-alive, NumPy array of the bytes, XLA type or None)."""
    if type(x).__module__.startswith("torch") and hasattr(x, "detach"):
        import torch
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        xla = _TORCH_TO_XLA.get(str(t.dtype).replace("torch.", ""))
        if xla is None:
            raise TypeError(f"{what}: torch dtype {t.dtype} has no XLA type")
        if not t.is_contiguous():
            t = t.contiguous()
        width = t.element_size()
        if t.dtype in (torch.bfloat16,) or xla.startswith("f8") or \
                xla in ("u16", "u32", "u64"):
            a = t.view(getattr(torch, {1: "int8", 2: "int16", 4: "int32",
                                       8: "int64"}[width])).numpy()
        else:
            a = t.numpy()
        return t, a, xla
    a = _np.asarray(x)
    if a.dtype.hasobject:
        raise TypeError(f"{what}: an array of Python objects cannot be "
                        f"written")
    if a.dtype.byteorder == ">":  # XLA literals are little endian
        a = a.astype(a.dtype.newbyteorder("<"))
    return x, a, _FROM_NUMPY.get(a.dtype)


def _prepare(arrays, dtypes, region):
    prepared, keep = [], []
    for i, x in enumerate(arrays):
        what = f"{region} {i}"
        owner, a, xla = _as_array(x, what)
        want = dtypes.get(i)
        if want is not None:
            want = _xla_name(want)
            if _XLA_WIDTH[want] != a.dtype.itemsize:
                raise ValueError(
                    f"{what}: dtype {want} needs {_XLA_WIDTH[want]}-byte "
                    f"elements, the array has {a.dtype.itemsize}-byte "
                    f"{a.dtype}")
            xla = want
        if xla is None:
            raise TypeError(f"{what}: NumPy dtype {a.dtype} has no XLA type; "
                            f"name one with dtypes={{{i}: 'bf16'}} etc.")
        column_major = False
        if not a.flags.c_contiguous:
            if a.flags.f_contiguous:
                column_major = True  # as np.save writes it: fortran_order
            else:
                a = _np.ascontiguousarray(a)
        flat = a.reshape(-1, order="F" if column_major else "C")
        raw = flat.view(_np.uint8) if flat.size else _np.empty(0, _np.uint8)
        keep.append((owner, a, raw))
        prepared.append((raw, xla, list(a.shape), column_major))
    return prepared, keep


def _split_dtypes(dtypes):
    ins, outs = {}, {}
    for k, v in (dtypes or {}).items():
        if isinstance(k, str):
            region, _, idx = k.partition(" ")
            (outs if region == "output" else ins)[int(idx)] = v
        else:
            ins[int(k)] = v
    return ins, outs


def write(path, module, inputs, outputs=None, *, format="decomposed",
          dtypes=None, output_block=True):
    """Writes a snapshot file atomically (complete under `path`, or absent).

    module: HloModuleProto bytes, or the path of a file holding them (as
    `decomposed pack --module`). inputs / outputs: sequences of NumPy
    arrays, torch tensors or buffer-protocol objects, each streamed from its
    own memory (C- or Fortran-contiguous arrays without a copy). dtypes:
    {index: "bf16", ...} (or {"output 0": ...}) names the XLA type of arrays
    holding bit patterns. format: "decomposed" or "classic". The bytes equal
    `decomposed pack`'s given the same arrays as .npy files."""
    ins, outs = _split_dtypes(dtypes)
    pin, keep_in = _prepare(list(inputs), ins, "input")
    pout, keep_out = (None, None) if outputs is None else \
        _prepare(list(outputs), outs, "output")
    if not isinstance(module, (bytes, bytearray, memoryview)):
        module = _os.fspath(module)
    _decomposed._write(_os.fspath(path), module, pin, pout, format,
                       bool(output_block))
    del keep_in, keep_out


# --- The rest of the library ---------------------------------------------------

def unpack(path, output_prefix="./", *, kind="auto", outputs=False,
           module="model.hlo", ml_dtype_sidecar=False, npz=None,
           manifest=False):
    """What `decomposed unpack` does: writes <prefix>model.hlo and
    <prefix>value_input<i>.npy (with outputs=True also
    snapshot_output<j>.npy); returns a list of {path, kind, index, shape,
    descr, fortran_order, bytes, entry}, one per file written, spelt as
    manifest.json spells them (kind "module", "input", "output", "meta";
    index None for the module; entry None outside an .npz). With
    npz="out.npz" they are entries of one stored .npz instead (`unpack --to
    npz`; "entry" names each, output_prefix is not used); manifest=True also
    writes manifest.json (`--manifest`)."""
    return _decomposed._unpack(_os.fspath(path), _os.fspath(output_prefix),
                               kind, bool(outputs), module,
                               bool(ml_dtype_sidecar),
                               _os.fspath(npz) if npz is not None else "",
                               bool(manifest))


def verify(path, *, kind="auto"):
    """Everything unpack would check, writing nothing. Returns the list of
    problems ({frame, offset, code, message}); empty when valid."""
    return _json.loads(_decomposed._verify_json(_os.fspath(path),
                                                kind))["problems"]


def inspect(path):
    """`decomposed inspect --json` of a decomposed file, as a dict."""
    return _json.loads(_decomposed._inspect_json(_os.fspath(path)))


def convert(src, dst, *, to):
    """Classic <-> decomposed, as `decomposed convert IN OUT --to ...`."""
    if to not in ("decomposed", "classic", "snapshot"):
        raise ValueError("to must be 'decomposed' or 'classic'")
    _decomposed._convert(_os.fspath(src), _os.fspath(dst), to)


def _dtype_map(d):
    return {int(k): str(v) for k, v in (d or {}).items()}


def compare(expected, actual, *, inputs=False, mode="torch", rtol=None,
            atol=None, equal_nan=False, allow_dtype_mismatch=False,
            expected_dtypes=None, actual_dtypes=None, plot=None,
            plot_points=2000):
    """`decomposed compare --json` as a dict: each side is a snapshot file,
    an unpack directory, a bundle call directory, or an .npy / .pt file.
    With `plot` (a path, or True for the data alone) the dict also holds
    "scatter" (per tensor, `plot_points` sampled elements, as NumPy arrays)
    and the path gets the SVG scatter of actual against expected."""
    if plot is not None and plot is not False:
        return _three_way._compare_plot(
            expected, actual, plot, plot_points, inputs, mode, rtol, atol,
            equal_nan, allow_dtype_mismatch, expected_dtypes, actual_dtypes)
    return _json.loads(_decomposed._compare_json(
        _os.fspath(expected), _os.fspath(actual), bool(inputs), mode, rtol,
        atol, bool(equal_nan), bool(allow_dtype_mismatch),
        _dtype_map(expected_dtypes), _dtype_map(actual_dtypes)))


def stats(*paths, inputs=False, dtypes=None):
    """`decomposed stats --json` as a dict over every tensor of `paths`."""
    return _json.loads(_decomposed._stats_json(
        [_os.fspath(p) for p in paths], bool(inputs), _dtype_map(dtypes)))


from . import bundle, capture  # noqa: E402  (they use the names above)
from . import _three_way, plot  # noqa: E402
from ._three_way import three_way  # noqa: E402
