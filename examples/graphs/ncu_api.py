"""List the API shape of an ncu_report module: its classes, their public methods, and
what real objects loaded from a report expose.

usage: python ncu_api.py REPORT.ncu-rep OUT.json [MODULE_DIR]
MODULE_DIR (e.g. <nsight-compute>/extras/python) is put first on sys.path, so the
ncu_report found there wins over an installed one. Writes facts only (names, types,
counts), never the module's source.
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

PROBES = [
    "sections",
    "section_by_name",
    "section_names",
    "rule_results",
    "rule_results_as_dicts",
    "rule_result_by_name",
    "source_info",
    "nvtx_state",
    "name",
    "metric_names",
    "metric_by_name",
    "source_files",
    "sass_by_pc",
    "ptx_by_pc",
    "source_markers",
    "timelines",
    "workload_type",
    "get_name",
    "num_ranges",
    "num_actions",
    "range_by_idx",
    "action_by_idx",
    "actions_by_nvtx",
    "ranges",
    "actions",
    "metrics",
    "rules",
    "rule_names",
    "focus_metrics",
    "messages",
    "speedup",
    "speedup_type",
    "result_tables",
    "body",
    "description",
    "identifier",
    "rule_identifier",
    "section_identifier",
    "file_name",
    "line",
    "kind",
    "value",
    "as_string",
]


def public(obj: Any) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_") and n != "this")


def call0(obj: Any, name: str) -> dict[str, Any]:
    f = getattr(obj, name, None)
    if f is None:
        return {"present": False}
    out: dict[str, Any] = {"present": True, "callable": callable(f)}
    if not callable(f):
        out["type"] = type(f).__name__
        return out
    try:
        sig = str(inspect.signature(f))
    except (TypeError, ValueError):
        sig = "?"
    out["signature"] = sig
    try:
        v = f()
    except Exception as e:
        out["call0_error"] = f"{type(e).__name__}: {str(e)[:120]}"
        return out
    out["type"] = type(v).__name__
    try:
        out["len"] = len(v)
        first = next(iter(v), None)
        if first is not None:
            out["item_type"] = type(first).__name__
            if isinstance(v, dict):
                out["item_type"] = type(v[first]).__name__
                out["first_key"] = str(first)[:80]
    except TypeError:
        out["repr"] = repr(v)[:120]
    return out


def describe(obj: Any) -> dict[str, Any]:
    return {
        "type": type(obj).__name__,
        "dir": public(obj),
        "probes": {p: call0(obj, p) for p in PROBES if hasattr(obj, p)},
    }


def module_classes(mod: Any) -> dict[str, list[str]]:
    out = {}
    for name, cls in inspect.getmembers(mod, inspect.isclass):
        if name.startswith("_") or cls.__module__ != mod.__name__:
            continue
        out[name] = [n for n in public(cls) if callable(getattr(cls, n, None))]
    return out


def first_items(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, dict):
        return list(x.values())[:1]
    try:
        return list(x)[:1]
    except TypeError:
        return [x]


def main() -> None:
    rep, out_path = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        sys.path.insert(0, sys.argv[3])
    import ncu_report as mod

    facts: dict[str, Any] = {
        "module_file": mod.__file__,
        "module_dir_public": public(mod),
        "version_attrs": {
            k: str(v)
            for k in dir(mod)
            if "version" in k.lower() and not callable(v := getattr(mod, k))
        },
        "classes": module_classes(mod),
    }
    ctx = mod.load_report(rep)
    facts["IContext"] = describe(ctx)
    rng = ctx.range_by_idx(0)
    facts["IRange"] = describe(rng)
    act = rng.action_by_idx(0)
    facts["IAction"] = describe(act)
    names = list(act.metric_names())
    facts["metric_count"] = len(names)
    facts["IMetric"] = describe(act.metric_by_name(names[0]))
    facts["IMetric_name"] = names[0]
    for getter in ("sections", "rule_results", "source_info", "nvtx_state", "source_files"):
        f = getattr(act, getter, None)
        if not callable(f):
            continue
        try:
            items = first_items(f())
        except Exception as e:
            facts[f"via_{getter}"] = f"error {type(e).__name__}: {e}"
            continue
        if items:
            facts[f"via_{getter}"] = describe(items[0])
            sub = items[0]
            for deeper in ("rule_results", "messages", "focus_metrics", "result_tables"):
                g = getattr(sub, deeper, None)
                if callable(g):
                    try:
                        its = first_items(g())
                    except Exception as e:
                        facts[f"via_{getter}_{deeper}"] = f"error {type(e).__name__}: {e}"
                        continue
                    if its:
                        facts[f"via_{getter}_{deeper}"] = describe(its[0])
    with open(out_path, "w") as fh:
        json.dump(facts, fh, indent=1, sort_keys=True)
    print("wrote", out_path, "classes:", len(facts["classes"]), "metrics:", len(names))


if __name__ == "__main__":
    main()
