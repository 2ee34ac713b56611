#!/bin/bash
# Issue 37 (2026-12-05): a fresh ~1.1M-kernel .nsys-rep opened by this tree and by OLD_TREE
# (the session's start), interleaved with `nsys export --type arrowdir` alone: the viewer's
# first screen (ahead_tui.py, tmux) and the first open of `summary`.
# usage (repository root, GPU machine; .debs/, .whl/ and OLD_TREE carried):
#   session8.sh OUTDIR OLD_TREE [ROUNDS]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; ROUNDS=${3:-5}
W=/tmp/s8 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
which tmux || { echo "no tmux here"; exit 1; }
python3 -m compileall -q tuiperf "$OLD/tuiperf" /tmp/site > /dev/null
t=$SECONDS
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > "$W/log_profile.txt" 2>&1
echo "profile rc=$? $((SECONDS - t)) s"; ls -la "$W/big.nsys-rep"
timeout 300 python3 examples/export_routes/ahead_tui.py "$W/big.nsys-rep" "$OLD" "$NSYS" "$OUTDIR/viewer.txt" "$ROUNDS"
echo "viewer done at $SECONDS s"
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
ROOT=$PWD
for i in $(seq "$ROUNDS"); do
    (( SECONDS < 520 )) || break
    for arm in export new old; do
        rm -rf "$W/e" "$W/c"; sync; a=$(ms)
        case $arm in
        export) "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e" "$W/big.nsys-rep" > /dev/null 2>&1 ;;
        new) (cd "$ROOT" && TUIPERF_CACHE_DIR="$W/c" TUIPERF_NSYS="$NSYS" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out_new.txt") ;;
        old) (cd "$OLD" && TUIPERF_CACHE_DIR="$W/c" TUIPERF_NSYS="$NSYS" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out_old.txt") ;;
        esac
        echo "round $i summary $arm rc=$? $(( $(ms) - a )) ms" | tee -a "$OUTDIR/summary.txt"
    done
done
cmp "$W/out_new.txt" "$W/out_old.txt" && echo "summary: same output" | tee -a "$OUTDIR/summary.txt"
ls -la "$OUTDIR"
