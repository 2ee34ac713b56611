"""The Nsight Compute version that wrote an `.ncu-rep`, from the report itself.

No `ncu_report` reader gives it: `IContext.get_version()` is the reader's own version
(tests/data/ncu_api/ncu_versions.md). The report keeps it among its session attributes,
the ones `ncu -i R --page session` prints ("Nsight Compute Target", "2025.3.1.0 (build
36398880) (public-release)"): a protobuf message whose field 1 is the attribute's name and
field 2 its value. Only that key/value pair is read, by its exact bytes; a report without
it (or cut short inside it) gives "".
"""

from __future__ import annotations

import mmap
from pathlib import Path

#: the attribute's name as it is stored: field 1 (tag 0x0a), length 21, the name; then the
#: value's tag (field 2, length-delimited: 0x12)
TARGET_KEY = b"\x0a\x15Nsight Compute Target\x12"


def tool_version(path: Path) -> str:
    """The 'Nsight Compute Target' session attribute of the report ('' when it has none)."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            at = m.find(TARGET_KEY)
            if at < 0:
                return ""
            return _value(m, at + len(TARGET_KEY))
    except (OSError, ValueError):  # unreadable, or empty (mmap of 0 bytes)
        return ""


def _value(buf: mmap.mmap, at: int) -> str:
    """The length-delimited string at `at`; a version is short, so its length is a one-byte
    varint (under 128): a longer one means this is not the attribute."""
    if at >= len(buf):
        return ""
    n = buf[at]
    if n >= 0x80 or at + 1 + n > len(buf):
        return ""
    return bytes(buf[at + 1 : at + 1 + n]).decode("utf-8", "replace").strip()
