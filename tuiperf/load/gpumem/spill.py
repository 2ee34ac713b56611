"""A snapshot's trace entries kept on disk as compact int64 columns, read back a chunk at a
time: a trace of millions of entries is read with memory for one chunk, not for all."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import numpy as np

#: the columns, in the order each chunk holds them (the reader's sentinel NULL for none)
COLUMNS = ("device", "time", "action", "addr", "size", "stream", "site", "device_free")
NULL = -(1 << 63)


class Spill:
    """An unnamed temporary file of chunks; gone when closed or collected."""

    def __init__(self) -> None:
        self._f = tempfile.TemporaryFile(prefix="tuiperf-gpumem-")  # noqa: SIM115 (kept open)
        self._sizes: list[int] = []
        self.devices: set[int] = set()
        self.events = 0

    def write(self, cols: dict[str, np.ndarray]) -> None:
        n = len(cols["action"])
        if n == 0:
            return
        for k in COLUMNS:
            self._f.write(np.ascontiguousarray(cols[k], np.int64).tobytes())
        self._sizes.append(n)
        self.devices.update(np.unique(cols["device"]).tolist())
        self.events += n

    def chunks(self) -> Iterator[dict[str, np.ndarray]]:
        """As analysis/gpumem/curve.chunks gives them: code for action, nulls as -1
        (addr: 0), the source's totals 0 (a snapshot has none)."""
        self._f.flush()
        self._f.seek(0)
        for n in self._sizes:
            raw = np.frombuffer(self._f.read(8 * n * len(COLUMNS)), np.int64)
            c = dict(zip(COLUMNS, raw.reshape(len(COLUMNS), n)))
            zeros = np.zeros(n, np.int64)
            yield {
                "device": c["device"],
                "code": c["action"],
                "addr": np.where(c["addr"] == NULL, 0, c["addr"]),
                "size": c["size"],
                "time": np.where(c["time"] == NULL, -1, c["time"]),
                "site": c["site"],
                "free": np.where(c["device_free"] == NULL, -1, c["device_free"]),
                "alloc_after": zeros,
                "resv_after": zeros,
            }

    def time_range(self) -> tuple[int, int] | None:
        """The earliest and latest entry time (ns), if any entry has one."""
        lo, hi = None, None
        for c in self.chunks():
            t = c["time"][c["time"] >= 0]
            if len(t):
                lo = int(t.min()) if lo is None else min(lo, int(t.min()))
                hi = int(t.max()) if hi is None else max(hi, int(t.max()))
        return None if lo is None or hi is None else (lo, hi)

    def close(self) -> None:
        self._f.close()
