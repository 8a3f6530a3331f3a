"""decomposed.run: the CPU replay of a snapshot from Python (python/src/run.cc
over run/run.h), on the shipped example and on modules written here byte by
byte with examples/make_example.py's wire helpers (no writer of this
project)."""
import importlib.util
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import decomposed


@pytest.fixture(scope="module")
def mk(source_dir):
    spec = importlib.util.spec_from_file_location(
        "make_example", os.path.join(source_dir, "examples", "make_example.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.fixture(scope="module")
def example(source_dir):
    return os.path.join(source_dir, "examples", "example.decomposed_hlo_snapshot")


X = np.array([[0.5, 1, 1.5], [2, 2.5, 3]], dtype=np.float32)
Y = np.array([-2, -1, 0, 7], dtype=np.int32)


def kernel_module(mk, target):
    """x: f32[4] -> (custom-call(x), x) as an HloModuleProto's bytes."""
    f4 = mk.shape(mk.F32, [4])
    call = mk.instruction(2, "k", "custom-call", f4, [1]) + mk.field_len(28, target.encode())
    tup = mk.field_varint(2, mk.TUPLE) + mk.field_len(4, f4) + mk.field_len(4, f4)
    comp = (mk.field_len(1, b"main")
            + mk.field_len(2, mk.instruction(1, "x", "parameter", f4, parameter_number=0))
            + mk.field_len(2, call)
            + mk.field_len(2, mk.instruction(3, "out", "tuple", tup, [2, 1]))
            + mk.field_varint(5, 1) + mk.field_varint(6, 3))
    return (mk.field_len(1, b"kernel") + mk.field_len(2, b"main") + mk.field_len(3, comp)
            + mk.field_varint(5, 1) + mk.field_varint(6, 1))


def test_the_example_doubles_its_input(example):
    outs = decomposed.run(example)
    assert len(outs) == 1
    assert outs[0].dtype == np.float32 and outs[0].shape == (2, 3)
    np.testing.assert_array_equal(outs[0], 2 * X)
    for n in ("f32", "neuron"):
        np.testing.assert_array_equal(decomposed.run(example, numerics=n)[0], 2 * X)
    with decomposed.open(example) as f:
        np.testing.assert_array_equal(decomposed.run(f)[0], 2 * X)
    with open(example, "rb") as f:
        np.testing.assert_array_equal(decomposed.run(f)[0], 2 * X)
    with pytest.raises(ValueError):
        decomposed.run(example, numerics="fp8")


def test_inputs_and_module_from_elsewhere(example, tmp_path, cli):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(decomposed.run(example, inputs=[x, Y])[0], 2 * x)
    import torch
    np.testing.assert_array_equal(
        decomposed.run(example, inputs=[torch.from_numpy(x), torch.from_numpy(Y)])[0], 2 * x)
    u = str(tmp_path / "u") + "/"
    subprocess.run([cli, "unpack", "--output-prefix", u, example], check=True,
                   capture_output=True)
    np.testing.assert_array_equal(decomposed.run(module=u + "model.hlo", inputs=u)[0], 2 * X)
    module = open(u + "model.hlo", "rb").read()
    np.testing.assert_array_equal(
        decomposed.run(module=module, inputs=[u + "value_input0.npy", u + "value_input1.npy"])[0],
        2 * X)
    # NumPy's own archives: np.savez's entries in the order given; a
    # compressed archive is refused, naming the entry.
    z = str(tmp_path / "in.npz")
    np.savez(z, x=x, y=Y)
    np.testing.assert_array_equal(decomposed.run(module=module, inputs=z)[0], 2 * x)
    zc = str(tmp_path / "in_c.npz")
    np.savez_compressed(zc, x, Y)
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.run(module=module, inputs=zc)
    assert "arr_0.npy" in str(e.value) and "np.savez_compressed" in str(e.value)
    # An input of the wrong type: the parameter and the input named.
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.run(example, inputs=[x, Y.astype(np.float32)])
    assert 'expected S32[4] for parameter 1 "y"' in str(e.value)
    assert "found F32[4]" in str(e.value)


def test_outputs_do_not_alias_what_they_must_not(example):
    x = np.ones((2, 3), np.float32)
    out = decomposed.run(example, inputs=[x, Y])[0]
    out += 1  # the evaluator's own memory: writable
    np.testing.assert_array_equal(x, np.ones((2, 3), np.float32))


def test_substitute_and_dump(example, tmp_path):
    seven = np.full((2, 3), 7, np.float32)
    np.testing.assert_array_equal(
        decomposed.run(example, substitute={"product": seven})[0], seven)
    p = str(tmp_path / "seven.npy")
    np.save(p, seven)
    np.testing.assert_array_equal(decomposed.run(example, substitute={"product": p})[0], seven)
    d = tmp_path / "dump"
    decomposed.run(example, dump=d, dump_filter="twice")
    index = json.loads((d / "index.json").read_text())
    assert [e["name"] for e in index["instructions"]] == ["product"]
    np.testing.assert_array_equal(np.load(d / "main" / "product.npy"), 2 * X)


def test_custom_calls_are_python_functions(mk, tmp_path):
    path = str(tmp_path / "k.dhs")
    x = np.array([1, 2, 3, 4], np.float32)
    decomposed.write(path, kernel_module(mk, "MyDouble"), [x])
    seen = []

    def double(a):
        seen.append((a.dtype, a.shape, a.flags.writeable, threading.get_ident()))
        return a * 2

    outs = decomposed.run(path, custom_calls={"MyDouble": double})
    np.testing.assert_array_equal(outs[0], 2 * x)
    np.testing.assert_array_equal(outs[1], x)
    assert seen and seen[0][0] == np.float32 and seen[0][1] == (4,)
    # An unregistered target is named.
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.run(path)
    assert "MyDouble" in str(e.value)
    # The function's exception propagates as it was raised.

    def boom(a):
        raise KeyError("from the target")

    with pytest.raises(KeyError, match="from the target"):
        decomposed.run(path, custom_calls={"MyDouble": boom})
    # A result of the wrong shape is the evaluator's error.
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.run(path, custom_calls={"MyDouble": lambda a: np.zeros(3, np.float32)})
    assert 'instruction "k"' in str(e.value)


def test_runs_in_threads(example):
    # The GIL is released while the module runs: several threads at once.
    results = [None] * 4

    def work(i):
        x = np.full((2, 3), i, np.float32)
        results[i] = decomposed.run(example, inputs=[x, Y])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        np.testing.assert_array_equal(results[i], np.full((2, 3), 2 * i, np.float32))
