"""Write tuiperf/load/ncu/labels.json: which section and label ncu shows each metric under.

ncu's `--page raw` CSV names metrics by id only (`gpu__time_duration.sum`); its details page
shows them under a section with a label ("GPU Speed Of Light Throughput" / "Duration").
That mapping lives in ncu's section files, which the PyPI `ncu-report` reader applies to a
report. This script reads real reports with that reader and keeps, per metric id, the
sections (id, display name, order) and labels of its header items, plus the items the
2025.x CLI prints differently (tuiperf.load.ncu.rep._CLI_HEADER_ITEMS).

usage: .venv/bin/python scripts/ncu_labels.py REPORT.ncu-rep[.xz] ...
"""

from __future__ import annotations

import json
import lzma
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tuiperf.load.ncu.rep import _CLI_HEADER_ITEMS, actions, open_context  # noqa: E402

OUT = REPO / "tuiperf" / "load" / "ncu" / "labels.json"


def _open(path: Path, tmp: Path) -> Any:
    if path.suffix == ".xz":
        plain = tmp / path.stem
        plain.write_bytes(lzma.decompress(path.read_bytes()))
        path = plain
    return open_context(path)


def collect(paths: list[Path]) -> dict[str, Any]:
    sections: dict[str, dict[str, Any]] = {}
    metrics: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            for a in actions(_open(path, Path(tmp))):
                for s in a.sections():
                    sid = s.identifier()
                    sections.setdefault(sid, {"name": s.name(), "order": s.order()})
                    for m in s.header_metrics():  # what the details page shows
                        place = [sid, m.label()] if m is not None and m.label() else None
                        if place and place not in metrics.setdefault(m.name(), []):
                            metrics[m.name()].append(place)
    for sid, items in _CLI_HEADER_ITEMS.items():
        for label, name, cli_name, _factor, _unit in items:
            if sid not in sections:
                continue
            for metric in (name, cli_name):  # the CLI's item replaces the reader's label
                others = [p for p in metrics.get(metric, []) if p != [sid, label]]
                metrics[metric] = [*others, [sid, label]]
    return {"sections": dict(sorted(sections.items())), "metrics": dict(sorted(metrics.items()))}


def main() -> int:
    paths = [Path(p) for p in sys.argv[1:]]
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    table = collect(paths)
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in table["metrics"].items())
    sections = json.dumps(table["sections"], sort_keys=True)
    OUT.write_text(f'{{"sections": {sections},\n "metrics": {{\n{lines}\n}}}}\n')
    print(f"wrote {OUT} ({len(table['metrics'])} metrics in {len(table['sections'])} sections)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
