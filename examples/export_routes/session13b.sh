#!/bin/bash
# Issue 37 (2026-12-06): where the first screen from the cache goes on the GPU machine
# (1.0 s there, 0.33 s on the 2-core VM): phases.py in tmux, this tree and OLD_TREE
# alternating, 5 runs each; the viewer's import under -X importtime, by package.
# usage (repository root; .debs/, .whl/, OLD_TREE carried): session13b.sh OUTDIR OLD_TREE
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}
W=/tmp/s13 && mkdir -p "$W" "$OUTDIR"
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
command -v tmux > /dev/null || export PATH=$PATH:/tmp/dw/usr/bin
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
python3 -m compileall -q tuiperf "$OLD/tuiperf" /tmp/site > /dev/null
python3 -V; tmux -V
if [ ! -f "$W/big.nsys-rep" ]; then
    timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
        python3 examples/export_routes/many_kernels.py --kernels 1000000 > /dev/null 2>&1
fi
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
        tmux new-session -d -s ph -x 160 -y 48 "cd $tree && LANG=C.UTF-8 python3 $ROOT/examples/export_routes/phases.py $out $W/big.nsys-rep --cache-dir $W/ph-$(basename "$tree")"
        for _ in $(seq 100); do sleep 0.1; [ "$(cat "$out" 2>/dev/null | wc -l)" -gt "$n" ] && break; done
        sleep 0.3; tmux kill-server 2>/dev/null
    done
done
for f in "$OUTDIR"/phases-*.txt; do echo "== $f"; cat "$f"; done
t0=$(date +%s%N); python3 -c pass; echo "python3 -c pass: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
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
