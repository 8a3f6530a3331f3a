"""vLLM-Neuron input-snapshot bundles: ``<root>/<hash>/rank<G>/call<N>/``
with ``meta.json`` and ``tensor<i>.npy`` or ``tensor<i>.pt``.

    b = decomposed.bundle.open("snapshots/a1b2/rank0/call3")
    b.meta["req_ids"], b.format
    t = b.tensors[0]
    t.dtype, t.shape          # "bf16", (2, 8): XLA's names, as Literal.dtype
    t.torch_dtype             # "torch.bfloat16", as meta.json spells it
    t.numpy()                 # a read-only memory map of the tensor's bytes
    t.torch()                 # a torch.bfloat16 tensor (a copy)
    decomposed.bundle.ls("snapshots")   # every call directory, as `bundle ls`

``open`` checks meta.json (schema, format, dtypes, indices); each tensor's
file header is checked against it when the tensor is first read.
"""

import json as _json
import os as _os

import numpy as _np

from . import _decomposed
from . import _STORAGE, _to_torch

# torch dtype names of meta.json ("torch.bfloat16") -> XLA's lower-case
# names, from the library's table (capture/torch_dtype.h).
_XLA = {name: xla for name, _, _, xla in _decomposed._torch_dtypes() if xla}


class Tensor:
    """One tensor of a bundle: ``index``, ``dtype`` (XLA's lower-case name,
    "f32", as every literal and report spells it; None for a torch type XLA
    lacks), ``torch_dtype`` (PyTorch's name, as meta.json has it),
    ``xla_dtype`` (the same as ``dtype``), ``shape``, ``nbytes``, ``path``."""

    def __init__(self, bundle, info):
        self._bundle = bundle
        self.index = info["index"]
        self.torch_dtype = info["dtype"]
        self.xla_dtype = _XLA.get(self.torch_dtype)
        self.dtype = self.xla_dtype
        self.shape = tuple(info["shape"])
        self.nbytes = info["nbytes"]
        self.path = info["path"]

    def numpy(self):
        """The elements as a read-only np.memmap of the tensor file (bit
        patterns or ml_dtypes for bf16 and fp8, as decomposed.Literal)."""
        if self.xla_dtype is None:
            raise TypeError(f"{self.torch_dtype}: no NumPy representation")
        offset, size = _decomposed._bundle_locate(self._bundle.path,
                                                  self.index)
        dt = _STORAGE[self.xla_dtype]
        if size == 0:
            return _np.empty(self.shape, dt)
        return _np.memmap(self.path, dtype=dt, mode="r", offset=offset,
                          shape=self.shape)

    def torch(self):
        """A torch tensor of this dtype (a copy)."""
        if self.xla_dtype is None:
            raise TypeError(f"{self.torch_dtype}: no torch dtype known here")
        return _to_torch(self.numpy(), self.xla_dtype)

    def __repr__(self):
        return (f"<decomposed.bundle.Tensor {self.index}: {self.torch_dtype} "
                f"{list(self.shape)}>")


class Bundle:
    """A bundle's call directory: ``path``, ``format`` ("pt" or "npy"),
    ``meta`` (meta.json as a dict) and ``tensors``."""

    def __init__(self, info):
        self.path = info["path"]
        self.format = info["format"]
        self.meta = _json.loads(info["meta"])
        self.tensors = [Tensor(self, t) for t in info["inputs"]]

    def __len__(self):
        return len(self.tensors)

    def __getitem__(self, i):
        return self.tensors[i]

    def __iter__(self):
        return iter(self.tensors)

    def __repr__(self):
        return (f"<decomposed.bundle.Bundle {self.path!r} {self.format}, "
                f"{len(self.tensors)} tensors>")


def ls(root):
    """`decomposed bundle ls ROOT --json` as a list of dicts, one per call
    directory under `root` sorted by (hash, rank, call): path, hash,
    global_rank, call_index, complete, and for a complete bundle format,
    inputs and selected_by, or error when its meta.json is invalid."""
    return _json.loads(_decomposed._bundle_ls_json(_os.fspath(root)))


def open(call_dir):  # noqa: A001
    """Reads and checks `call_dir`/meta.json. Raises FormatError for a
    malformed bundle, OSError for I/O errors."""
    return Bundle(_decomposed._bundle_open(_os.fspath(call_dir)))
