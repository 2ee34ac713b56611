"""Build an nsys-like arrowdir export (one Arrow IPC stream per table) from an nsys SQLite
export, for bench/after_nsys.py on a machine without nsys: each column's type from a real
arrowdir export where that has the table (nsys's unsigned widths), else int64, double or
large_string.

usage: python bench/sqlite_to_arrowdir.py REPORT.sqlite TEMPLATE_ARROWDIR OUT
(TEMPLATE_ARROWDIR: e.g. ../shared/fixtures/nsys/cnn_osrt_arrowdir)
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

_BATCH = 200_000


def column(values: list, typ: pa.DataType) -> pa.Array:
    if pa.types.is_unsigned_integer(typ):  # SQLite keeps them as signed 64-bit
        return pa.array(values, pa.int64()).cast(typ, safe=False)
    if pa.types.is_boolean(typ):
        return pa.array([None if v is None else bool(v) for v in values], typ)
    return pa.array(values, typ)


def schema_of(con: sqlite3.Connection, table: str, template: Path) -> pa.Schema:
    known = None
    if (template / f"{table}.arrow").exists():
        with ipc.open_stream(template / f"{table}.arrow") as r:
            known = r.schema
    fields = []
    for _, name, decl, *_ in con.execute(f"pragma table_info('{table}')"):
        if known is not None and name in known.names:
            fields.append(known.field(name))
        elif "INT" in decl.upper():
            fields.append(pa.field(name, pa.int64()))
        elif "REAL" in decl.upper():
            fields.append(pa.field(name, pa.float64()))
        else:
            fields.append(pa.field(name, pa.large_string()))
    return pa.schema(fields, metadata={"table_name": table})


def main() -> None:
    src, template, out = (Path(a) for a in sys.argv[1:4])
    out.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(src)
    tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
    for table in tables:
        schema = schema_of(con, table, template)
        cur = con.execute(f"select * from '{table}'")
        with ipc.new_stream(out / f"{table}.arrow", schema) as w:
            while rows := cur.fetchmany(_BATCH):
                arrays = [column([r[i] for r in rows], f.type) for i, f in enumerate(schema)]
                w.write_batch(pa.record_batch(arrays, schema=schema))
    print(f"{len(tables)} tables into {out}")


if __name__ == "__main__":
    main()
