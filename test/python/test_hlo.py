"""decomposed.hlo: the module of a snapshot or module file, printed as XLA's
text, parsed back and summarized (python/src/hlo.cc over hlo/print.h,
hlo/parse.h, hlo/summary.h and snapshot/module_file.h). The expected texts
are worked out by hand from the example's module (examples/make_example.py:
x times a broadcast 2)."""
import os
import pickle

import pytest

import decomposed

SHORT = """HloModule example, entry_computation_layout={(f32[2,3]{1,0}, s32[4]{0})->(f32[2,3]{1,0})}

ENTRY main {
  y = s32[4]{0} parameter(1)
  x = f32[2,3]{1,0} parameter(0)
  two = f32[] constant(2)
  twos = f32[2,3]{1,0} broadcast(two), dimensions={}
  product = f32[2,3]{1,0} multiply(x, twos)
  ROOT result = (f32[2,3]{1,0}) tuple(product)
}

"""


@pytest.fixture(scope="module")
def example(source_dir):
    return os.path.join(source_dir, "examples", "example.decomposed_hlo_snapshot")


def test_file_module_is_bytes_with_the_module_facts(example):
    with decomposed.open(example) as f:
        m = f.module
    assert isinstance(m, bytes) and isinstance(m, decomposed.hlo.Module)
    assert m.form == "decomposed snapshot"
    assert m.name == "example" and m.entry == "main"
    assert [(p["number"], p["name"], p["shape"]) for p in m.parameters] == \
        [(0, "x", "f32[2,3]"), (1, "y", "s32[4]")]
    assert m.result == "(f32[2,3])"
    s = m.summary()
    assert s["instructions"] == 6 and s["opcodes"]["multiply"] == 1
    assert s["constants"] == {"count": 1, "bytes": 4, "elided": 0}
    root = [i for i in m.instructions if i["root"]]
    assert [(i["name"], i["opcode"], i["operands"]) for i in root] == \
        [("result", "tuple", ["product"])]


def test_text_in_the_short_style_as_worked_out_by_hand(example):
    m = decomposed.open(example).module
    assert m.text(style="short") == SHORT
    long = m.text()
    assert "%product = f32[2,3]{1,0} multiply(f32[2,3]{1,0} %x, " \
           "f32[2,3]{1,0} %twos), metadata={op_type=\"mul\"" in long
    assert "multiply(%x, %twos)" in m.text(style="modern")
    with pytest.raises(ValueError):
        m.text(style="medium")
    # XLA's own dumps: the short style with metadata.
    with_md = m.text(style="short", metadata=True)
    assert "  product = f32[2,3]{1,0} multiply(x, twos), metadata={op_type=\"mul\"" in with_md
    assert with_md.replace(with_md[with_md.index(", metadata="):with_md.index("\n", with_md.index(", metadata="))], "") == SHORT
    assert "metadata" not in m.text(metadata=False)


@pytest.mark.parametrize("old, new", [
    # Parameters joined by a bare comma, as XLA wrote until 2023.
    ("{1,0}, s32[4]{0})->", "{1,0},s32[4]{0})->"),
    # `} // main` after a computation of more than 5 instructions (main has
    # 6), as XLA's print_name_after_closing_brace writes it.
    ("tuple(product)\n}\n", "tuple(product)\n} // main\n"),
])
def test_spellings_of_other_xla_versions_print_back(tmp_path, old, new):
    text = SHORT.replace(old, new)
    assert text != SHORT
    assert decomposed.hlo.parse(text).text(style="short") == text
    path = tmp_path / "other.txt"
    path.write_text(text)
    loaded = decomposed.hlo.load(path)
    assert loaded.text(style="short") == text
    assert pickle.loads(pickle.dumps(loaded)).text(style="short") == text
    # A module without the text's extras prints the current spelling.
    assert decomposed.hlo.Module(bytes(loaded)).text(style="short") == SHORT


