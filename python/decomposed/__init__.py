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
    "three_way", "bundle", "capture", "plot", "run",
]

# --- dtypes --------------------------------------------------------------------

__version__ = _decomposed.__version__  # include/decomposed/version.h

try:  # ml_dtypes is not a Debian package; use it where it is installed anyway
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the machine
    _ml_dtypes = None

# The library's table of XLA array types (xla/primitive_type.h, with the
# torch dtype of capture/torch_dtype.h): (lower-case name, element bytes,
# .npy descr or None, ml_dtypes name or None, loadable, torch attribute or
# None) per type. Only the types XLA can load are read and written here.
_TYPES = [t for t in _decomposed._element_types() if t[4]]


def _ml_type(ml):
    """ml_dtypes' type named `ml`, or None (no such name, no ml_dtypes)."""
    if _ml_dtypes is None or not ml:
        return None
    return getattr(_ml_dtypes, ml, None)


# XLA's lower-case name -> the NumPy dtype its elements are read into:
# NumPy's own; for the types NumPy lacks, ml_dtypes' where importable, else
# the unsigned int of the same width (the bits). And back, NumPy dtype ->
# XLA name, for NumPy's and ml_dtypes' types (never the unsigned ints that
# only carry bits).
_STORAGE = {}
_FROM_NUMPY = {}
for _name, _nbytes, _descr, _ml, _, _ in _TYPES:
    _t = _np.dtype(_descr) if _descr is not None else _ml_type(_ml)
    if _t is not None:
        _FROM_NUMPY.setdefault(_np.dtype(_t), _name)
    _STORAGE[_name] = _np.dtype(_t) if _t is not None else _np.dtype(f"u{_nbytes}")
del _name, _nbytes, _descr, _ml, _t
_decomposed._set_dtypes(_STORAGE)
# XLA's lower-case name -> torch attribute, where torch may have the type.
_TORCH = {name: attr for name, _, _, _, _, attr in _TYPES if attr}
# Same-width signed ints torch.from_numpy always accepts.
_SIGNED = {1: _np.int8, 2: _np.int16, 4: _np.int32, 8: _np.int64}

_NO_TORCH = ("{what} needs PyTorch, which is not installed: apt-get install "
             "python3-torch (Debian; scripts/setup-debian.sh --test), or pip "
             "install torch. .numpy() works without it.")


def _import_torch(what):
    """torch, or an ImportError saying how to get it."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(_NO_TORCH.format(what=what), name="torch") from e
    return torch


def _to_torch(array, xla_dtype):
    """A tensor that owns a copy of `array` (torch has no read-only
    tensors), of torch's dtype for `xla_dtype`."""
    torch = _import_torch(".torch()")

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
    u16/u32/u64 before 2.3, int4), unless upcast=True. PyTorch is optional:
    without it this raises ImportError saying how to install it."""
    if upcast:
        torch = _import_torch(".torch()")
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
    "snapshot", the classic form, as the CLI and its JSON spell it),
    ``module`` (the HloModuleProto bytes), ``has_module``,
    ``module_name`` and ``entry`` (None when the snapshot has no module:
    an arguments-only snapshot, as XLA writes some), ``program_shape``
    (str, None without one),
    ``parameter_names``, ``inputs`` and ``outputs`` (sequences of
    :class:`Literal`; ``outputs`` is None when the file has none: no region
    [2], or a classic snapshot without ``result``). A context manager."""

    __slots__ = ("_state",)
    _state: "_decomposed._FileState"  # typed by _decomposed.pyi

    def __init__(self, state: "_decomposed._FileState"):
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
    def module(self) -> "hlo.Module":
        """The module: a :class:`decomposed.hlo.Module`, which is the
        HloModuleProto bytes as unpack writes them to model.hlo (empty for
        a snapshot without a module) with ``text()``, ``summary()``,
        ``parameters`` and ``instructions`` over them."""
        return hlo.Module(self._state.module,
                          form="classic snapshot" if self.kind == "snapshot"
                          else "decomposed snapshot")

    @property
    def inputs(self) -> LiteralList:
        return self._state.inputs

    @property
    def outputs(self) -> "LiteralList | None":
        return self._state.outputs

    def close(self):
        """Drops this File's hold on the mapping. Views already returned by
        numpy() stay valid; reading through the File raises ValueError."""
        self._state.close()

    def __enter__(self) -> "File":
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


