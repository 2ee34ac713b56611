"""A pickle reader that builds only plain data and streams the allocator's trace.

PyTorch's `_dump_snapshot` pickles a dict of dicts, lists, tuples, str, int, float, bool
and None. This reader runs the pickle machine for exactly those opcodes; any opcode that
would import or call something (GLOBAL, REDUCE, BUILD, NEWOBJ, ...) is refused, so no
object of the file's choosing is ever made. Entries of the lists under `device_traces`
are handed to a callback as they complete and never kept: the memo slots they used are
replaced by compact interned frames, so memory grows with the distinct stacks, not with
the entries.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from typing import IO, Any

from tuiperf.errors import BadReportError

TRACES_KEY = "device_traces"
#: called with (device index, entry dict) for each entry of a device trace
OnEntry = Callable[[int, dict[str, Any]], None]

_I32 = struct.Struct("<i")
#: `] MEMOIZE MARK` then LONG_BINGETs then APPENDS
_GETS = re.compile(rb"\]\x94\((?:j....){1,4096}e", re.DOTALL)
_MARK = object()
#: bytes read from the file at a time
CHUNK = 1 << 16
_UNSET = object()
_REFUSED = {
    b"c": "GLOBAL", b"\x93": "STACK_GLOBAL", b"R": "REDUCE", b"b": "BUILD",
    b"\x81": "NEWOBJ", b"\x92": "NEWOBJ_EX", b"i": "INST", b"o": "OBJ",
    b"P": "PERSID", b"Q": "BINPERSID", b"\x82": "EXT1", b"\x83": "EXT2", b"\x84": "EXT4",
}  # fmt: skip


class Refused(ValueError):
    """The pickle is not plain data (or not a pickle at all)."""


class Reader:
    """One pass over a pickle stream; `load()` returns the top object."""

    def __init__(self, f: IO[bytes], on_entry: OnEntry) -> None:
        self._f = f
        self._buf = b""
        self._pos = 0
        self._on_entry = on_entry
        self.stack: list[Any] = []
        self._marks: list[int] = []
        self._memo: list[Any] = []
        self._memo_of: dict[int, int] = {}  # id(container) -> memo index
        self.frames: dict[Any, Any] = {}  # interned frames and stacks

    # -- bytes --------------------------------------------------------------------
    def _take(self, n: int) -> bytes:
        end = self._pos + n
        if end > len(self._buf):
            self._fill(n)
            end = n
        out = self._buf[self._pos : end]
        self._pos = end
        return out

    def _fill(self, n: int) -> None:
        """At least `n` bytes from the position on in the buffer, read a chunk at a time
        (a length the file states is never allocated before the bytes are there)."""
        parts = [self._buf[self._pos :]]
        have = len(parts[0])
        while have < n:
            chunk = self._f.read(min(max(n - have, CHUNK), 16 * CHUNK))
            if not chunk:
                raise Refused("the pickle ends early (truncated file)")
            parts.append(chunk)
            have += len(chunk)
        self._buf, self._pos = b"".join(parts), 0

    def _line(self) -> bytes:
        out = b""
        while True:
            c = self._take(1)
            if c == b"\n":
                return out
            out += c
            if len(out) > 1 << 16:
                raise Refused("a text opcode's line is too long")

    # -- the machine ---------------------------------------------------------------
    def load(self) -> Any:
        ops = {k[0]: v for k, v in _dispatch().items()}
        while True:
            if self._fast():
                continue
            op = self._take(1)[0]
            fn = ops.get(op)
            if fn is None:
                name = _REFUSED.get(bytes([op]))
                if name is not None:
                    raise Refused(f"the pickle builds Python objects ({name}); refused")
                raise Refused(f"unknown pickle opcode {bytes([op])!r}")
            if fn(self):
                break
        if len(self.stack) != 1:
            raise Refused("the pickle's stack is not one object at its end")
        return self.stack[0]

    def _fast(self) -> bool:
        """The commonest opcodes straight from the buffer (False: use the table)."""
        b, p = self._buf, self._pos
        if p + 10 > len(b):
            return False
        op = b[p]
        stack = self.stack
        if op == 0x6A:  # LONG_BINGET
            self._pos = p + 5
            self._get(b[p + 1] | b[p + 2] << 8 | b[p + 3] << 16 | b[p + 4] << 24)
        elif op == 0x94:  # MEMOIZE
            self._pos = p + 1
            self._memoize(len(self._memo))
        elif op == 0x8C:  # SHORT_BINUNICODE
            n = b[p + 1]
            if p + 2 + n > len(b):
                return False
            self._pos = p + 2 + n
            stack.append(_text(b[p + 2 : p + 2 + n]))
        elif op == 0x4A:  # BININT
            self._pos = p + 5
            stack.append(_I32.unpack_from(b, p + 1)[0])
        elif op == 0x8A:  # LONG1
            n = b[p + 1]
            if n > 8:
                return False
            self._pos = p + 2 + n
            stack.append(int.from_bytes(b[p + 2 : p + 2 + n], "little", signed=True))
        elif op == 0x28:  # MARK
            self._pos = p + 1
            self._mark()
        elif op == 0x7D:  # EMPTY_DICT
            self._pos = p + 1
            stack.append({})
        elif op == 0x5D:  # EMPTY_LIST
            if not self._list_of_gets(b, p):
                self._pos = p + 1
                stack.append([])
        elif op == 0x68:  # BINGET
            self._pos = p + 2
            self._get(b[p + 1])
        elif op == 0x4B:  # BININT1
            self._pos = p + 2
            stack.append(b[p + 1])
        else:
            return False
        return True

    def _list_of_gets(self, b: bytes, p: int) -> bool:
        """`] MEMOIZE ( j.... j.... … e`: a stack whose frames are all memo references
        (the usual shape of a snapshot's frames), read in one step."""
        m = _GETS.match(b, p)
        if m is None or self._trace_device([], len(self.stack)) is not None:
            return False
        k = (m.end() - p - 4) // 5
        keys = struct.unpack_from("<" + "xI" * k, b, p + 3)
        memo, n = self._memo, len(self._memo)
        if max(keys) >= n:
            return False
        lst = [memo[i] for i in keys]
        if any(x is _UNSET for x in lst):
            return False
        self.stack.append(lst)
        self._memoize(n)
        self._pos = m.end()
        return True

    def _pop_mark(self) -> list[Any]:
        if not self._marks:
            raise Refused("a pickle opcode needs a mark that is not there")
        k = self._marks.pop()
        items = self.stack[k:]
        del self.stack[k:]
        if self.stack and self.stack[-1] is _MARK:
            self.stack.pop()
        return items

    def _mark(self) -> None:
        self._marks.append(len(self.stack) + 1)
        self.stack.append(_MARK)

    def _memoize(self, idx: int) -> None:
        if not self.stack:
            raise Refused("memoize with an empty stack")
        obj = self.stack[-1]
        memo = self._memo
        if idx == len(memo):
            memo.append(obj)
        elif 0 <= idx < len(memo):
            memo[idx] = obj
        else:  # picklers number memo entries in order; a gap is damage (or a memory bomb)
            raise Refused(f"memo key {idx} out of order")
        if type(obj) is dict or type(obj) is list:
            self._memo_of[id(obj)] = idx

    def _get(self, idx: int) -> None:
        memo = self._memo
        obj = memo[idx] if idx < len(memo) else _UNSET
        if obj is _UNSET:
            raise Refused(f"memo key {idx} was never stored")
        self.stack.append(obj)

    def _top(self, at: int, kind: type) -> Any:
        if not -len(self.stack) <= at < len(self.stack):
            raise Refused("a pickle opcode needs more on the stack")
        obj = self.stack[at]
        if not isinstance(obj, kind):
            raise Refused(f"a pickle opcode expects a {kind.__name__}")
        return obj

    # -- lists: where the trace entries are taken out ------------------------------
    def _extend(self, lst: list[Any], at: int, items: list[Any]) -> None:
        dev = self._trace_device(lst, at)
        if dev is None:
            lst.extend(items)
            return
        for e in items:
            if type(e) is dict:
                frames = e.get("frames")
                key = self.stack_key(frames)
                e["frames"] = key
                self._on_entry(dev, e)
                self._release(e, frames, key)

    def _trace_device(self, lst: list[Any], at: int) -> int | None:
        """Which device's trace `lst` (at stack index `at`) is, or None."""
        s = self.stack
        j = at - 1
        while j >= 0 and isinstance(s[j], list):  # earlier devices' lists in this batch
            j -= 1
        if j >= 0 and s[j] is _MARK:
            before = at - j - 1
            j -= 1
        else:
            j, before = at - 1, 0
        if j < 1 or not isinstance(s[j], list) or s[j - 1] != TRACES_KEY:
            return None
        return len(s[j]) + before

    def _release(self, entry: dict[str, Any], frames: Any, key: tuple[Any, ...]) -> None:
        """Drop an entry's memo slot (entries are never referred to twice); its frames'
        slots keep the compact interned copy that later entries may refer back to."""
        idx = self._memo_of.pop(id(entry), None)
        if idx is not None:
            self._memo[idx] = _UNSET
        if type(frames) is list:
            self._compact(frames, key)

    def _compact(self, obj: Any, key: Any) -> None:
        idx = self._memo_of.pop(id(obj), None)
        if idx is not None:
            self._memo[idx] = key

    def frame_key(self, f: Any) -> tuple[str, int, str]:
        """A frame (a dict, or an interned tuple already) as one interned tuple."""
        if isinstance(f, tuple):
            return f
        if not isinstance(f, dict):
            return ("", 0, "")
        key = (str(f.get("filename", "")), _int(f.get("line")), str(f.get("name", "")))
        return self.frames.setdefault(key, key)

    def stack_key(self, frames: Any) -> tuple[Any, ...]:
        """A stack (a list of frame dicts or interned frames) as one interned tuple."""
        if type(frames) is tuple:
            return frames
        if type(frames) is not list:
            return ()
        try:
            key = tuple(frames)
            return self.frames.setdefault(key, key)  # every frame interned already
        except TypeError:  # a frame dict seen for the first time
            pass
        for f in frames:
            if type(f) is dict:
                self._compact(f, self.frame_key(f))
        key = tuple(self.frame_key(f) for f in frames)
        return self.frames.setdefault(key, key)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise Refused("a string is not UTF-8") from None


def _int(v: Any) -> int:
    return v if type(v) is int else 0


def _u(fmt: str, b: bytes) -> int:
    return int(struct.unpack(fmt, b)[0])


def _dispatch() -> dict[bytes, Callable[[Reader], bool | None]]:
    def push(v: Any) -> Callable[[Reader], None]:
        return lambda r: r.stack.append(v)

    def text(nfmt: str, n: int) -> Callable[[Reader], None]:
        def op(r: Reader) -> None:
            raw = r._take(_u(nfmt, r._take(n)))
            try:
                r.stack.append(raw.decode("utf-8", "surrogatepass"))
            except UnicodeDecodeError:
                raise Refused("a string is not UTF-8") from None

        return op

    def blob(nfmt: str, n: int) -> Callable[[Reader], None]:
        return lambda r: r.stack.append(bytes(r._take(_u(nfmt, r._take(n)))))

    def long(nfmt: str, n: int) -> Callable[[Reader], None]:
        def op(r: Reader) -> None:
            size = _u(nfmt, r._take(n))
            if size > 1 << 12:
                raise Refused("an integer too large for a snapshot")
            r.stack.append(int.from_bytes(r._take(size), "little", signed=True))

        return op

    def tup(n: int) -> Callable[[Reader], None]:
        def op(r: Reader) -> None:
            if len(r.stack) < n or any(x is _MARK for x in r.stack[len(r.stack) - n :]):
                raise Refused("a tuple opcode needs more on the stack")
            items = tuple(r.stack[len(r.stack) - n :])
            del r.stack[len(r.stack) - n :]
            r.stack.append(items)

        return op

    def proto(r: Reader) -> None:
        if r._take(1)[0] > 5:
            raise Refused("pickle protocol newer than 5")

    def setitems(r: Reader) -> None:
        items = r._pop_mark()
        d = r._top(-1, dict)
        if len(items) % 2:
            raise Refused("SETITEMS with an odd number of items")
        for k, v in zip(items[::2], items[1::2]):
            d[_key(k)] = v

    def setitem(r: Reader) -> None:
        d = r._top(-3, dict)
        d[_key(r.stack[-2])] = r.stack[-1]
        del r.stack[-2:]

    def appends(r: Reader) -> None:
        items = r._pop_mark()
        at = len(r.stack) - 1
        r._extend(r._top(-1, list), at, items)

    def append(r: Reader) -> None:
        item = r.stack.pop() if r.stack else None
        at = len(r.stack) - 1
        r._extend(r._top(-1, list), at, [item])

    def tuple_mark(r: Reader) -> None:
        r.stack.append(tuple(r._pop_mark()))

    def memoize(r: Reader) -> None:
        r._memoize(len(r._memo))

    def stop(r: Reader) -> bool:
        return True

    def frame(r: Reader) -> None:
        r._take(8)

    return {
        b"\x80": proto, b"\x95": frame, b".": stop,
        b"}": push_new(dict), b"]": push_new(list), b")": push(()),
        b"(": lambda r: r._mark(),
        b"\x94": memoize,
        b"q": lambda r: r._memoize(r._take(1)[0]),
        b"r": lambda r: r._memoize(_u("<I", r._take(4))),
        b"h": lambda r: r._get(r._take(1)[0]),
        b"j": lambda r: r._get(_u("<I", r._take(4))),
        b"p": lambda r: r._memoize(int(r._line())),
        b"g": lambda r: r._get(int(r._line())),
        b"\x8c": text("<B", 1), b"X": text("<I", 4), b"\x8d": text("<Q", 8),
        b"C": blob("<B", 1), b"B": blob("<I", 4), b"\x8e": blob("<Q", 8),
        b"K": lambda r: r.stack.append(r._take(1)[0]),
        b"M": lambda r: r.stack.append(_u("<H", r._take(2))),
        b"J": lambda r: r.stack.append(_u("<i", r._take(4))),
        b"\x8a": long("<B", 1), b"\x8b": long("<i", 4),
        b"G": lambda r: r.stack.append(struct.unpack(">d", r._take(8))[0]),
        b"N": push(None), b"\x88": push(True), b"\x89": push(False),
        b"u": setitems, b"s": setitem, b"e": appends, b"a": append,
        b"\x85": tup(1), b"\x86": tup(2), b"\x87": tup(3), b"t": tuple_mark,
        b"0": lambda r: r.stack.pop() if r.stack else None,
    }  # fmt: skip


def push_new(kind: type) -> Callable[[Reader], None]:
    return lambda r: r.stack.append(kind())


def _key(k: Any) -> Any:
    if k is _MARK or isinstance(k, dict | list):
        raise Refused("a dict key that cannot be one")
    return k


def read(f: IO[bytes], on_entry: OnEntry, name: str) -> dict[str, Any]:
    """The snapshot dict of pickle stream `f`; trace entries go to `on_entry`."""
    return read_with(Reader(f, on_entry), name)


def read_with(reader: Reader, name: str) -> dict[str, Any]:
    """`read` with a Reader made by the caller (to intern frames through it)."""
    try:
        top = reader.load()
    except Refused as e:
        raise BadReportError(f"{name}: not a PyTorch memory snapshot ({e})") from None
    except (struct.error, ValueError, IndexError, TypeError, RecursionError) as e:
        raise BadReportError(f"{name}: damaged memory snapshot ({type(e).__name__})") from None
    if not isinstance(top, dict) or "segments" not in top:
        raise BadReportError(f"{name}: a pickle, but not a PyTorch memory snapshot")
    return top
