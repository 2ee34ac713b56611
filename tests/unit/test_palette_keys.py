"""The command palette names the keys of each entry, not the pair the footer groups."""

from __future__ import annotations

from tuiperf.tui.actions import REGISTRY


def test_palette_hints_are_each_entrys_own_keys() -> None:
    by_id = {k.id: k for k in REGISTRY}
    assert by_id["timeline.next_event"].palette_hint == "key: ."  # the footer shows ". ,"
    assert by_id["timeline.prev_event"].palette_hint == "key: ,"
    assert "]" not in by_id["timeline.mark_start"].palette_hint.split()
    for k in REGISTRY:
        if k.palette_name is None:
            continue
        own = set(k.own_key_text.split()) | {
            f"^{key[5:]}" for key in k.keys.split(",") if key.startswith("ctrl+")
        }
        hint = k.palette_hint.removeprefix("key: ")
        assert set(hint.split()) <= own, (k.id, hint, own)


def test_status_line_fits_narrow_panes() -> None:
    """At 100x30 with the details panel open the status line was cut mid-hint."""
    from tuiperf.tui.widgets.status import fit_status

    args = ("14–186 ms · 4.0 ms/col", "stream 7 kernels", "", "? help · q quit", " │ ")
    assert fit_status(*args, 200) == "14–186 ms · 4.0 ms/col │ stream 7 kernels │ ? help · q quit"
    assert fit_status(*args, 50) == "14–186 ms · 4.0 ms/col │ stream 7 kernels"
    short = fit_status(*args, 35)
    assert short.startswith("14–186 ms · 4.0 ms/col │ stream") and short.endswith("…")
    assert len(short) <= 35
    marked = fit_status("0–1 s", "python3 CUDA API", "range 12 ms", "? help", " | ", 30, "~")
    assert marked.endswith("range 12 ms") and len(marked) <= 30 and "~" in marked
