"""The module of a snapshot, or of any module file: XLA's HLO text both
ways, and the facts at a glance.

    import decomposed
    with decomposed.open("x.decomposed_hlo_snapshot") as f:
        m = f.module                    # a decomposed.hlo.Module
        print(m.text(style="short"))    # XLA's text (docs/hlo.md §2)
        print(m.summary()["parameters"])
    m = decomposed.hlo.load("model.hlo")          # proto, HloProto, text,
    m = decomposed.hlo.parse(open("m.txt").read())  # or a snapshot

A Module is the serialized HloModuleProto (it *is* ``bytes``, so it goes
wherever module bytes go: ``decomposed.write(path, m, ...)``) with the
library's printer, parser and summary over it. Errors are the library's
(:class:`decomposed.FormatError` with the line and column for bad text).
"""
import json as _json

from . import _decomposed

__all__ = ["Module", "parse", "load"]


class Module(bytes):
    """A serialized HloModuleProto with the module's text and facts.

    ``name``, ``entry``, ``parameters`` (list of dicts: number, name,
    neff_name, shape), ``result``, ``instructions`` (list of dicts:
    computation, name, opcode, shape, operands, root, entry, op_name,
    source_file, source_line), ``summary()`` (what ``decomposed hlo
    --json`` writes) and ``text(style=..., large_constants=False,
    metadata=None)``. Header
    attributes that HLO text carries outside the proto (``replica_count``,
    ...) are kept when the module came from text, so that text printed
    again keeps them."""

    def __new__(cls, data=b"", *, config=(), has_entry_layout=True, form=None,
                compact_entry_layout=False, name_after_brace=False,
                operand_index_annotations=False):
        self = super().__new__(cls, data)
        self._config = [tuple(kv) for kv in config]
        self._has_entry_layout = bool(has_entry_layout)
        self._compact_entry_layout = bool(compact_entry_layout)
        self._name_after_brace = bool(name_after_brace)
        self._operand_index_annotations = bool(operand_index_annotations)
        self._form = form
        self._summary = None
        return self

    @property
    def form(self):
        """What the module was read from ("HLO text", "HloModuleProto",
        "decomposed snapshot", ...), or None when not known."""
        return self._form

    def text(self, style="long", large_constants=False, metadata=None) -> str:
        """XLA's text of the module: style "long" (XLA 2022-2025, the
        torch-neuronx dumps), "modern" (no operand shapes) or "short"
        (ShortParsable); constants over 10 elements as {...} unless
        large_constants; metadata True or False prints metadata (and the
        stack frame index) or not whatever the style says (None: the
        style's; XLA's own dumps are style="short", metadata=True)."""
        return _decomposed._hlo_text(bytes(self), style, bool(large_constants),
                                     self._config, self._has_entry_layout,
                                     None if metadata is None else bool(metadata),
                                     self._compact_entry_layout,
                                     self._name_after_brace,
                                     self._operand_index_annotations)

    def summary(self) -> dict:
        """The module's facts, as `decomposed hlo --json` writes them."""
        if self._summary is None:
            self._summary = _json.loads(_decomposed._hlo_summary_json(bytes(self)))
        return _json.loads(_json.dumps(self._summary))  # a fresh copy

    @property
    def name(self) -> str:
        return self.summary()["name"]

    @property
    def entry(self) -> str:
        return self.summary()["entry"]

    @property
    def parameters(self) -> list:
        return self.summary()["parameters"]

    @property
    def result(self) -> str:
        return self.summary()["result"]

    @property
    def instructions(self) -> list:
        return _decomposed._hlo_instructions(bytes(self))

    def __repr__(self):
        if not self:
            return "<decomposed.hlo.Module (none)>"
        s = self.summary()
        return (f"<decomposed.hlo.Module {s['name']}: {s['instructions']} "
                f"instructions, entry {s['entry']}>")

    def __reduce__(self):
        return (_rebuild, (bytes(self), self._config, self._has_entry_layout,
                           self._form, self._compact_entry_layout,
                           self._name_after_brace,
                           self._operand_index_annotations))


def _rebuild(data, config, has_entry_layout, form, compact_entry_layout=False,
             name_after_brace=False, operand_index_annotations=False):
    return Module(data, config=config, has_entry_layout=has_entry_layout,
                  form=form, compact_entry_layout=compact_entry_layout,
                  name_after_brace=name_after_brace,
                  operand_index_annotations=operand_index_annotations)


def parse(text: str) -> Module:
    """A module from HLO text in any of XLA's styles (docs/hlo.md §3)."""
    data, config, has_layout, compact, after_brace, annotations = \
        _decomposed._hlo_parse(text)
    return Module(data, config=config, has_entry_layout=has_layout,
                  form="HLO text", compact_entry_layout=compact,
                  name_after_brace=after_brace,
                  operand_index_annotations=annotations)


def load(path, graph=None) -> Module:
    """The module of the file at `path`: a decomposed or classic snapshot,
    an HloModuleProto (model.hlo), an HloProto, XLA's HloUnoptimizedSnapshot,
    HLO text or torch-xla's graph dump (XLA_SAVE_TENSORS_FILE), told apart
    by content ("-": standard input). Of a graph dump, `graph` (from 0)
    names the graph; without it the dump must hold one."""
    import operator
    import os
    if graph is not None:
        if isinstance(graph, bool):
            raise ValueError(f"graph: expected a graph number from 0, found {graph!r}")
        graph = operator.index(graph)  # an int or a NumPy integer
        if graph < 0:
            raise ValueError(f"graph: expected a graph number from 0, found {graph!r}")
    data, form, config, has_layout, compact, after_brace, annotations = \
        _decomposed._hlo_load(os.fspath(path), -1 if graph is None else graph)
    return Module(data, config=config, has_entry_layout=has_layout, form=form,
                  compact_entry_layout=compact, name_after_brace=after_brace,
                  operand_index_annotations=annotations)
