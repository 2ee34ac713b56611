"""Write tuiperf/load/ncu/sections.json: the layout of ncu's sections, for readers without them.

`ncu_report` readers before 2026.3 (the PyPI packages 2025.3.1 and 2026.2.0, and the
`extras/python` module of an Nsight Compute 2025.x install) have no `IAction.sections()` and
no `IMetric.label()`: they give a kernel's metrics by name only. The reader of 2026.3 applies
ncu's section files and returns, per section, its id, display name, order, parent and the
metrics of its header and body with their labels. This script keeps that layout, read once
from real reports with such a reader, so that tuiperf can build the same sections from the
metrics of an older reader (tuiperf.load.ncu.layout). It also keeps the section lists seen
together (one per `--set`), which tells the sections with no metrics of their own (charts,
tables) when to show.

usage: .venv/bin/python scripts/ncu_sections.py REPORT.ncu-rep[.xz] ...
(the repository's full and basic reports: tests/data/ncu/vit_full.ncu-rep.xz,
tests/data/ncu/lstm_basic.ncu-rep.xz, tests/data/ncu_api/small_2025_3_1.ncu-rep.xz)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ncu_labels import _open  # noqa: E402  (scripts/ is the script's own folder)

from tuiperf.load.ncu.rep import actions  # noqa: E402

OUT = REPO / "tuiperf" / "load" / "ncu" / "sections.json"


def _items(metrics: Any) -> list[list[str]]:
    return [[m.name(), m.label() or ""] for m in metrics if m is not None]


def _section(s: Any) -> dict[str, Any]:
    return {
        "name": s.name(),
        "order": s.order(),
        "parent": s.parent_identifier() or "",
        "header": _items(s.header_metrics()),
        "body": _items(s.body_metrics()),
    }


def collect(paths: list[Path]) -> dict[str, Any]:
    sections: dict[str, dict[str, Any]] = {}
    sets: list[list[str]] = []
    version = ""
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            ctx = _open(path, Path(tmp))
            version = ctx.get_version()
            for a in actions(ctx):
                if not hasattr(a, "sections"):
                    raise SystemExit(f"the ncu_report reader {version} has no IAction.sections()")
                ids = []
                for s in a.sections():
                    sid, layout = s.identifier(), _section(s)
                    if sections.setdefault(sid, layout) != layout:
                        raise SystemExit(f"{path}: section {sid} differs between kernels")
                    ids.append(sid)
                if sorted(ids) not in sets:
                    sets.append(sorted(ids))
    return {
        "reader": version,
        "reports": [p.name for p in paths],
        "sections": dict(sorted(sections.items())),
        "sets": sorted(sets, key=len, reverse=True),
    }


def main() -> int:
    paths = [Path(p) for p in sys.argv[1:]]
    if not paths:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    table = collect(paths)
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in table["sections"].items())
    head = {k: table[k] for k in ("reader", "reports", "sets")}
    OUT.write_text(json.dumps(head)[:-1] + f', "sections": {{\n{lines}\n}}}}\n')
    json.loads(OUT.read_text())
    print(f"wrote {OUT} ({len(table['sections'])} sections, {len(table['sets'])} sets)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
