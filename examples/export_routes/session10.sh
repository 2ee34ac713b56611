#!/bin/bash
# Issue 37 (2026-12-05, second session): where the first timeline screen from the cache of a
# real 1.1M-kernel capture spends its ~1.1 s on the GPU machine (0.37 s on the 2-core VM):
# interpreter and import times, open + lane index + first frame, the headless app under
# cProfile; and the capture's SQLite export brought back (xz, in 15 MB parts) to work on here.
# usage (repository root, GPU machine; .debs/ and .whl/ carried):  session10.sh OUTDIR
set -u
OUTDIR=${1:?usage}
W=/tmp/s10 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
python3 -m compileall -q tuiperf /tmp/site > /dev/null
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > "$W/log_profile.txt" 2>&1
echo "profile rc=$?"; ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
t=$SECONDS; "$NSYS" export --type sqlite -f true -o "$W/big.sqlite" "$W/big.nsys-rep" > /dev/null 2>&1
echo "sqlite export rc=$? $((SECONDS - t)) s"; ls -la "$W/big.sqlite"
xz -T16 -6 -c "$W/big.sqlite" > "$W/big.sqlite.xz"; ls -la "$W/big.sqlite.xz"
[ "$(stat -c %s "$W/big.sqlite.xz")" -lt 60000000 ] && split -b 15000000 -d "$W/big.sqlite.xz" "$OUTDIR/big_sqlite_xz."
C=$W/cache
python3 -c "import sys; sys.path.insert(0, 'bench'); from scale import keep_lane_index; from pathlib import Path; keep_lane_index(Path('$W/big.nsys-rep'), '$C')"
for i in 1 2 3; do
  TIMEFORMAT="python -c pass: %R s"; time python3 -c pass
  TIMEFORMAT="import tuiperf.tui.app: %R s"; time python3 -c "import tuiperf.tui.app"
  python3 -c "import sys; sys.path.insert(0, 'bench'); from bench_timeline import first_screen_model, first_screen_app; from pathlib import Path; r, c = Path('$W/big.nsys-rep'), Path('$C'); print('open+index+frame', round(first_screen_model(r, c), 3), 'app headless', round(first_screen_app(r, c), 3))"
done
for i in 1 2; do rm -rf "$W/c2"; TIMEFORMAT="summary of the sqlite, empty cache: %R s"; time python3 -m tuiperf summary "$W/big.sqlite" --cache-dir "$W/c2" > /dev/null; done
python3 -X importtime -c "import tuiperf.tui.app" 2> "$W/imp.txt"; sort -t'|' -k2 -n -r "$W/imp.txt" | head -40 > "$OUTDIR/importtime_top.txt"
python3 - "$W/big.nsys-rep" "$C" "$OUTDIR/cprofile.txt" <<'PY'
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
ls -la "$OUTDIR"
