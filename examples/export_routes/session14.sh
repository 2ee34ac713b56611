#!/bin/bash
# Issue 37 (2026-12-06, third session, second call): this tree against OLD_TREE (840c157,
# the session's start) on a fresh ~1.1M-kernel .nsys-rep:
# 1. where the first screen from the cache goes (phases.py in tmux, 5 runs a tree) and the
#    viewer's import by package; 2. the first screen in tmux (bench/first_screen.py);
# 3. what tuiperf adds after nsys ends (bench/after_nsys.py on nsys's own export);
# 4. the first `summary` / `nsys export` alone, the three arms' order rotated each round
#    (session9/13 always ran this tree right after the export).
# usage (repository root; .debs/, .whl/, OLD_TREE carried): session14.sh OUTDIR OLD [BUDGET]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; BUDGET=${3:-545}
W=/tmp/s14 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
command -v tmux > /dev/null || export PATH=$PATH:/tmp/dw/usr/bin
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
python3 -m compileall -q tuiperf "$OLD/tuiperf" /tmp/site > /dev/null
python3 -V; tmux -V; nproc
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > /dev/null 2>&1
ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
ROOT=$PWD
for tree in "$ROOT" "$OLD"; do
    (cd "$tree" && python3 -c "import sys; from pathlib import Path; from tuiperf.load.open import OpenOptions, open_trace; from tuiperf.model.timeline.lanes import build_lanes; build_lanes(open_trace(Path(sys.argv[1]), OpenOptions(cache_dir=Path(sys.argv[2]))))" "$W/big.nsys-rep" "$W/ph-$(basename "$tree")")
done
for i in 1 2 3 4 5; do
    for tree in "$ROOT" "$OLD"; do
        out="$OUTDIR/phases-$(basename "$tree").txt"; n=$(cat "$out" 2>/dev/null | wc -l)
        tmux kill-server 2>/dev/null
        tmux new-session -d -s ph -x 160 -y 48 "cd $tree && LANG=C.UTF-8 PYTHONPATH=$tree:$PYTHONPATH python3 $ROOT/examples/export_routes/phases.py $out $W/big.nsys-rep --cache-dir $W/ph-$(basename "$tree")"
        for _ in $(seq 100); do sleep 0.1; [ "$(cat "$out" 2>/dev/null | wc -l)" -gt "$n" ] && break; done
        sleep 0.3; tmux kill-server 2>/dev/null
    done
done
for f in "$OUTDIR"/phases-*.txt; do echo "== $f"; cat "$f"; done
python3 -X importtime -c "import tuiperf.tui.app" 2> "$OUTDIR/importtime.txt"
python3 - "$OUTDIR/importtime.txt" <<'PY'
import collections, re, sys
tot = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
    if m:
        tot[m[4].split(".")[0]] += int(m[1])
print("import tuiperf.tui.app, self time by package (ms):",
      [(k, round(v / 1000, 1)) for k, v in tot.most_common(14)], "total", round(sum(tot.values()) / 1000, 1))
PY
echo "phases done at $SECONDS s"
timeout 100 python3 bench/first_screen.py "$W/big.nsys-rep" --cache-dir "$W/fs" --rounds 8 \
    --poll 0.01 --tree this="$PWD" --tree old="$OLD" 2>&1 | tee "$OUTDIR/first_screen.txt"
echo "first screen done at $SECONDS s"
"$NSYS" export --type arrowdir --include-json=true -f true -o "$W/arrowdir" "$W/big.nsys-rep" > /dev/null 2>&1
timeout 100 python3 bench/after_nsys.py "$W/arrowdir" --tree this="$PWD" --tree old="$OLD" \
    --rounds 10 --sleep 0.5 2>&1 | tee "$OUTDIR/after_nsys.txt"
echo "after nsys done at $SECONDS s"
rm -rf "$W/arrowdir" "$W/fs" "$W"/ph-*
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
arm() {
    rm -rf "$W/e" "$W/c"; sync; local a; a=$(ms)
    case $1 in
    export) "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e" "$W/big.nsys-rep" > /dev/null 2>&1 ;;
    new) (cd "$ROOT" && TUIPERF_CACHE_DIR="$W/c" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out_new.txt") ;;
    old) (cd "$OLD" && TUIPERF_CACHE_DIR="$W/c" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out_old.txt") ;;
    esac
    echo "round $2 summary $1 rc=$? $(( $(ms) - a )) ms" | tee -a "$OUTDIR/summary.txt"
}
orders=("export new old" "old export new" "new old export")
for i in $(seq 30); do
    (( SECONDS < BUDGET )) || break
    for a in ${orders[$(( (i - 1) % 3 ))]}; do arm "$a" "$i"; done
done
cmp "$W/out_new.txt" "$W/out_old.txt" && echo "summary: same output" | tee -a "$OUTDIR/summary.txt"
ls -la "$OUTDIR"