def open(path, *, kind="auto", lenient_length_byte=False) -> File:  # noqa: A001
    """Maps `path` and reads its framing and literal shapes (not the data).

    kind: "auto" (the library's detection rule, docs/format.md §7.8),
    "decomposed" or "snapshot" (the classic form; "classic" also works).
    lenient_length_byte: read a box length byte
    >= 0x80 as unsigned, as AWS's Python reader does.
    Raises FormatError for malformed files, OSError for I/O errors."""
    if kind not in ("auto", "decomposed", "snapshot", "classic"):
        raise ValueError("kind must be 'auto', 'decomposed' or 'snapshot' "
                         "('classic' also works)")
    return File(_decomposed._open(_os.fspath(path), kind,
                                  bool(lenient_length_byte)))


# --- Writing -------------------------------------------------------------------

_XLA_WIDTH = {name: nbytes for name, nbytes, _, _, _, _ in _TYPES}
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
            # The same-width signed int, which torch.Tensor.numpy() takes.
            a = t.view(getattr(torch, _np.dtype(_SIGNED[width]).name)).numpy()
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

    module: HloModuleProto bytes, or the path of a module file read as
    `decomposed pack --module` reads it (a serialized HloModuleProto, or HLO
    text, parsed; a constant left as {...} is an error). inputs / outputs: sequences of NumPy
    arrays, torch tensors or buffer-protocol objects, each streamed from its
    own memory (C- or Fortran-contiguous arrays without a copy). dtypes:
    {index: "bf16", ...} (or {"output 0": ...}) names the XLA type of arrays
    holding bit patterns. format: "decomposed" or "snapshot" (the classic
    form; "classic" also works). The bytes equal
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
    manifest.json spells them (kind "module", "input", "output", "meta",
    and "manifest" / "npz" for manifest.json and the archive themselves;
    index None for the module; shape and descr None where there is no
    array; entry None outside an .npz). With
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
        raise ValueError("to must be 'decomposed' or 'snapshot' "
                         "('classic' also works)")
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


def _source_path(x):
    """A path for a snapshot given as a path, a decomposed.File or an open
    file object (read again through /dev/fd)."""
    if isinstance(x, File):
        return x.path
    if hasattr(x, "fileno") and not isinstance(x, (str, bytes)):
        return f"/dev/fd/{x.fileno()}"
    return _os.fspath(x)


def _substitutes(substitute):
    """{name: array or .npy path} as run's C++ side takes it, and the
    objects that must stay alive while it runs."""
    subs, keep = {}, []
    for name, v in (substitute or {}).items():
        if isinstance(v, (str, _os.PathLike)):
            subs[str(name)] = _os.fspath(v)
        else:
            owner, a, xla = _as_array(v, f"substitute {name}")
            keep.append(owner)
            subs[str(name)] = (_np.ascontiguousarray(a), xla)
    return subs, keep


