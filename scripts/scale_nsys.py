#!/usr/bin/env python3
"""Make a larger, schema-faithful Nsight Systems SQLite export by tiling a real one in time.

usage: python scripts/scale_nsys.py IN.sqlite OUT.sqlite --times N [--gap-ns G] [--verify]

What it does
  * OUT starts as a byte copy of IN: every table (StringIds, ENUM_*, TARGET_INFO_*,
    ThreadNames, ...) and every schema detail (column comments, page size) is kept.
  * For each activity table present (CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET,
    _RUNTIME, _SYNCHRONIZATION, _CUDA_EVENT, NVTX_EVENTS, OSRT_API) it appends N-1
    copies of the original rows. Copy k (1..N-1) has
      start/end            + k * span   (span = max(end) - min(start) over all tiled
                                          tables, plus --gap-ns), so tiles never overlap
                                          and each table stays sorted by start if IN was;
      correlationId        + k * C      (C = 1 + max correlationId over tiled tables) so
                                          runtime -> kernel/memcpy/memset/sync links stay
                                          one-to-one inside each tile and unique overall;
      gridId               + k * G      (kernel grid ids stay unique);
      rangeId              + k * R      (NVTX start/end range ids stay unique);
      eventSyncId          + k * E      (except NULL and the 0xFFFFFFFF "none" sentinel).
    Object ids (deviceId, contextId, streamId, globalPid/Tid, eventId, graphNodeId,
    callchainId) and every StringIds reference are kept, so names stay shared.
  * ANALYSIS_DETAILS.duration/stopTime are stretched by (N-1) * span.
  * Rows are appended tile by tile, so the file layout stays "one table after another,
    sorted by time", like an nsys export; no index is added (nsys adds none).
"""

import argparse
import os
import shutil
import sqlite3
import sys
import time

TILED = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
    "NVTX_EVENTS",
    "OSRT_API",
]
OFFSET_COLS = ("correlationId", "gridId", "rangeId", "eventSyncId")
SENTINEL = 0xFFFFFFFF


def q(name):
    return '"' + name.replace('"', '""') + '"'


