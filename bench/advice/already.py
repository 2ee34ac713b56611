"""No finding advises what the run already does (issue 31's third target).

What each corpus program already does is read from its source by hand (programs/*.py; the
`--fix` variants where the fix turns a switch on) and written down here, not taken from
tuiperf. A finding *advises* a switch when its fix text or snippet turns it on: the
snippet sets it, or the text names it as something to do. Mentions that say the run has
it ("already", "the run's ...") do not count. Used by compare.py; never imports tuiperf.
"""

from __future__ import annotations

import re
from typing import Any

#: the switches each program turns on (from its source)
DOES: dict[str, frozenset[str]] = {
    "compile_ahead": frozenset({"autocast", "compile"}),
    "compile_default": frozenset({"autocast", "compile"}),
    "dataloader_heavy": frozenset({"autocast", "channels_last"}),
    "dataloader_heavy_fix": frozenset({"autocast", "channels_last", "pin_memory"}),
    "ddp_gloo": frozenset({"autocast", "channels_last"}),
    "healthy": frozenset({"autocast", "fused_optimizer"}),
    "hf_bert_fp32": frozenset(),
    "hf_bert_fp32_fix": frozenset({"tf32"}),
    "hf_generate": frozenset(),
    "hf_gpt2_trainer": frozenset({"autocast"}),
    "hf_gpt2_trainer_fix": frozenset({"autocast"}),
    "lightning_resnet18": frozenset(),
    "reduce_overhead": frozenset({"compile", "graphs"}),
    "reduce_overhead_node": frozenset({"compile", "graphs"}),
    "sync_metrics": frozenset({"autocast", "channels_last"}),
    "sync_metrics_fix": frozenset({"autocast", "channels_last"}),
    "timm_vit_loader": frozenset({"autocast"}),
    "timm_vit_loader_fix": frozenset({"autocast", "pin_memory"}),
    "tv_resnet_recipe": frozenset({"pin_memory"}),
}

#: how a snippet turns a switch on
SNIPPET: dict[str, re.Pattern[str]] = {
    "autocast": re.compile(r"torch\.autocast\("),
    "compile": re.compile(r"torch\.compile\((?:model|m)\)"),
    "graphs": re.compile(r"mode=\"reduce-overhead\"|CUDAGraph|cuda\.graph\("),
    "fused_optimizer": re.compile(r"fused=True"),
    "pin_memory": re.compile(r"pin_memory=True"),
    "channels_last": re.compile(r"memory_format=torch\.channels_last"),
    "tf32": re.compile(r"allow_tf32 = True|set_float32_matmul_precision"),
}

#: how a fix text tells the user to turn a switch on (the imperative forms the texts use)
TEXT: dict[str, re.Pattern[str]] = {
    "autocast": re.compile(r"\b(?:use|try) (?:mixed precision|autocast)", re.I),
    "compile": re.compile(r"\b(?:use|try|add) torch\.compile\b(?! *\(mode)", re.I),
    "fused_optimizer": re.compile(r"\b(?:use|try) (?:the )?(?:foreach or )?fused\b", re.I),
    "pin_memory": re.compile(r"\bpin (?:the batches|memory)\b|pin_memory=True", re.I),
    "channels_last": re.compile(r"\bkeep the model and its inputs in channels_last", re.I),
}


def advised(finding: dict[str, Any]) -> set[str]:
    """The switches a finding (analyze's JSON) tells the user to turn on."""
    text, snippet = finding.get("fix") or "", finding.get("snippet") or ""
    out = {k for k, rx in SNIPPET.items() if rx.search(snippet)}
    return out | {k for k, rx in TEXT.items() if rx.search(text)}


def violations(program: str, findings: list[dict[str, Any]]) -> list[str]:
    """`rule: switch` for each finding that advises a switch the program already has;
    empty for a program not in DOES (unknown: not judged)."""
    does = DOES.get(program)
    if does is None:
        return []
    return [f"{f.get('rule')}: {switch}" for f in findings for switch in sorted(advised(f) & does)]
