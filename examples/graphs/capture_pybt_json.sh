#!/bin/bash
# Third pass: where do nsys 2025.3.1's Python backtrace frames go? The SQLite export keeps only
# their strings (StringIds), so export the same report with --include-json and as JSON/text too.
# usage (repository root, on the GPU machine): examples/graphs/capture_pybt_json.sh OUTDIR
set -u
OUTDIR=${1:?usage: capture_pybt_json.sh OUTDIR}
W=/tmp/pybt3 && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
timeout 120 "$NSYS" profile -t cuda,nvtx,osrt --cpuctxsw=none --sample=process-tree --cudabacktrace=all \
    --python-backtrace=cuda -f true -o "$W/pybt" python3 examples/graphs/programs.py pybt --steps 4 > "$P/log.txt" 2>&1
echo "profile rc=$?"
timeout 90 "$NSYS" export --type sqlite --include-json=true -f true -o "$P/pybt_json.sqlite" "$W/pybt.nsys-rep" >> "$P/log.txt" 2>&1
echo "sqlite rc=$?"
timeout 90 "$NSYS" export --type json -f true -o "$W/pybt.json" "$W/pybt.nsys-rep" >> "$P/log.txt" 2>&1
echo "json rc=$?"
timeout 90 "$NSYS" export --type text -f true -o "$W/pybt.txt" "$W/pybt.nsys-rep" >> "$P/log.txt" 2>&1
echo "text rc=$?"
ls -la "$W" "$P"
for f in "$W/pybt.json" "$W/pybt.txt"; do
    grep -n -i -m 20 -B 30 -A 30 'programs.py' "$f" > "$P/grep_$(basename "$f").txt" 2>&1
    grep -o -i '"[a-z]*python[a-z]*"\|[a-z_]*python[a-z_]*' "$f" | sort | uniq -c | sort -rn | head -40 > "$P/pynames_$(basename "$f").txt"
done
python3 - "$P/pybt_json.sqlite" > "$P/json_columns.txt" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for (t,) in c.execute("select name from sqlite_master where type='table'").fetchall():
    cols = [r[1] for r in c.execute(f'pragma table_info("{t}")')]
    for col in cols:
        if 'json' in col.lower():
            n = c.execute(f'select count(*) from "{t}" where "{col}" like ?', ('%programs.py%',)).fetchone()[0]
            print(t, col, 'rows naming programs.py:', n)
            for (v,) in c.execute(f'select "{col}" from "{t}" where "{col}" like ? limit 2', ('%programs.py%',)):
                print(str(v)[:3000])
PY
xz -9 "$P/pybt_json.sqlite"
xz -9 -c "$W/pybt.json" > "$P/pybt.json.xz"
tar cf "$OUTDIR/pybt3.tar" -C "$P" .
ls -la "$OUTDIR"