def columns(con, schema, table):
    return [r[1] for r in con.execute(f"PRAGMA {schema}.table_info({q(table)})")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--times", type=int, required=True, help="N: the output holds N copies")
    ap.add_argument("--gap-ns", type=int, default=1_000_000, help="idle gap between tiles (ns)")
    ap.add_argument("--verify", action="store_true", help="check counts and runtime->kernel links")
    a = ap.parse_args(argv)
    if a.times < 1:
        ap.error("--times must be >= 1")
    t0 = time.perf_counter()
    if os.path.exists(a.dst):
        os.remove(a.dst)
    shutil.copyfile(a.src, a.dst)
    con = sqlite3.connect(a.dst, isolation_level=None)
    for p in (
        "journal_mode=OFF",
        "synchronous=OFF",
        "locking_mode=EXCLUSIVE",
        "temp_store=MEMORY",
        "cache_size=-262144",
    ):
        con.execute(f"PRAGMA {p}")
    con.execute("ATTACH DATABASE ? AS src", (f"file:{os.path.abspath(a.src)}?mode=ro",))
    have = {r[0] for r in con.execute("SELECT name FROM src.sqlite_master WHERE type='table'")}
    tables = [t for t in TILED if t in have]

    # span over all tiled tables, and per-id-column offsets
    lo, hi = None, None
    maxid = {c: 0 for c in OFFSET_COLS}
    for t in tables:
        cols = columns(con, "src", t)
        if "start" in cols:
            mn, mx1 = con.execute(f"SELECT min(start), max(start) FROM src.{q(t)}").fetchone()
            mx2 = (
                con.execute(f'SELECT max("end") FROM src.{q(t)}').fetchone()[0]
                if "end" in cols
                else None
            )
            mx = (
                max(v for v in (mx1, mx2) if v is not None)
                if (mx1 is not None or mx2 is not None)
                else None
            )
            if mn is not None:
                lo = mn if lo is None else min(lo, mn)
                hi = mx if hi is None else max(hi, mx)
        for c in OFFSET_COLS:
            if c in cols:
                cond = f"WHERE {q(c)} < {SENTINEL}" if c == "eventSyncId" else ""
                v = con.execute(f"SELECT max({q(c)}) FROM src.{q(t)} {cond}").fetchone()[0]
                if v is not None:
                    maxid[c] = max(maxid[c], int(v))
    if lo is None:
        sys.exit("no timestamps in the tiled tables")
    span = hi - lo + a.gap_ns
    off = {c: maxid[c] + 1 for c in OFFSET_COLS}

    con.execute("CREATE TEMP TABLE tiles(k INTEGER PRIMARY KEY)")
    con.executemany("INSERT INTO temp.tiles VALUES (?)", [(k,) for k in range(1, a.times)])
    con.execute("BEGIN")
    for t in tables:
        cols = columns(con, "src", t)
        exprs = []
        for c in cols:
            qc = "o." + q(c)
            if c in ("start", "end"):
                exprs.append(f"{qc} + k * {span}")
            elif c == "eventSyncId":
                exprs.append(
                    f"CASE WHEN {qc} IS NULL OR {qc} >= {SENTINEL} THEN {qc} "
                    f"ELSE {qc} + k * {off[c]} END"
                )
            elif c in off:
                exprs.append(f"{qc} + k * {off[c]}")
            else:
                exprs.append(qc)
        con.execute(
            f"INSERT INTO main.{q(t)} ({', '.join(q(c) for c in cols)}) "
            f"SELECT {', '.join(exprs)} FROM temp.tiles CROSS JOIN src.{q(t)} AS o "
            f"ORDER BY k, o.rowid"
        )
    if "ANALYSIS_DETAILS" in have:
        ext = (a.times - 1) * span
        con.execute(
            f"UPDATE main.ANALYSIS_DETAILS SET duration = duration + {ext}, "
            f"stopTime = stopTime + {ext}"
        )
    con.execute("COMMIT")

    counts = {}
    for t in tables:
        n_src = con.execute(f"SELECT count(*) FROM src.{q(t)}").fetchone()[0]
        n_dst = con.execute(f"SELECT count(*) FROM main.{q(t)}").fetchone()[0]
        counts[t] = n_dst
        assert n_dst == n_src * a.times, (t, n_src, n_dst)
    if a.verify:
        k = "CUPTI_ACTIVITY_KIND_KERNEL"
        r = "CUPTI_ACTIVITY_KIND_RUNTIME"
        if k in tables and r in tables:

            def linked(s):  # runtime correlationIds are unique (checked), so a join counts links
                return (
                    con.execute(
                        f"SELECT count(*) FROM {s}.{k} AS x JOIN {s}.{r} AS y USING(correlationId)"
                    ).fetchone()[0]
                    if a.times <= 64
                    else None
                )

            s_l = linked("src")
            d_u = con.execute(f"SELECT count(DISTINCT correlationId) FROM main.{r}").fetchone()[0]
            s_u = con.execute(f"SELECT count(DISTINCT correlationId) FROM src.{r}").fetchone()[0]
            assert d_u == s_u * a.times, ("runtime correlationIds not unique", s_u, d_u)
            d_l = linked("main")
            if d_l is not None:
                assert d_l == s_l * a.times, ("kernel->runtime links", s_l, d_l)
            print(
                f"verify: runtime correlationIds unique ({d_u}); kernel->runtime links "
                f"{f'x{a.times} ok' if d_l is not None else 'not joined (N>64)'}"
            )
    con.execute("DETACH DATABASE src")
    con.close()
    dt = time.perf_counter() - t0
    size = os.path.getsize(a.dst)
    print(
        f"{a.dst}: {size / 1e6:.1f} MB, {a.times} tiles, span {span / 1e9:.3f} s/tile, {dt:.1f} s"
    )
    for t, n in counts.items():
        print(f"  {t:40s} {n:>12,d}")


if __name__ == "__main__":
    main()
