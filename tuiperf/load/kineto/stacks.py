"""Kineto `python_function` events (torch.profiler `with_stack=True`) -> frames, callsites.

torch 2.x writes the Python stack as events of category `python_function`, one per Python
call (and per C function called from Python), on the thread that ran it:
`name` = `FILE(LINE): FUNCTION` (FILE relative to the sys.path entry it was found under:
`torch/nn/modules/module.py`, `train.py`; LINE the line the frame was at when the call was
recorded: the function's first line, or the current line for frames already running when
profiling started), `<built-in method item of Tensor object at 0x…>` for C functions, and
`nn.Module: Linear_0` marks around module calls; `args."Python id"` / `"Python parent id"`
make them a tree. cpu_ops carry no stack of their own (no `Call stack` arg in torch 2.x):
an op's stack is the innermost python_function on its thread that encloses it in time.

frames: one row per python_function (frame_id = its Python id). callsites: one row per
cpu_op inside a python_function, `nested` when another cpu_op lies between the two (the op
was called by an op, not directly from Python).
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from tuiperf import schema
from tuiperf.load.kineto.collect import NULL, RANGE_CATS, Columns

_FRAME = re.compile(r"^(.*)\((\d+)\): (.*)$", re.DOTALL)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>$")
_CPU_OP = RANGE_CATS.index("cpu_op")


def parse_frame(name: str) -> tuple[str, int, str]:
    """`torch/nn/modules/module.py(1782): _call_impl` -> (file, line, function);
    `<built-in method item of Tensor object at 0x7f…>` -> ("<built-in>", 0, the name
    without its address); anything else (`nn.Module: Linear_0`) -> ("", 0, name)."""
    m = _FRAME.match(name)
    if m is not None:
        return m.group(1), int(m.group(2)), m.group(3)
    if name.startswith("<built-in"):
        return "<built-in>", 0, _ADDRESS.sub(">", name)
    return "", 0, name


def _ns(values: object) -> np.ndarray:
    return np.rint(np.frombuffer(values, dtype=np.float64) * 1000.0).astype(np.int64)  # type: ignore[call-overload]


def _dict(codes: np.ndarray, labels: list[str]) -> pa.DictionaryArray:
    uniq, inverse = np.unique(np.array([*labels, ""], dtype=object), return_inverse=True)
    return pa.DictionaryArray.from_arrays(
        pa.array(inverse.ravel()[codes].astype(np.int32)), pa.array(uniq.tolist(), pa.string())
    )


def frames_table(py: Columns) -> pa.Table:
    """One row per python_function event with a Python id."""
    ids = np.frombuffer(py.cols["pyid"], dtype=np.int64)
    keep = np.flatnonzero(ids != NULL)
    parent = np.frombuffer(py.cols["parent"], dtype=np.int64)[keep]
    codes = np.frombuffer(py.cols["name"], dtype=np.int32)[keep]
    parsed = [parse_frame(n) for n in py.names.values]
    cols = {
        "frame_id": pa.array(ids[keep]),
        "parent_id": pa.array(parent, mask=parent == NULL),
        "file": _dict(codes, [p[0] for p in parsed]),
        "line": pa.array(np.array([p[1] for p in parsed] + [0], np.int32)[codes]),
        "function": _dict(codes, [p[2] for p in parsed]),
    }
    return schema.conform("frames", cols, len(keep))


def callsites_table(py: Columns, ranges: Columns, t0: int) -> pa.Table:
    """Each cpu_op with its innermost enclosing python_function (same thread)."""
    ops = np.flatnonzero(np.frombuffer(ranges.cols["domain"], dtype=np.int8) == _CPU_OP)
    rs, rd = _ns(ranges.cols["ts"])[ops], _ns(ranges.cols["dur"])[ops]
    pyid = np.frombuffer(py.cols["pyid"], dtype=np.int64)
    framed = np.flatnonzero(pyid != NULL)  # a call without an id is no frame
    pyid = pyid[framed]
    ps, pd = _ns(py.cols["ts"])[framed], _ns(py.cols["dur"])[framed]
    rthread = _thread(ranges)[ops]
    pthread = _thread(py)[framed]
    frame, nested = _enclosing(
        np.concatenate([ps, rs]), np.concatenate([ps + pd, rs + rd]),
        np.concatenate([pthread, rthread]), len(ps),
    )  # fmt: skip
    frame = np.where(frame >= 0, pyid[np.maximum(frame, 0)], NULL)
    found = np.flatnonzero(frame != NULL)
    rows = ops[found]
    order = np.argsort(rs[found], kind="stable")
    rows, found = rows[order], found[order]
    codes = np.frombuffer(ranges.cols["name"], dtype=np.int32)[rows]
    cols = {
        "start": pa.array(rs[found] - t0),
        "duration": pa.array(rd[found]),
        "pid": pa.array(np.frombuffer(ranges.cols["pid"], dtype=np.int64)[rows]),
        "tid": pa.array(np.frombuffer(ranges.cols["tid"], dtype=np.int64)[rows]),
        "external_id": _nullable(np.frombuffer(ranges.cols["ext"], dtype=np.int64)[rows]),
        "name": _dict(codes, list(ranges.names.values)),
        "nested": pa.array(nested[found]),
        "frame_id": pa.array(frame[found]),
    }
    return schema.conform("callsites", cols, len(rows))


def _nullable(a: np.ndarray) -> pa.Array:
    return pa.array(a, mask=a == NULL)


def _thread(t: Columns) -> np.ndarray:
    pid = np.frombuffer(t.cols["pid"], dtype=np.int64)
    tid = np.frombuffer(t.cols["tid"], dtype=np.int64)
    return (pid << 32) ^ (tid & 0xFFFFFFFF)


def _enclosing(
    start: np.ndarray, end: np.ndarray, thread: np.ndarray, n_py: int
) -> tuple[np.ndarray, np.ndarray]:
    """Events 0..n_py-1 are Python calls, the rest ops. For each op: the index of the
    innermost Python call on its thread that contains it (-1 if none), and whether an op
    lies between the two. One sweep per thread with a stack of open events."""
    n_ops = len(start) - n_py
    frame = np.full(n_ops, -1, np.int64)
    nested = np.zeros(n_ops, bool)
    # by thread, then start, outer (longer) first, Python calls before ops at a tie
    is_op = np.arange(len(start)) >= n_py
    order = np.lexsort((is_op, -end, start, thread))
    stack: list[tuple[int, int, int, int]] = []  # (end, thread, innermost py, innermost op)
    for i in order.tolist():
        e, th = int(end[i]), int(thread[i])
        while stack and (stack[-1][1] != th or stack[-1][0] < e):
            stack.pop()
        py, op = (stack[-1][2], stack[-1][3]) if stack else (-1, -1)
        if i < n_py:
            stack.append((e, th, i, -1))
            continue
        k = i - n_py
        frame[k] = py
        nested[k] = op >= 0 and py >= 0
        stack.append((e, th, py, k))
    return frame, nested
