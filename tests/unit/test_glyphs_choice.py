"""When the viewer draws with ASCII only: by option, by TERM, by locale, by output encoding."""

from __future__ import annotations

import pytest

from tuiperf.tui.glyphs import wants_ascii

UTF8 = {"TERM": "xterm-256color", "LANG": "en_US.UTF-8"}


class Out:
    def __init__(self, encoding: str) -> None:
        self.encoding = encoding


@pytest.mark.parametrize(
    ("env", "ascii_only"),
    [
        (UTF8, False),
        ({**UTF8, "LANG": "C.UTF-8"}, False),
        ({**UTF8, "LANG": "de_DE.utf8"}, False),
        ({**UTF8, "LANG": "C"}, True),  # Python coerces C to UTF-8: the encoding cannot tell
        ({**UTF8, "LANG": "POSIX"}, True),
        ({**UTF8, "LANG": "en_US"}, True),  # no charset: ISO-8859-1
        ({**UTF8, "LANG": "en_US.ISO-8859-1"}, True),
        ({**UTF8, "LC_ALL": "C"}, True),  # LC_ALL wins over LANG
        ({**UTF8, "LC_CTYPE": "C", "LC_ALL": "en_US.UTF-8"}, False),
        ({**UTF8, "LC_CTYPE": "ja_JP.eucJP"}, True),
        ({**UTF8, "TERM": "linux"}, True),  # the Linux console font
        ({**UTF8, "TERM": "vt100"}, True),
        ({**UTF8, "TERM": "dumb"}, True),
        ({**UTF8, "TERM": "tmux-256color"}, False),
        ({**UTF8, "TERM": "linux", "TUIPERF_ASCII": "0"}, False),  # the user's word wins
        ({**UTF8, "TUIPERF_ASCII": "1"}, True),
    ],
)
def test_ascii_by_term_and_locale(
    env: dict[str, str], ascii_only: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdout", Out("utf-8"))
    assert wants_ascii(env=env) is ascii_only


def test_forced_and_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    assert wants_ascii(True, env=UTF8)
    monkeypatch.setattr("sys.stdout", Out("latin-1"))
    assert wants_ascii(env={"TERM": "xterm"})  # no locale variable: the encoding decides