def test_short_operand_index_annotations_print_back():
    text = ("HloModule m, entry_computation_layout={(f32[])->(f32[], f32[], "
            "f32[], f32[], f32[], /*index=5*/f32[])}\n\nENTRY main {\n"
            "  p = f32[] parameter(0)\n  ROOT t = (f32[], f32[], f32[], f32[], "
            "f32[], /*index=5*/f32[]) tuple(p, p, p, p, p, /*index=5*/p)\n}\n\n")
    m = decomposed.hlo.parse(text)
    assert m.text(style="short") == text
    assert pickle.loads(pickle.dumps(m)).text(style="short") == text
    assert "/*index=5*/p)" not in decomposed.hlo.Module(bytes(m)).text(style="short")


def test_parse_and_load_give_the_module_back(example, tmp_path):
    m = decomposed.open(example).module
    p = decomposed.hlo.parse(SHORT)
    assert p.form == "HLO text"
    assert p.text(style="short") == SHORT
    # The short style drops metadata; the long text carries it back.
    assert decomposed.hlo.parse(m.text()).text() == m.text()
    path = tmp_path / "m.txt"
    path.write_text(SHORT)
    loaded = decomposed.hlo.load(path)
    assert loaded.form == "HLO text" and loaded.text(style="short") == SHORT
    assert decomposed.hlo.load(example).form == "decomposed snapshot"
    # A Module goes where module bytes go, and pickles with its extras.
    out = tmp_path / "y.dhs"
    with decomposed.open(example) as f:
        decomposed.write(out, p, [f.inputs[0].numpy(), f.inputs[1].numpy()])
    assert decomposed.open(out).module.text(style="short") == SHORT
    assert pickle.loads(pickle.dumps(p)).text() == p.text()


def test_config_attributes_of_text_survive_text_to_text():
    # XLA prints the module config's attributes after the entry layout.
    text = SHORT.replace("(f32[2,3]{1,0})}\n", "(f32[2,3]{1,0})}, replica_count=2\n", 1)
    assert "replica_count=2\n" in text
    assert decomposed.hlo.parse(text).text(style="short") == text


def test_bad_text_names_line_and_column():
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.hlo.parse("HloModule m\n\nENTRY e {\n  ROOT a = f32[] add(b, c)\n}\n")
    assert "line 4, column 22" in str(e.value)
    with pytest.raises(OSError):
        decomposed.hlo.load("/nonexistent/module.pb")


def test_load_reads_one_graph_of_a_torch_xla_graph_dump(tmp_path):
    def graph(name):
        return ("[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (a.py:1)\n\n"
                f"## BEGIN_GRAPH\nHloModule {name}\n\nENTRY {name} {{\n"
                "  ROOT c = f32[] constant(1)\n}\n\n\n## END_GRAPH\n\n\n")
    path = tmp_path / "dump.hlo.0"
    path.write_text(graph("g0") + graph("g1"))
    m = decomposed.hlo.load(path, graph=1)
    assert m.form == "torch-xla graph dump" and m.name == "g1"
    import numpy as np
    assert decomposed.hlo.load(path, graph=np.int64(0)).name == "g0"
    # A dump of one graph is a module file like any other: write() takes it.
    one = tmp_path / "one.hlo.0"
    one.write_text(graph("g0"))
    assert decomposed.hlo.load(one).name == "g0"
    out = tmp_path / "from_dump.dhs"
    decomposed.write(out, str(one), [])
    assert decomposed.open(out).module.name == "g0"
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.hlo.load(path)
    assert "expected one graph, found 2" in str(e.value)
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.hlo.load(path, graph=2)
    assert "expected a graph in [0, 2), found 2" in str(e.value)
    with pytest.raises(ValueError):
        decomposed.hlo.load(path, graph=-1)


def test_write_takes_a_module_file_of_hlo_text(example, tmp_path):
    # As `pack --module` does (SnapshotFromModuleFile): text is parsed.
    text = tmp_path / "m.hlo"
    text.write_text(SHORT)
    out = tmp_path / "from_text.dhs"
    with decomposed.open(example) as f:
        decomposed.write(out, str(text), [f.inputs[0].numpy(), f.inputs[1].numpy()])
    assert decomposed.open(out).module.text(style="short") == SHORT
    text.write_text(SHORT.replace("two = f32[] constant(2)",
                                  "two = f32[11]{0} constant({...})"))
    with pytest.raises(decomposed.FormatError) as e:
        decomposed.write(tmp_path / "no.dhs", str(text), [])
    assert 'constant "two"' in str(e.value)
