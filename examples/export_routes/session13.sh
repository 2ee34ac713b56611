#!/bin/bash
# Issue 37 (2026-12-06, third session): a fresh ~1.1M-kernel .nsys-rep on the GPU machine,
# this tree against OLD_TREE (840c157: before the early open and the unassembled duration):
# 1. the first timeline screen from the cache in tmux (bench/first_screen.py, 10 ms polls);
# 2. what tuiperf adds after nsys ends (bench/after_nsys.py on nsys's own arrowdir export
#    of the capture: a stand-in nsys hands it over at once, so nsys's noise is out);
# 3. the first `summary` of the .nsys-rep, interleaved with `nsys export` alone, as many
#    rounds as the time budget leaves.
# usage (repository root, GPU machine; .debs/, .whl/ and OLD_TREE carried):
#   session13.sh OUTDIR OLD_TREE [SECONDS_BUDGET]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; BUDGET=${3:-540}
W=/tmp/s13 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
command -v tmux > /dev/null || export PATH=$PATH:/tmp/dw/usr/bin
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
which tmux && tmux -V || { echo "no tmux here"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; python3 -c 'import pyarrow, numpy; print(pyarrow.__version__, numpy.__version__)'
python3 -m compileall -q tuiperf "$OLD/tuiperf" /tmp/site > /dev/null
t=$SECONDS
timeout 200 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels 1000000 > "$W/log_profile.txt" 2>&1
echo "profile rc=$? $((SECONDS - t)) s"; ls -la "$W/big.nsys-rep" || exit 1
export TUIPERF_NSYS=$NSYS
timeout 170 python3 bench/first_screen.py "$W/big.nsys-rep" --cache-dir "$W/fs" --rounds 12 \
    --poll 0.01 --tree this="$PWD" --tree old="$OLD" 2>&1 | tee "$OUTDIR/first_screen.txt"
echo "first screen done at $SECONDS s"
t=$SECONDS; "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/arrowdir" "$W/big.nsys-rep" > /dev/null 2>&1
echo "arrowdir export rc=$? $((SECONDS - t)) s"
timeout 120 python3 bench/after_nsys.py "$W/arrowdir" --tree this="$PWD" --tree old="$OLD" \
    --rounds 10 --sleep 0.5 2>&1 | tee "$OUTDIR/after_nsys.txt"
echo "after nsys done at $SECONDS s"
rm -rf "$W/arrowdir" "$W/fs"
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
ROOT=$PWD
for i in $(seq 20); do
    (( SECONDS < BUDGET )) || break
    for arm in export new old; do
        rm -rf "$W/e" "$W/c"; sync; a=$(ms)
        case $arm in
        export) "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e" "$W/big.nsys-rep" > /dev/null 2>&1 ;;
        new) (cd "$ROOT" && TUIPERF_CACHE_DIR="$W/c" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out_new.txt") ;;
        old) (cd "$OLD" && TUIPERF_CACHE_DIR="$W/c" python3 -m tuiperf summary "$W/big.nsys-rep" -r cuda_gpu_kern_sum --format csv > "$W/out_old.txt") ;;
        esac
        echo "round $i summary $arm rc=$? $(( $(ms) - a )) ms" | tee -a "$OUTDIR/summary.txt"
    done
done
cmp "$W/out_new.txt" "$W/out_old.txt" && echo "summary: same output" | tee -a "$OUTDIR/summary.txt"
head -3 "$W/out_new.txt" > "$OUTDIR/summary_head.txt"
ls -la "$OUTDIR"
