"""vLLM-Neuron's input-snapshot capture, for a server to call in place of
its Python implementation: the same ``VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_*``
configuration, selection policy (call, token and request rules), rank
filter and process-global budget, writing the same atomic bundles
(docs/capture.md, docs/format.md §16).

    config = decomposed.capture.Config.from_env()
    capturer = decomposed.capture.Capturer(config, global_rank=0, tp_rank=0)
    # per NEFF execution, with the forward's request ids and positions:
    d = capturer("neff_a1b2", tensors, request_ids=["req-1"], positions=[17])
    if d["capture"]:
        print("wrote", d["call_dir"])

A call without ``request_ids`` is an execution without a published forward
context (warmup): nothing is captured and the NEFF's call counter does not
move. ``plan(forwards)`` is the dry run of ``decomposed capture plan``.
"""

import json as _json
import os as _os

import numpy as _np

from . import _FROM_NUMPY, _TORCH, _decomposed

ENV_PREFIX = _decomposed._ENV_PREFIX  # "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_"


class Config:
    """The resolved configuration: ``enabled``, ``call_indices``,
    ``every_call``, ``token_positions``, ``request_ids``, ``max_captures``,
    ``ranks`` (None: every tp-rank), ``format`` ("pt" or "npy"),
    ``warnings``. Invalid settings raise FormatError naming the variable."""

    def __init__(self, env):
        self._env = dict(env)
        d = _decomposed._config_from_env(self._env)
        self.warnings = list(d.pop("warnings"))
        self._fields = d
        for k, v in d.items():
            setattr(self, k, v)

    @classmethod
    def from_env(cls, environ=None):
        """From `environ` (default: os.environ), reading the
        VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_* variables."""
        environ = _os.environ if environ is None else environ
        return cls({k: v for k, v in environ.items()
                    if k.startswith(ENV_PREFIX)})

    def as_dict(self):
        return dict(self._fields)

    def __repr__(self):
        return f"decomposed.capture.Config({self._fields!r})"


def _torch_dtype_name(a):
    """torch's name of a NumPy array's dtype ("torch.float32"), through the
    library's tables: NumPy dtype -> XLA type -> torch dtype."""
    xla = _FROM_NUMPY.get(a.dtype)
    attr = _TORCH.get(xla) if xla is not None else None
    if attr is None:
        raise TypeError(f"NumPy dtype {a.dtype} has no torch dtype")
    return "torch." + attr


def _host_tensor(x):
    """(keep-alive, data pointer, torch dtype name, shape, strides)."""
    if type(x).__module__.startswith("torch") and hasattr(x, "detach"):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if any(s < 0 for s in t.stride()):
            t = t.contiguous()
        return t, t.data_ptr(), str(t.dtype), list(t.shape), list(t.stride())
    a = _np.asarray(x)
    if any(s < 0 or s % a.itemsize for s in a.strides):
        a = _np.ascontiguousarray(a)
    return (a, a.ctypes.data, _torch_dtype_name(a), list(a.shape),
            [s // a.itemsize for s in a.strides])


def _forward_json(request_ids, positions, is_prompt, max_generated,
                  global_step):
    """A forward as JSON text with only the fields given (None: left out, so
    that the library's defaults apply)."""
    f: dict = {"req_ids": [str(r) for r in request_ids]}
    if positions is not None:
        f["positions"] = [int(p) for p in positions]
    if is_prompt is not None:
        f["is_prompt"] = bool(is_prompt)
    if max_generated is not None:
        f["max_generated"] = int(max_generated)
    if global_step is not None:
        f["global_step"] = int(global_step)
    return _json.dumps(f)


def plan(forwards, config=None, *, global_rank=0, tp_rank=0, dp_rank=0,
         root=None):
    """`decomposed capture plan` as a dict: which NEFF executions of
    `forwards` the configuration would capture and where, writing nothing.
    `forwards`: a list of dicts {req_ids, positions, is_prompt,
    max_generated, global_step, neffs} (or a path of a JSON file holding
    that list); config: a Config (default: from os.environ); root: the
    snapshot root reported (default: vLLM's, as the CLI's). Returns {config,
    warnings, root, rank, rank_selected, budget_log, captures}."""
    if isinstance(forwards, (str, bytes, _os.PathLike)):
        with open(forwards, "rb") as f:
            text = f.read().decode("utf-8")
    else:
        text = _json.dumps(list(forwards))
    env = None if config is None else config._env
    return _json.loads(_decomposed._capture_plan_json(
        text, env, int(global_rank), int(tp_rank), int(dp_rank),
        None if root is None else _os.fspath(root)))


class Capturer:
    """One per process and rank. Keeps a call counter per NEFF (as
    vLLM-Neuron keeps one SnapshotCapturer per compiled NEFF); the capture
    budget is process-wide. Bundles go to
    ``<root>/<neff>/rank<global_rank>/call<N>/`` (root: vLLM's cache root's
    neuron/snapshots unless given)."""

    def __init__(self, config=None, *, global_rank=0, tp_rank=0, dp_rank=0,
                 root=None, sync=False):
        self.config = Config.from_env() if config is None else config
        self.global_rank, self.tp_rank, self.dp_rank = \
            global_rank, tp_rank, dp_rank
        self.root = None if root is None else _os.fspath(root)
        self.sync = bool(sync)
        self._per_neff = {}

    def _for(self, neff):
        c = self._per_neff.get(neff)
        if c is None:
            c = _decomposed._Capturer(self.config._env, neff,
                                      self.global_rank, self.tp_rank,
                                      self.dp_rank, self.root, self.sync)
            self._per_neff[neff] = c
        return c

    def next_call_index(self, neff):
        return self._for(neff).next_call_index

    def __call__(self, neff, tensors, request_ids=None, positions=None, *,
                 is_prompt=None, max_generated=None, global_step=None):
        """The per-execution hook. `tensors`: the NEFF's inputs (CPU torch
        tensors or NumPy arrays); `request_ids` / `positions`: the forward's
        rows (request_ids None: no forward context). The forward is read as
        `decomposed capture plan` reads one (ForwardInfoFromJson): what is
        left None keeps the library's default (no positions, not a prompt,
        max_generated 1, no global step). Returns {has_context, call_index,
        rank_selected, budget_refused, capture, call_dir}."""
        forward = None
        if request_ids is not None:
            forward = _forward_json(request_ids, positions, is_prompt,
                                    max_generated, global_step)
        host = [_host_tensor(t) for t in tensors]
        specs = [(ptr, dt, shape, strides)
                 for (_, ptr, dt, shape, strides) in host]
        d = self._for(neff).capture(forward, specs)
        del host
        return d
