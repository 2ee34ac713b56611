#!/bin/bash
# Issue 37 (2026-12-06): the first timeline screen from the cache of a real 1.1M-kernel
# capture on the GPU machine, this tree against the one before the cache entry was made
# smaller (.old/: `git archive` of that commit's tuiperf and bench helpers), interleaved:
# open + lane index + first frame, and the headless app; both trees' cold `summary` of the
# capture's SQLite export (the conversion alone) and their cache entries' size; import
# times and the app under cProfile; the SQLite export brought back (xz, 15 MB parts).
# usage (repository root, GPU machine; .debs/, .whl/ and .old/ carried):  session11.sh OUTDIR
set -u
OUTDIR=${1:?usage}
W=/tmp/s11 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
python3 -m compileall -q tuiperf .old/tuiperf /tmp/site > /dev/null
nproc; python3 -c "import pyarrow, numpy; print('pyarrow', pyarrow.__version__, 'numpy', numpy.__version__)"
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > "$W/log_profile.txt" 2>&1
echo "profile rc=$?"; ls -la "$W/big.nsys-rep" || exit 1
t=$SECONDS; "$NSYS" export --type sqlite -f true -o "$W/big.sqlite" "$W/big.nsys-rep" > /dev/null 2>&1
echo "sqlite export rc=$? $((SECONDS - t)) s"; ls -la "$W/big.sqlite"
python3 - "$W" <<'PY'
import resource, statistics, subprocess, sys, time
from pathlib import Path
W = Path(sys.argv[1]); rep = W / "big.nsys-rep"; db = W / "big.sqlite"
trees = {"new": Path.cwd(), "old": Path.cwd() / ".old"}
def cold(tree, cache):
    code = ("import sys, time, resource; t0 = time.perf_counter(); from tuiperf.cli import main; "
            "rc = main(['summary', sys.argv[1], '--cache-dir', sys.argv[2], '-q', '-r', 'kern', '--top', '3']); "
            "print('@', time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(db), str(cache)], cwd=tree, capture_output=True, text=True)
    line = [l for l in out.stderr.splitlines() if l.startswith("@")]
    return line[0] if line else out.stderr[-300:]
for i in range(2):
    for k, tree in (trees.items() if i == 0 else reversed(list(trees.items()))):
        c = W / f"cold-{k}-{i}"
        print(f"cold summary of the SQLite, {k}: {cold(tree, c)}  entry {subprocess.run(['du', '-sb', str(c)], capture_output=True, text=True).stdout.split()[0]} B  (sqlite {db.stat().st_size} B)")
for k, tree in trees.items():
    code = ("import sys; from pathlib import Path; from tuiperf.load.open import OpenOptions, open_trace; "
            "from tuiperf.model.timeline.lanes import build_lanes; "
            "build_lanes(open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2]))))")
    subprocess.run([sys.executable, "-c", code, str(rep), str(W / ('c-' + k))], cwd=tree, check=False)
    print(k, "entry of the .nsys-rep with its lane index", subprocess.run(['du', '-sb', str(W / ('c-' + k))], capture_output=True, text=True).stdout.split()[0], "B; report", rep.stat().st_size, "B")
res = {k: {"model": [], "app": []} for k in trees}
for i in range(6):
    for k, tree in (trees.items() if i % 2 == 0 else reversed(list(trees.items()))):
        code = ("import sys; sys.path.insert(0, 'bench'); from bench_timeline import first_screen_model, first_screen_app; from pathlib import Path; "
                f"r, c = Path({str(rep)!r}), Path({str(W / ('c-' + k))!r}); print(first_screen_model(r, c), first_screen_app(r, c))")
        out = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True)
        try:
            m, a = (float(x) for x in out.stdout.split())
        except ValueError:
            print(k, "failed", out.stderr[-800:]); continue
        res[k]["model"].append(m); res[k]["app"].append(a)
for k in trees:
    for what, v in res[k].items():
        if v:
            print(f"{k} first screen from cache ({what}): median {statistics.median(v):.3f} s, runs {[round(x, 3) for x in v]}")
PY
for i in 1 2; do
  TIMEFORMAT="python -c pass: %R s"; time python3 -c pass
  TIMEFORMAT="import tuiperf.tui.app: %R s"; time python3 -c "import tuiperf.tui.app"
done
python3 -X importtime -c "import tuiperf.tui.app" 2> "$W/imp.txt"; sort -t'|' -k2 -n -r "$W/imp.txt" | head -40 > "$OUTDIR/importtime_top.txt"
python3 - "$W/big.nsys-rep" "$W/c-new" "$OUTDIR/cprofile.txt" <<'PY'
import asyncio, cProfile, io, pstats, sys, time
from pathlib import Path
pr = cProfile.Profile(); pr.enable(); t0 = time.perf_counter()
from tuiperf.load.open import OpenOptions
from tuiperf.tui.app import TuiperfApp
async def main():
    app = TuiperfApp(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2])))
    async with app.run_test(size=(160, 48)) as pilot:
        while app.loading:
            await pilot.pause(0.01)
        await pilot.pause()
        print("headless app under cProfile", time.perf_counter() - t0)
asyncio.run(main()); pr.disable()
s = io.StringIO(); st = pstats.Stats(pr, stream=s); st.sort_stats("cumulative").print_stats(60)
st.sort_stats("tottime").print_stats(40); Path(sys.argv[3]).write_text(s.getvalue())
PY
xz -T16 -6 -c "$W/big.sqlite" > "$W/big.sqlite.xz"; ls -la "$W/big.sqlite.xz"
[ "$(stat -c %s "$W/big.sqlite.xz")" -lt 60000000 ] && split -b 15000000 -d "$W/big.sqlite.xz" "$OUTDIR/big_sqlite_xz."
ls -la "$OUTDIR"
