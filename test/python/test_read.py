"""decomposed.open(): every element type, layout and legal wire encoding
that unpack supports, read back equal to unpack's .npy byte for byte;
zero-copy views; views surviving close(); bf16/fp8/int4 never changing
value; threads; the malformed-input corpus raising FormatError."""
import csv
import errno
import gc
import os
import subprocess
import threading
import time

import numpy as np
import pytest

import decomposed
import unpack_interop as ui  # the spec-built file generator (test/)

VIEW_TYPES = {"F32", "F64", "C64", "C128", "F16", "BF16", "S8", "U8", "S16",
              "U16", "F8E5M2", "F8E4M3FN", "F8E4M3B11FNUZ", "F8E5M2FNUZ",
              "F8E4M3FNUZ", "F8E4M3", "F8E3M4", "F8E8M0FNU", "S4", "U4", "S2",
              "U2", "F4E2M1FN"}


def f_len(field, payload):
    return ui.f_len(field, payload)


def shape_proto(type_num, dims):
    m2m = list(range(len(dims) - 1, -1, -1))
    return ui.shape_proto(type_num, dims, m2m, True)


def module_with_program_shape(params, result, names):
    """An HloModuleProto (hand-encoded) with a host_program_shape."""
    ps = b"".join(f_len(1, p) for p in params) + f_len(2, result)
    ps += b"".join(f_len(3, n.encode()) for n in names)
    return (f_len(1, b"one_param") + f_len(2, b"main.7") + f_len(4, ps)
            + ui.f_varint(5, 7))


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def unpack(cli, path, out_dir, mode):
    os.makedirs(out_dir, exist_ok=True)
    r = subprocess.run([cli, "unpack", "--snapshot-type=" + mode,
                        "--dump-snapshot-outputs",
                        "--output-prefix=" + out_dir + "/", path],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out_dir


def npy_payload(path):
    """The data bytes of an .npy file as written (C or Fortran order), and
    the loaded array."""
    with open(path, "rb") as f:
        raw = f.read()
    major = raw[6]
    hl = int.from_bytes(raw[8:10], "little") if major == 1 else \
        int.from_bytes(raw[8:12], "little")
    head = (10 if major == 1 else 12) + hl
    return raw[head:], np.load(path)


def check_literal(lit, npy_path, name, what):
    payload, loaded = npy_payload(npy_path)
    assert lit.dtype == name.lower(), what
    assert lit.shape == loaded.shape, what
    got = lit.numpy()
    assert got.shape == loaded.shape, what
    assert got.flags.c_contiguous, what
    assert lit.nbytes == len(payload), what
    # Byte for byte: unpack writes C order, or Fortran order with
    # fortran_order True for column-major layouts.
    if loaded.flags.c_contiguous or loaded.ndim < 2:
        assert got.tobytes() == payload, what
    else:
        assert np.asfortranarray(got).tobytes(order="A") == payload, what
    assert lit.tobytes() == got.tobytes(), what
    if loaded.dtype.kind != "V":
        assert got.dtype == loaded.dtype, what
        assert np.array_equal(got, loaded, equal_nan=loaded.dtype.kind in "fc"), what
    else:
        assert got.dtype.itemsize == loaded.dtype.itemsize, what
    return got


@pytest.fixture(scope="module")
def type_files(tmp_path_factory, cli):
    """Per type: a decomposed and a classic file of every shape, layout and
    encoding variant (inputs; outputs the same reversed), unpacked by the
    CLI."""
    root = tmp_path_factory.mktemp("types")
    out = {}
    for name in ui.TYPES:
        cases = ui.cases_for(name)
        bodies = [ui.literal(name, c[0], c[1], c[2]) for c in cases]
        labels = [c[3] for c in cases]
        layouts = [c[1] for c in cases]
        dec = write_file(str(root / f"{name}.dhs"),
                         ui.decomposed_file(bodies, bodies[::-1], True,
                                            boxed_shapes=(name == "F32")))
        res = ui.tuple_literal(bodies[::-1], [b"" for _ in bodies])
        classic = write_file(str(root / f"{name}.pb"),
                             ui.hlo_snapshot(bodies, res))
        dd = unpack(cli, dec, str(root / f"{name}_dec"), "decomposed")
        dc = unpack(cli, classic, str(root / f"{name}_cls"), "snapshot")
        out[name] = (cases, labels, layouts, (dec, dd), (classic, dc))
    return out


@pytest.mark.parametrize("name", list(ui.TYPES))
def test_every_type_equals_unpack(type_files, name):
    cases, labels, layouts, dec, classic = type_files[name]
    for kind, (path, d) in (("decomposed", dec), ("snapshot", classic)):
        with decomposed.open(path) as f:
            assert f.kind == kind
            assert f.module == ui.MODULE
            with open(os.path.join(d, "model.hlo"), "rb") as m:
                assert f.module == m.read()
            assert len(f.inputs) == len(cases)
            assert len(f.outputs) == len(cases)
            for i, lit in enumerate(f.inputs):
                what = f"{kind} input {i}: {labels[i]}"
                got = check_literal(lit, os.path.join(d, f"value_input{i}.npy"),
                                    name, what)
                m2m = layouts[i]
                assert lit.layout == tuple(m2m), what
                default = m2m == sorted(m2m, reverse=True)
                nonzero = lit.nbytes > 0
                if name in VIEW_TYPES and default and nonzero and \
                        ("unpacked" not in labels[i]):
                    assert lit.is_view, what
                    assert not got.flags.writeable and not got.flags.owndata
                if name not in VIEW_TYPES:
                    assert not lit.is_view, what
            for j, lit in enumerate(f.outputs):
                check_literal(lit, os.path.join(d, f"snapshot_output{j}.npy"),
                              name, f"{kind} output {j}")
            # Negative indices and iteration.
            assert f.inputs[-1].offset == f.inputs[len(cases) - 1].offset
            assert [lit.offset for lit in f.inputs] == \
                [f.inputs[i].offset for i in range(len(cases))]
            with pytest.raises(IndexError):
                f.inputs[len(cases)]


def test_view_is_the_file_and_survives_close(tmp_path):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    body = ui.literal("F32", a, [2, 1, 0], "canonical")
    path = write_file(str(tmp_path / "v.dhs"), ui.decomposed_file([body], [], False))
    f = decomposed.open(path)
    lit = f.inputs[0]
    v = lit.numpy()
    assert lit.is_view and not v.flags.writeable and not v.flags.owndata
    with open(path, "rb") as raw:
        data = raw.read()
    # The view's bytes are the payload at its offset in the file.
    start = data.index(a.tobytes())
    assert data[start:start + a.nbytes] == v.tobytes()
    with pytest.raises(ValueError):
        v[0, 0, 0] = 1
    assert f.outputs is None  # region [2] absent
    f.close()
    assert f.closed
    del f, lit
    gc.collect()
    assert np.array_equal(v, a)
    assert float(v.sum()) == float(a.sum())
    f2 = decomposed.open(path)
    lits = f2.inputs
    f2.close()
    with pytest.raises(ValueError):
        lits[0].numpy()


def test_context_manager_and_outputs_none_classic(tmp_path, source_dir):
    a = np.arange(5, dtype=np.int32)
    body = ui.literal("S32", a, [0], "canonical")
    path = write_file(str(tmp_path / "c.pb"), ui.hlo_snapshot([body]))
    with decomposed.open(path) as f:
        assert f.kind == "snapshot"
        assert f.module.form == "classic snapshot"
        assert f.outputs is None
        x = f.inputs[0].numpy()
        assert x.flags.owndata and x.flags.writeable  # a decoded copy
    assert f.closed
    assert np.array_equal(x, a)
    # kind= names the form to read: "snapshot" (and "classic") read the
    # classic form, so a decomposed file given as one is refused.
    for kind in ("snapshot", "classic"):
        with decomposed.open(path, kind=kind) as f:
            assert f.kind == "snapshot"
    example = os.path.join(source_dir, "examples", "example.decomposed_hlo_snapshot")
    for kind in ("snapshot", "classic"):
        with pytest.raises(decomposed.FormatError):
            decomposed.open(example, kind=kind)


def test_an_arguments_only_snapshot_has_no_module(tmp_path):
    """XLA writes classic snapshots without `hlo`: no module, not an empty
    name."""
    a = np.array([2, -4, 5], dtype=np.int32)
    snap = f_len(2, ui.literal("S32", a, [0], "canonical"))
    path = write_file(str(tmp_path / "args.pb"), snap)
    with decomposed.open(path) as f:
        assert f.kind == "snapshot"
        assert f.has_module is False
        assert f.module_name is None and f.entry is None
        assert f.module == b""
        assert np.array_equal(f.inputs[0].numpy(), a)
        assert f.outputs is None


def test_one_parameter_module_and_program_shape(tmp_path):
    """AWS's reader cannot read a module with exactly one parameter."""
    p = shape_proto(11, [2, 2])
    mod = module_with_program_shape([p], shape_proto(11, [2, 2]), ["x"])
    snap = f_len(1, f_len(1, mod))
    a = np.array([[1, 2], [3, 4]], dtype=np.float32)
    body = ui.literal("F32", a, [1, 0], "canonical")
    data = ui.box(len(snap)) + snap + ui.box(1) + ui.box(len(body)) + body
    path = write_file(str(tmp_path / "one.dhs"), data)
    with decomposed.open(path) as f:
        assert f.module == mod
        assert f.has_module is True
        assert f.module_name == "one_param"
        assert f.entry == "main.7"
        assert f.parameter_names == ("x",)
        assert f.program_shape == "(F32[2,2]{1,0}) -> F32[2,2]{1,0}"
        assert np.array_equal(f.inputs[0].numpy(), a)
        assert f.outputs is None


def bits_file(tmp_path, name, bits, shape):
    arr = np.asarray(bits).reshape(shape)
    body = ui.literal(name, arr, list(range(len(shape) - 1, -1, -1)), "canonical")
    return write_file(str(tmp_path / f"{name}.dhs"), ui.decomposed_file([body], [], True))


def test_bf16_bits_upcast_and_torch(tmp_path):
    torch = pytest.importorskip("torch")
    vals = np.array([1.0, -2.5, 3.140625, 0.0, np.inf, -np.inf, 65280.0, 1e-3],
                    dtype=np.float32)
    bits = (vals.view(np.uint32) >> 16).astype(np.uint16)
    path = bits_file(tmp_path, "BF16", bits.view("V2"), (2, 4))
    with decomposed.open(path) as f:
        lit = f.inputs[0]
        assert lit.dtype == "bf16"
        raw = lit.numpy()
        assert lit.is_view
        if raw.dtype == np.uint16:  # no ml_dtypes: the bit patterns
            assert np.array_equal(raw.ravel(), bits)
        up = lit.numpy(upcast=True)
        assert up.dtype == np.float32 and up.shape == (2, 4)
        expect = (bits.astype(np.uint32) << 16).view(np.float32).reshape(2, 4)
        assert np.array_equal(up, expect)
        t = lit.torch()
        assert t.dtype == torch.bfloat16 and tuple(t.shape) == (2, 4)
        assert torch.equal(t.float(), torch.from_numpy(expect))
        assert np.array_equal(t.view(torch.int16).numpy().view(np.uint16).ravel(), bits)
        t[0, 0] = 7  # an owned, writable tensor; the file is untouched
        assert lit.numpy(upcast=True)[0, 0] == 1.0
        assert torch.equal(lit.torch(upcast=True), torch.from_numpy(expect))


def test_fp8_and_int4_never_change_value(tmp_path):
    torch = pytest.importorskip("torch")
    bits = np.arange(256, dtype=np.uint8)
    path = bits_file(tmp_path, "F8E5M2", bits.view("V1"), (16, 16))
    with decomposed.open(path) as f:
        lit = f.inputs[0]
        assert lit.dtype == "f8e5m2"
        raw = lit.numpy()
        if raw.dtype == np.uint8:
            assert np.array_equal(raw.ravel(), bits)
        # f8e5m2 is the top byte of an IEEE half.
        expect = (bits.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
        up = lit.numpy(upcast=True).ravel()
        assert np.array_equal(up, expect, equal_nan=True)
        if not hasattr(torch, "float8_e5m2"):
            with pytest.raises(TypeError, match="f8e5m2"):
                lit.torch()
        else:  # pragma: no cover - newer torch
            assert lit.torch().dtype == torch.float8_e5m2
    nib = np.arange(16, dtype=np.uint8) | 0xA0  # upper bits are ignored
    path = bits_file(tmp_path, "S4", nib.view("V1"), (16,))
    with decomposed.open(path) as f:
        lit = f.inputs[0]
        assert lit.dtype == "s4"
        if lit.numpy().dtype == np.uint8:
            assert np.array_equal(lit.numpy(), nib)
        up = lit.numpy(upcast=True)
        assert up.dtype == np.int8
        assert up.tolist() == list(range(8)) + list(range(-8, 0))
        with pytest.raises(TypeError):
            lit.torch()


def test_threads_read_one_file(tmp_path):
    arrays = [np.arange(i * 1000, i * 1000 + 20000, dtype=np.int32) - 5000
              for i in range(8)]
    bodies = [ui.literal("S32", a, [0], "canonical") for a in arrays]
    path = write_file(str(tmp_path / "t.dhs"), ui.decomposed_file(bodies, [], True))
    f = decomposed.open(path)
    errors = []

    def work(k):
        try:
            for r in range(20):
                i = (k + r) % len(arrays)
                if not np.array_equal(f.inputs[i].numpy(), arrays[i]):
                    errors.append((k, i))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    f.close()
    assert not errors


def _longest_stall(call):
    """Runs call() on a thread while this thread keeps stamping the clock;
    returns (the longest time this thread could not run during the call,
    the call's duration). With the GIL held for the whole call, the stall
    is about the whole call; with it released, a few switch intervals."""
    window = {}

    def target():
        window["start"] = time.perf_counter()
        call()
        window["end"] = time.perf_counter()

    t = threading.Thread(target=target)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    start, end = window["start"], window["end"]
    points = [start] + [x for x in stamps if start < x < end] + [end]
    stall = max(b - a for a, b in zip(points, points[1:]))
    return stall, end - start


def test_stall_probe_sees_a_held_gil():
    # The probe itself must be able to fail: bytes() of a big buffer copies
    # under the GIL.
    big = bytearray(256 << 20)
    stall, secs = _longest_stall(lambda: bytes(big))
    assert stall > 0.5 * secs, (stall, secs)


def col_major_f32(arr):
    """A canonical F32 LiteralProto in layout {0,1} (docs/format.md §9):
    shape (field 1), then f32s (field 8) in physical order, dimension 0
    fastest: the bytes of arr.T in C order."""
    shp = ui.shape_proto(11, list(arr.shape), [0, 1], True)
    return f_len(1, shp) + f_len(8, arr.T.tobytes())


def test_col_major_f32_matches_the_generator():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert col_major_f32(arr) == ui.literal("F32", arr, [0, 1], "canonical")


def test_gil_is_released_while_decoding(tmp_path):
    # A 64 MiB F32 literal in column-major layout: .numpy() must gather it
    # into a decoded copy. While it runs in C++, another Python thread must
    # keep running.
    arr = np.arange(4096 * 4096, dtype=np.float32).reshape(4096, 4096)
    path = write_file(str(tmp_path / "big.dhs"),
                      ui.decomposed_file([col_major_f32(arr)], [], True))
    with decomposed.open(path) as f:
        lit = f.inputs[0]
        got = {}
        stall, secs = _longest_stall(
            lambda: got.setdefault("a", lit.numpy()))
        assert np.array_equal(got["a"], arr)
        assert stall < 0.5 * secs, (stall, secs)


def corpus_cases():
    here = os.path.dirname(os.path.abspath(__file__))
    corpus = os.path.join(os.path.dirname(here), "corpus")
    with open(os.path.join(corpus, "manifest.tsv")) as m:
        rows = [r for r in csv.reader((l for l in m if not l.startswith("#")),
                                      delimiter="\t")]
    header, rows = rows[0], rows[1:]
    cases = []
    for r in rows:
        row = dict(zip(header, r))
        if row["command"] == "verify" and row["exit"] == "1":
            cases.append(pytest.param(os.path.join(corpus, "files", row["file"]),
                                      row, id=row["file"]))
    assert len(cases) > 30
    return cases


def read_everything(path, kind):
    with decomposed.open(path, kind=kind) as f:
        f.module  # noqa: B018
        for lits in (f.inputs, f.outputs or []):
            for lit in lits:
                lit.numpy()
                lit.numpy(upcast=True)


@pytest.mark.parametrize("path,row", corpus_cases())
def test_corpus_raises_format_error(path, row, cli):
    # As the corpus runner reads them: decomposed, but the files ending in
    # .pb or .auto, detected.
    kind = "auto" if path.endswith((".pb", ".auto")) else "decomposed"
    with pytest.raises(decomposed.FormatError) as e:
        read_everything(path, kind)
    err = e.value
    assert isinstance(err, ValueError)
    assert err.code == row["code"], str(err)
    # As the corpus runner checks the CLI: the manifest's frame and fragment
    # are in the message; .frame is the message's leading frame name.
    assert row["frame"] in str(err) and str(err).startswith(err.frame + ": ")
    assert err.frame.startswith(row["frame"]) or \
        row["frame"].startswith(err.frame), str(err)
    assert row["fragment"] in str(err)
    assert str(err).endswith(f" of {path})") or path in str(err)
    if err.offset is not None:
        assert f"at byte {err.offset}" in str(err)
    # Detected automatically (the library's rule) the file may be a classic
    # snapshot: open() then agrees with the CLI's `verify` (auto), and never
    # crashes.
    r = subprocess.run([cli, "verify", path], capture_output=True, text=True)
    if r.returncode == 0:
        read_everything(path, "auto")
    else:
        with pytest.raises(decomposed.FormatError):
            read_everything(path, "auto")


def test_os_errors(tmp_path):
    missing = str(tmp_path / "missing")
    with pytest.raises(FileNotFoundError) as e:
        decomposed.open(missing)
    # From the status's payloads: the errno, its text, the path once.
    assert e.value.errno == errno.ENOENT
    assert e.value.filename == missing
    assert str(e.value) == f"[Errno 2] No such file or directory: '{missing}'"
    unreadable = write_file(str(tmp_path / "unreadable.dhs"), b"\x03\x3a\x01")
    os.chmod(unreadable, 0)
    if os.geteuid() != 0:  # root reads it anyway
        with pytest.raises(PermissionError) as e:
            decomposed.open(unreadable)
        assert e.value.errno == errno.EACCES and e.value.filename == unreadable
    with pytest.raises(OSError):
        decomposed.open(str(tmp_path))
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    for kind in ("decomposed", "auto"):
        with pytest.raises(OSError):  # refused, not blocked on
            decomposed.open(fifo, kind=kind)
    e = decomposed.FormatError("made by hand")
    assert e.code is None and e.frame is None and e.offset is None


def test_message_is_the_clis(tmp_path, cli):
    data = ui.decomposed_file([ui.literal("F32", np.zeros(3, np.float32), [0],
                                          "canonical")], [], True)
    path = write_file(str(tmp_path / "trunc.dhs"), data[:-5])
    r = subprocess.run([cli, "inspect", "--snapshot-type=decomposed", path],
                       capture_output=True, text=True)
    assert r.returncode == 1
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.open(path, kind="decomposed")
    assert str(e.value) in r.stderr
    assert e.value.code == "OUT_OF_RANGE"