def run(path_or_file=None, *, numerics="xla", inputs=None, module=None,
        custom_calls=None, dump=None, dump_filter=None, substitute=None,
        threads=0, dtypes=None, bisect=False, against="f32", top=0,
        mode="torch", rtol=None, atol=None, replicas=0, partitions=0):
    """Runs a snapshot's module on the CPU evaluator (`decomposed run`) and
    returns its outputs, one NumPy array per element of a tuple root.

    bisect=True: instead, the divergence origins (`run --bisect`,
    docs/eval.md §9): the module evaluated in lockstep in `numerics` against
    `against` ("xla", "f32", "neuron", or a directory of per-instruction
    values such as a dump=), every instruction's values compared by
    compare's `mode` (rtol, atol override its tolerances); returns the
    report as a dict (BisectReportJson's fields: "origins", each with
    "name", "opcode", "shape", "error", "added_error", "op_name", "source",
    "paths", ...; "outputs"; the counts), `top` > 0 keeping the origins
    that add the most.

    path_or_file a list of paths: the ranks of one tensor-parallel step
    (snapshots, one execution's device<D> files, or with module= each
    rank's inputs such as rank<G>/call<N> bundles), put in rank order by
    name and replayed together, their collectives exchanging values
    (docs/eval.md §10); returns one list of outputs per rank, in rank
    order. replicas and partitions: the layout (0, 0: replica-id and
    partition-id are both the rank).

    path_or_file: a decomposed or classic snapshot (a path, a File from
    open(), or an open file object); its module and inputs are used unless
    given. module: a module instead of the snapshot's: a path (an
    HloModuleProto, an HloProto, a snapshot or HLO text, detected by
    content), HloModuleProto bytes, or a message with SerializeToString().
    inputs: the inputs instead of the snapshot's: a sequence of NumPy arrays
    or torch tensors (used without a copy; an array holding the bit patterns
    of a type NumPy lacks, uint16 for bf16 and so on, takes its parameter's
    type, or name it in dtypes={index: "bf16"}), or a path of any side
    `compare` reads (a snapshot's inputs, an unpack directory, a bundle call
    directory, an .npz, .npy files). Each must have its parameter's type and
    shape. numerics: "xla", "f32" or "neuron" (docs/eval.md §3).
    custom_calls: {target: fn}: fn(*operands) gets NumPy arrays (read-only
    where the evaluator shares them) and returns the result, an array of the
    result's type (a sequence of arrays for a tuple result); its exceptions
    propagate. dump: a directory that gets every evaluated instruction's
    value as <computation>/<instruction>.npy and index.json (dump_filter: a
    regex on names and op_names). substitute: {instruction name: array or
    .npy path}, used instead of evaluating that instruction. The GIL is
    released while the module runs. Raises FormatError for bad input and
    unrunnable ops (the message names the instruction), OSError for I/O
    errors."""
    if isinstance(path_or_file, (list, tuple)):
        if bisect or inputs is not None or dump is not None:
            raise ValueError("the ranks of a step take no bisect=, inputs= or dump=")
        if numerics not in ("xla", "f32", "neuron"):
            raise ValueError("numerics must be 'xla', 'f32' or 'neuron'")
        ranks = [_os.fspath(p) for p in path_or_file]
        subs, keep = _substitutes(substitute)
        out = _decomposed._run_ranks(
            ranks, None if module is None else _os.fspath(module), numerics,
            int(threads), int(replicas), int(partitions), subs,
            dict(custom_calls or {}), _STORAGE)
        del keep
        return out
    snapshot = None if path_or_file is None else _source_path(path_or_file)
    mod = module
    if mod is not None and hasattr(mod, "SerializeToString"):
        mod = mod.SerializeToString()
    elif mod is not None and not isinstance(mod, (bytes, bytearray, memoryview)):
        mod = _os.fspath(mod)
    ins = None
    keep = []
    if inputs is not None:
        if isinstance(inputs, (str, bytes, _os.PathLike)):
            ins = _os.fspath(inputs)
        else:
            ins = []
            named = {int(k): v for k, v in (dtypes or {}).items()}
            for i, x in enumerate(inputs):
                if isinstance(x, (str, _os.PathLike)):
                    ins.append(_os.fspath(x))
                    continue
                owner, a, xla = _as_array(x, f"input {i}")
                a = _np.ascontiguousarray(a)
                if i in named:
                    xla = _xla_name(named[i])
                keep.append(owner)
                ins.append((a, xla))
    subs, held = _substitutes(substitute)
    keep.extend(held)
    if numerics not in ("xla", "f32", "neuron"):
        raise ValueError("numerics must be 'xla', 'f32' or 'neuron'")
    if bisect:
        if dump is not None:
            raise ValueError("bisect=True takes no dump= (give the dump as against=)")
        report = _decomposed._bisect(
            snapshot, mod, ins, numerics, int(threads), _os.fspath(against), mode,
            rtol, atol, int(top), subs, dict(custom_calls or {}), _STORAGE)
        del keep
        return _json.loads(report)
    out = _decomposed._run(snapshot, mod, ins, numerics, int(threads),
                           None if dump is None else _os.fspath(dump),
                           dump_filter or "", subs, dict(custom_calls or {}),
                           _STORAGE)
    del keep
    return out


from . import bundle, capture  # noqa: E402  (they use the names above)
from . import _three_way, plot  # noqa: E402
from . import hlo  # noqa: E402
from ._three_way import three_way  # noqa: E402
