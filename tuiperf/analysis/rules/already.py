"""No fix turns on a switch the run already has (issue 31: "no finding advises what the
run already does").

Many fixes carry a generic snippet (autocast, TF32, channels_last, torch.compile, a fused
optimizer). After every rule has run, the snippet lines that turn on a switch the run's
kernels show it has (`RunFacts.already`) are dropped, with the block a dropped `with`
line opens, and the fix text says which of its levers the run has. Rules that read the
run's facts themselves and choose their lever by them keep their fix. Pure data.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tuiperf.analysis.findings import Finding
from tuiperf.analysis.rules.run_facts import RunFacts

#: snippet lines that turn each switch on
SWITCH_LINES: dict[str, re.Pattern[str]] = {
    # on tensor cores already: neither autocast nor TF32 is the change to make
    "low_precision": re.compile(r"torch\.autocast\(|set_float32_matmul_precision|allow_tf32"),
    "tf32": re.compile(r"set_float32_matmul_precision|allow_tf32"),
    "channels_last": re.compile(r"channels_last"),
    # plain torch.compile; a mode change (reduce-overhead, max-autotune) is another lever
    "compiled": re.compile(r"torch\.compile\(\w+\)"),
    "fused_optimizer": re.compile(r"fused=True"),
}
#: what the fix text says of each switch the run has
SWITCH_TEXT: dict[str, str] = {
    "low_precision": "its matrix products already run in a low precision on tensor cores",
    "tf32": "TF32 is already allowed (some of its fp32 matrix products use it)",
    "channels_last": "its convolutions need no layout conversions (channels_last or alike)",
    "compiled": "it is already compiled (torch.compile)",
    "fused_optimizer": "its optimizer is already fused",
}
#: a fix text that already says the run has the switch (kernel_levers' own sentence)
SWITCH_SAID: dict[str, str] = {"low_precision": "in a low precision on tensor cores"}
#: generic fix texts that list a switch as one lever among others: the list without it
TEXT_WITHOUT: dict[str, tuple[tuple[str, str], ...]] = {
    "compiled": ((", torch.compile)", ")"),),
}
#: rules that choose their lever from the run's facts themselves
OWN_CHOICE = frozenset({"cpu_bound", "fp32_no_tensor_cores", "gpu_bound"})


def without(snippet: str, switches: frozenset[str]) -> tuple[str, set[str]]:
    """`snippet` less the lines that turn on one of `switches` (a dropped `with` line takes
    its indented block along), and the switches whose lines were dropped."""
    kept: list[str] = []
    dropped: set[str] = set()
    block: int | None = None  # indent of a dropped `with` line while inside its block
    for line in snippet.splitlines():
        indent = len(line) - len(line.lstrip())
        if block is not None and indent > block and line.strip():
            continue
        block = None
        hit = [s for s in switches if s in SWITCH_LINES and SWITCH_LINES[s].search(line)]
        if not hit:
            kept.append(line)
            continue
        dropped.update(hit)
        if line.rstrip().endswith(":"):
            block = indent
    return "\n".join(kept), dropped


def _text(text: str, switches: set[str]) -> str:
    for s in sorted(switches):
        for old, new in TEXT_WITHOUT.get(s, ()):
            text = text.replace(old, new)
    said = "; ".join(
        SWITCH_TEXT[s] for s in sorted(switches) if SWITCH_SAID.get(s, "\0") not in text
    )
    return f"{text} (The run has some of this already: {said}.)" if said else text


def drop_already(findings: list[Finding], facts: RunFacts | None) -> list[Finding]:
    """Each finding's fix without what the run already does (unchanged where it has none)."""
    have = facts.already if facts is not None else frozenset()
    if not have:
        return findings
    for f in findings:
        if f.rule in OWN_CHOICE:
            continue
        snippet, dropped = without(f.fix.snippet, have)
        listed = {s for s in have if any(old in f.fix.text for old, _ in TEXT_WITHOUT.get(s, ()))}
        if dropped or listed:
            f.fix = replace(f.fix, text=_text(f.fix.text, dropped | listed), snippet=snippet)
    return findings
