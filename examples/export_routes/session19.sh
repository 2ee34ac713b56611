#!/bin/bash
# Issue 37 (2026-12-06, fourth session, last call): the first `summary` of a fresh
# .nsys-rep against `nsys export` alone, two arms alternating their order each round (more
# rounds than pass 11's five: the export alone varies by seconds between VMs), and what
# tuiperf adds after nsys ends, this tree against BEFORE (d42da43).
# usage (repository root; .debs/, .whl/, BEFORE carried): session19.sh OUTDIR BEFORE [BUDGET]
set -u
OUTDIR=${1:?usage}; BEFORE=$(realpath "${2:?usage}"); BUDGET=${3:-400}
W=/tmp/s19 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
DIRS=$(python3 -c "import os, numpy, pyarrow; print(os.path.dirname(numpy.__file__), os.path.dirname(pyarrow.__file__))")
python3 -m compileall -q -j0 tuiperf "$BEFORE/tuiperf" /tmp/site $DIRS > /dev/null
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > /dev/null 2>&1
ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
ROOT=$PWD
"$NSYS" export --type arrowdir --include-json=true -f true -o "$W/arrowdir" "$W/big.nsys-rep" > /dev/null 2>&1
timeout 100 python3 bench/after_nsys.py "$W/arrowdir" --tree this="$ROOT" --tree before="$BEFORE" \
    --rounds 10 --sleep 0.5 2>&1 | tee "$OUTDIR/after_nsys.txt"
rm -rf "$W/arrowdir"
echo "after nsys done at $SECONDS s"
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
arm() {
    rm -rf "$W/e" "$W/c"; sync; local a; a=$(ms)
    case $1 in
    export) "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e" "$W/big.nsys-rep" > /dev/null 2>&1 ;;
    this) TUIPERF_CACHE_DIR="$W/c" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out.txt" ;;
    esac
    echo "round $2 summary $1 rc=$? $(( $(ms) - a )) ms" | tee -a "$OUTDIR/summary.txt"
}
for i in $(seq 40); do
    (( SECONDS < BUDGET )) || break
    if (( i % 2 )); then arm export "$i"; arm this "$i"; else arm this "$i"; arm export "$i"; fi
done
python3 - "$OUTDIR/summary.txt" <<'PY'
import re, statistics, sys
r = {}
for line in open(sys.argv[1]):
    m = re.match(r"round (\d+) summary (\w+) rc=0 (\d+) ms", line)
    if m:
        r.setdefault(int(m[1]), {})[m[2]] = int(m[3])
q = [v["this"] / v["export"] for v in r.values() if len(v) == 2]
print(f"{len(q)} rounds: summary / export alone median {statistics.median(q):.3f}x "
      f"({min(q):.3f}-{max(q):.3f}); export median {statistics.median(v['export'] for v in r.values())} ms")
PY
echo "done at $SECONDS s"
