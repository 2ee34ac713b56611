"""Read a Chrome trace JSON file (torch.profiler / Kineto) event by event.

The file is one JSON object whose `traceEvents` array holds the events (or, in
the older Chrome form, a bare array of events). At most one buffer's worth of
events are Python objects at any moment: the text is read in chunks (through
gzip when the file starts with the gzip magic), and stdlib's C scanner decodes
the array elements that the buffer holds whole, a batch at a time (or one at a
time where a batch will not decode). Top-level keys other than `traceEvents` are
small and kept whole in `header`.

A value that fails to decode is retried with more text until the end of the file;
only there (or when the failure is plainly not at the edge of the buffer) is it an
error, raised as one `BadReportError` line.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from tuiperf.errors import BadReportError

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20
_WS = re.compile(r"[ \t\n\r]*")
#: a decode error this close to the end of the buffer may only mean "read more"
_EDGE = 16


class TraceStream:
    """Iterate over the events of a trace; `header` fills in as the file is read."""

    def __init__(self, path: Path, progress: Callable[[int], None] | None = None) -> None:
        self.path = path
        self.header: dict[str, Any] = {}
        self.bytes_read = 0
        self.saw_events = False
        self._progress = progress
        self._scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._no_batch_before = 0
        self._raw: IO[bytes] | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            with _open(self.path) as raw:
                self._raw = raw
                yield from self._document()
        except (OSError, EOFError, zlib.error) as e:
            raise BadReportError(f"{self.path}: cannot read the trace ({_why(e)})") from e
        except UnicodeDecodeError as e:
            raise BadReportError(f"{self.path}: not UTF-8 text near byte {self.bytes_read}") from e
        finally:
            self._raw = None

    # -- the document ---------------------------------------------------------

    def _document(self) -> Iterator[dict[str, Any]]:
        c = self._peek()
        if c == "[":
            self.saw_events = True
            yield from self._array()
        elif c == "{":
            yield from self._object()
        else:
            self._fail("not a JSON trace (expected '{' or '[' at the start)")
        if self._peek() != "":
            self._fail("unexpected text after the end of the trace")

    def _object(self) -> Iterator[dict[str, Any]]:
        self._pos += 1
        if self._peek() == "}":
            self._pos += 1
            return
        while True:
            key = self._value()
            if not isinstance(key, str):
                self._fail("expected a key in the top-level object")
            self._expect(":")
            if key == "traceEvents" and self._peek() == "[":
                self.saw_events = True
                yield from self._array()
            else:
                self.header[key] = self._value()
            if self._delimiter("}"):
                return

    def _array(self) -> Iterator[dict[str, Any]]:
        self._pos += 1
        if self._peek() == "]":
            self._pos += 1
            return
        while True:
            batch = self._batch()
            for ev in batch if batch is not None else (self._value(),):
                if isinstance(ev, dict):
                    yield ev
            if self._delimiter("]"):
                return

    def _batch(self) -> list[Any] | None:
        """The whole objects before the last `},` of the buffer, decoded in one call.

        A cut inside a string or a nested value cannot decode (the closing `]` we add
        would be inside the string, or brackets would be left open), so a success
        means the cut was between two elements. On failure the caller reads one
        element the careful way.
        """
        pos = self._pos
        if pos < self._no_batch_before:
            return None
        cut = self._buf.rfind("},", pos)
        if cut <= pos:
            return None
        try:
            items, _ = self._scan("[" + self._buf[pos : cut + 1] + "]", 0)
        except (StopIteration, json.JSONDecodeError):
            self._no_batch_before = cut + 1
            return None
        self._pos = cut + 1
        return items

    # -- tokens ---------------------------------------------------------------

    def _delimiter(self, close: str) -> bool:
        """Consume ',' (False: more follows) or `close` (True: done)."""
        c = self._peek()
        self._pos += 1
        if c == ",":
            return False
        if c == close:
            return True
        self._pos -= 1
        self._fail(f"expected ',' or '{close}'" if c else "the file ends too early (truncated?)")
        raise AssertionError  # unreachable: _fail raises

    def _expect(self, ch: str) -> None:
        if self._peek() != ch:
            self._fail(f"expected {ch!r}")
        self._pos += 1

    def _peek(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf) or self._eof:
                return self._buf[self._pos : self._pos + 1]
            self._fill(CHUNK)

    def _value(self) -> Any:
        self._peek()
        while True:
            try:
                value, end = self._scan(self._buf, self._pos)
            except StopIteration as e:
                self._retry_or_fail(int(e.value), "expected a JSON value")
                continue
            except json.JSONDecodeError as e:
                self._retry_or_fail(e.pos, e.msg, e.msg.startswith("Unterminated string"))
                continue
            if end >= len(self._buf) and not self._eof:
                self._fill(CHUNK)  # a number cut at the buffer's end would decode short
                continue
            self._pos = end
            return value

    def _retry_or_fail(self, at: int, msg: str, anywhere: bool = False) -> None:
        if self._eof or not (anywhere or at >= len(self._buf) - _EDGE):
            if self._eof and at >= len(self._buf) - _EDGE:
                msg = "the file ends too early (truncated?)"
            self._pos = min(at, len(self._buf))
            self._fail(msg)
        self._fill(max(CHUNK, len(self._buf) - self._pos))  # grow geometrically

    # -- the buffer -----------------------------------------------------------

    def _fill(self, size: int) -> None:
        assert self._raw is not None
        data = self._raw.read(size)
        self.bytes_read += len(data)
        text = self._utf8.decode(data, final=not data)
        self._no_batch_before -= self._pos
        self._buf = self._buf[self._pos :] + text
        self._pos = 0
        if not data:
            self._eof = True
        elif self._progress is not None:
            self._progress(self.bytes_read)

    def _fail(self, msg: str) -> None:
        where = self.bytes_read - len(self._buf.encode("utf-8", "replace")[self._pos :])
        raise BadReportError(f"{self.path}: bad trace JSON near byte {max(where, 0):,}: {msg}")


def _open(path: Path) -> IO[bytes]:
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    text = str(e).strip().splitlines()
    return text[0][:200] if text else type(e).__name__
