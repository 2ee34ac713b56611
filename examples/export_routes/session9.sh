#!/bin/bash
# Issue 37 (2026-12-05, second session): a fresh ~1.1M-kernel .nsys-rep on the GPU machine:
# 1. the first timeline screen from the cache (bench/first_screen.py), this tree and OLD_TREE;
# 2. the viewer's first screen into an empty cache (ahead_tui.py) and 3. the first `summary`,
#    this tree against OLD_TREE, interleaved with `nsys export --type arrowdir` alone.
# (It replaces session8.sh, never run: the same steps, ordered so that each gets its share
# of one 10-minute call.)
# usage (repository root, GPU machine; .debs/ (libdw, libelf, tmux), .whl/ and OLD_TREE
# carried):  session9.sh OUTDIR OLD_TREE [ROUNDS] [SECONDS_BUDGET]
# VIEWER=0 leaves pass 2 out (pass 9 of bench/routes.md: what was left of the device time).
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; ROUNDS=${3:-4}; BUDGET=${4:-540}
W=/tmp/s8 && rm -rf "$W" && mkdir -p "$W" "$OUTDIR"
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
timeout 150 python3 bench/first_screen.py "$W/big.nsys-rep" --cache-dir /tmp/s9 --rounds 9 \
    --tree this="$PWD" --tree old="$OLD" 2>&1 | tee "$OUTDIR/first_screen.txt"
echo "first screen done at $SECONDS s"
if [ "${VIEWER:-1}" != 0 ]; then
    timeout 200 python3 examples/export_routes/ahead_tui.py "$W/big.nsys-rep" "$OLD" "$NSYS" "$OUTDIR/viewer.txt" "$ROUNDS"
    echo "viewer done at $SECONDS s"
fi
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
ROOT=$PWD
for i in $(seq "$ROUNDS"); do
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
