"""Lane control (issue 34 item 4): which lanes the timeline hides, pins to the top, in what
order, and which groups are folded; remembered per report.

The lanes themselves (`model.timeline.lanes.LaneSet`) are never changed: `arrange` builds
another LaneSet over the same lanes (same indices) with the groups the layout asks for:

* `Pinned` first, the pinned lanes in the order they were pinned;
* each group of the report without its hidden, pinned and bundled lanes, in the user's order
  (lanes moved with shift+up/down first as ordered, the rest as the report lists them);
* after a process group, its **bundles**: OS runtime lanes of BUNDLE_MIN or more threads of
  that process (the main thread left out) that spend most of their calls in the same
  function, one group each (`python3 (718) · 20 threads: OS runtime pthread_cond_wait`),
  folded unless the user unfolded it: twenty DataLoader threads waiting in
  pthread_cond_wait take one row.

A lane is named by its key (`osrt/718/733`), the same from one opening of a report to the
next. The layout is saved as JSON, one file per report (the report's absolute path, hashed)
in the user's config folder (`tuiperf.settings.config_dir`), written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tuiperf import settings
from tuiperf.model.timeline.lanes import Group, Lane, LaneSet

PINNED = "pinned"
#: OS runtime lanes of at least this many threads with the same main call form a bundle
BUNDLE_MIN = 3
#: a lane's main call: the function of at least this share of its calls
MAIN_CALL_SHARE = 0.5


def lane_id(lane: Lane) -> str:
    return "/".join("" if k is None else str(k) for k in lane.key)


@dataclass
class Layout:
    hidden: list[str] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)
    #: group key -> lane ids in the user's order
    order: dict[str, list[str]] = field(default_factory=dict)
    #: group key -> folded (True) or unfolded (False), where the user chose
    folded: dict[str, bool] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"hidden": self.hidden, "pinned": self.pinned, "order": self.order,
                "folded": self.folded}  # fmt: skip

    @classmethod
    def from_json(cls, data: object) -> Layout:
        """A layout from its JSON; anything malformed is left out (a default layout)."""
        if not isinstance(data, dict):
            return cls()

        def strs(v: object) -> list[str]:
            return [s for s in v if isinstance(s, str)] if isinstance(v, list) else []

        order = data.get("order")
        folded = data.get("folded")
        return cls(
            strs(data.get("hidden")),
            strs(data.get("pinned")),
            {k: strs(v) for k, v in order.items()} if isinstance(order, dict) else {},
            {k: v for k, v in folded.items() if isinstance(v, bool)}
            if isinstance(folded, dict)
            else {},
        )


# --- arranging ------------------------------------------------------------------------


#: calls of a lane read to find its main call (evenly spaced over the lane)
SAMPLE = 2000


def main_call(lane: Lane) -> str | None:
    """The function most of an OS runtime lane's calls are in, or None."""
    n = len(lane.iv)
    if lane.kind != "osrt" or n == 0:
        return None
    rows = lane.iv.rows if n <= SAMPLE else lane.iv.rows[:: -(-n // SAMPLE)]
    name, k = Counter(lane.names.names(rows)).most_common(1)[0]
    return name if k >= MAIN_CALL_SHARE * len(rows) else None


def bundles(base: LaneSet) -> dict[str, list[Group]]:
    """Per process group key, its bundles of OS runtime lanes (see the module's text)."""
    out: dict[str, list[Group]] = {}
    for g in base.groups:
        by_call: dict[str, list[int]] = {}
        for li in g.lanes:
            lane = base.lanes[li]
            if lane.place.get("tid") == lane.place.get("pid"):
                continue  # the main thread stays in view
            call = main_call(lane)
            if call is not None:
                by_call.setdefault(call, []).append(li)
        found = [
            Group(f"{g.key}:osrt:{call}", f"{g.label} · {len(lis)} threads: OS runtime {call}", lis)
            for call, lis in by_call.items()
            if len(lis) >= BUNDLE_MIN
        ]
        if found:
            out[g.key] = found
    return out


def arrange(
    base: LaneSet, layout: Layout, found: dict[str, list[Group]] | None = None
) -> tuple[LaneSet, set[int]]:
    """The lane set the layout shows, and the indices of its folded groups. `found`: the
    bundles of `base` (computed when not given)."""
    found = bundles(base) if found is None else found
    ids = [lane_id(lane) for lane in base.lanes]
    index = {i: li for li, i in enumerate(ids)}
    hidden, pinned = set(layout.hidden), [index[p] for p in layout.pinned if p in index]
    taken = hidden | {ids[li] for li in pinned}
    groups: list[Group] = []
    defaults: list[bool] = []
    if pinned:
        groups.append(Group(PINNED, "Pinned", [li for li in pinned if ids[li] not in hidden]))
        defaults.append(False)
    for g in base.groups:
        bundled = {li for b in found.get(g.key, []) for li in b.lanes}
        keep = [li for li in g.lanes if ids[li] not in taken and li not in bundled]
        groups.append(Group(g.key, g.label, _ordered(keep, layout.order.get(g.key), ids)))
        defaults.append(False)
        for b in found.get(g.key, []):
            lanes = [li for li in b.lanes if ids[li] not in taken]
            groups.append(Group(b.key, b.label, _ordered(lanes, layout.order.get(b.key), ids)))
            defaults.append(True)
    shown = [(g, d) for g, d in zip(groups, defaults, strict=True) if g.lanes]
    folded = {i for i, (g, d) in enumerate(shown) if layout.folded.get(g.key, d)}
    out = LaneSet([g for g, _ in shown], base.lanes, base.lo, base.hi, base.by_key)
    return out, folded


def _ordered(lanes: list[int], order: list[str] | None, ids: list[str]) -> list[int]:
    if not order:
        return lanes
    rank = {i: k for k, i in enumerate(order)}
    return sorted(lanes, key=lambda li: (ids[li] not in rank, rank.get(ids[li], 0)))


# --- changing it ----------------------------------------------------------------------


def hide(layout: Layout, lane: Lane) -> None:
    i = lane_id(lane)
    if i not in layout.hidden:
        layout.hidden.append(i)


def unhide(layout: Layout, lane: Lane | None = None) -> bool:
    """Show `lane` again (every hidden lane when None); False when nothing was hidden."""
    if lane is None:
        had = bool(layout.hidden)
        layout.hidden.clear()
        return had
    i = lane_id(lane)
    if i in layout.hidden:
        layout.hidden.remove(i)
        return True
    return False


def toggle_pin(layout: Layout, lane: Lane) -> bool:
    """Pin the lane (True) or unpin it (False)."""
    i = lane_id(lane)
    if i in layout.pinned:
        layout.pinned.remove(i)
        return False
    layout.pinned.append(i)
    return True


def move(layout: Layout, shown: LaneSet, group: int, lane: int, delta: int) -> bool:
    """Move lane index `lane` by `delta` places inside group `group` of the shown set."""
    g = shown.groups[group]
    lanes = list(g.lanes)
    at = lanes.index(lane)
    to = at + delta
    if not 0 <= to < len(lanes):
        return False
    lanes[at], lanes[to] = lanes[to], lanes[at]
    ids = [lane_id(shown.lanes[li]) for li in lanes]
    if g.key == PINNED:
        layout.pinned = ids + [p for p in layout.pinned if p not in ids]
    else:
        layout.order[g.key] = ids
    return True


# --- remembering it -------------------------------------------------------------------


def layout_path(report: str) -> Path | None:
    """Where the layout of `report` (its path) is kept; None without a config folder."""
    folder = settings.config_dir()
    if folder is None or not report:
        return None
    digest = hashlib.sha256(str(Path(report).resolve()).encode()).hexdigest()[:24]
    return folder / "layouts" / f"{digest}.json"


def load(report: str) -> Layout:
    path = layout_path(report)
    if path is None:
        return Layout()
    try:
        return Layout.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return Layout()  # none yet, or unreadable: the default layout


def save(report: str, layout: Layout) -> bool:
    """Write the layout atomically (a temporary file renamed); False when it could not be."""
    path = layout_path(report)
    if path is None:
        return False
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".layout-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"report": str(report), **layout.to_json()}, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False
    return True
