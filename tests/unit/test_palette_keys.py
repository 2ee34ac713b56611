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
