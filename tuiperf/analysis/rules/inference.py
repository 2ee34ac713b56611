"""Findings of an inference run speak of inference (issue 31, item 9).

The rules are written for training loops: titles say "training step", snippets end in
`loss = loss_fn(model(x), y)` and `loss.item()`, and a pageable copy is fixed in the
DataLoader. When the run has no backward pass and no optimizer (`RunFacts.inference`),
the findings are rewritten here, after every rule has run: "step" for "training step",
the model's forward pass for the loss in the snippets, and the decode loop's own levers
for the two findings whose training fix does not apply (a read-back every step, a pageable
copy of the inputs). The numbers are not touched. Pure data: no printing.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tuiperf.analysis.findings import Finding, Fix
from tuiperf.analysis.rules.run_facts import RunFacts

#: "training step(s)"/"training loop"/"training thread" → the words that hold for any loop
_TRAINING = re.compile(r"\b([Tt])raining (steps?|loop|thread)\b")
_ANY_LOOP = {"thread": "loop thread"}
#: a snippet's training line → the forward pass of an inference call
_LOSS_LINE = re.compile(r"loss = loss_fn\(model\(x\), y\)")
_FORWARD = "out = model(x)"

#: a decode loop reads a token or a stop flag back every step: the levers for that
_SYNC_FIX = Fix(
    "This is inference: a decode loop reads a value back every step (the next token, or "
    "a stop check such as generate()'s test for finished sequences), so the CPU cannot "
    "queue the next step's work ahead. Keep the tokens on the GPU and test for the end "
    "every N steps; batch several requests so each read-back pays for more work; a static "
    'KV cache + torch.compile(mode="reduce-overhead") shortens the CPU side of each step.',
    """\
for i in range(max_new_tokens):
    logits = model(ids[:, -1:], past_key_values=cache, use_cache=True).logits
    nxt = logits[:, -1].argmax(-1, keepdim=True)
    ids = torch.cat([ids, nxt], dim=1)              # stays on the GPU
    if i % 16 == 15 and bool((nxt == eos_id).all()):  # one read-back every 16 tokens
        break""",
)

#: the inputs of an inference call are not a DataLoader's batches: pin a staging buffer
_PIN_FIX = Fix(
    "This is inference: pin the inputs once (a page-locked staging buffer) and copy with "
    ".to(device, non_blocking=True), so the copy overlaps the GPU's work instead of "
    "blocking the CPU. Copies before the first step (model.to(device)) are one-off.",
    """\
staging = torch.empty(shape, dtype=dtype, pin_memory=True)   # once
staging.copy_(inputs)                                         # each request
x = staging.to(device, non_blocking=True)""",
)

INFERENCE_FIXES: dict[str, Fix] = {
    "host_sync_per_step": _SYNC_FIX,
    "pageable_h2d_in_steps": _PIN_FIX,
}


#: the read-back a training step makes, and the one a decode step makes
_LOSS_READ = "a value read back (loss.item())"
_TOKEN_READ = "a value read back (the next token, or a stop check)"


def words(text: str) -> str:
    """`text` with "training step(s)"/"training loop" said of any loop."""
    return _TRAINING.sub(_any_loop, text).replace(_LOSS_READ, _TOKEN_READ)


def _any_loop(m: re.Match[str]) -> str:
    word = _ANY_LOOP.get(m.group(2), m.group(2))
    return word[0].upper() + word[1:] if m.group(1) == "T" else word


def snippet(code: str) -> str:
    """A training snippet's loss line as the forward pass of an inference call."""
    return _LOSS_LINE.sub(_FORWARD, code)


def for_inference(findings: list[Finding], facts: RunFacts | None) -> list[Finding]:
    """The findings as an inference run should read them (unchanged for training)."""
    if facts is None or not facts.inference:
        return findings
    for f in findings:
        f.title = words(f.title)
        f.message = words(f.message)
        fix = INFERENCE_FIXES.get(f.rule)
        f.fix = (
            fix
            if fix is not None
            else replace(f.fix, text=words(f.fix.text), snippet=snippet(f.fix.snippet))
        )
    return findings
