#!/bin/bash
# Issue 20.1, A/B: tuiperf's first open of a ~1.1M-kernel .nsys-rep with the export started
# ahead of the command's imports and the converter imported while nsys works (this tree)
# against the code before (OLD_TREE), interleaved with `nsys export --type arrowdir` alone.
# The TUI's first open too: time from start to the first frame drawn after loading (tmux).
# usage (repository root, GPU machine, .debs carried): ahead.sh OUTDIR OLD_TREE [KERNELS] [REPEAT]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; K=${3:-1000000}; REPEAT=${4:-5}
W=/tmp/ahead && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
export TUIPERF_NSYS=$NSYS
python3 -m compileall -q tuiperf "$OLD/tuiperf" > /dev/null  # as installed: bytecode ready
timeout 300 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels "$K" > "$P/log_profile.txt" 2>&1
echo "profile rc=$? $(ls -la $W/big.nsys-rep)" | tee -a "$P/times.txt"
R=$W/big.nsys-rep
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
one() {
    local label=$1; shift
    sync; local a; a=$(ms)
    "$@" > "$W/out_$label.txt" 2> "$W/err_$label.txt"; local rc=$?
    local b; b=$(ms)
    echo "$label rc=$rc $((b - a)) ms" | tee -a "$P/times.txt"
}
ROOT=$PWD
for i in $(seq "$REPEAT"); do
    (( SECONDS < 400 )) || break
    echo "round $i" >> "$P/times.txt"
    rm -rf "$W/e_a" "$W/c_new" "$W/c_old"
    one export_arrowdir "$NSYS" export --type arrowdir --include-json=true -f true -o "$W/e_a" "$R"
    one tuiperf_new bash -c "cd '$ROOT' && TUIPERF_CACHE_DIR='$W/c_new' python3 -m tuiperf summary '$R' --report cuda_gpu_kern_sum --format csv"
    one tuiperf_old bash -c "cd '$OLD' && TUIPERF_CACHE_DIR='$W/c_old' python3 -m tuiperf summary '$R' --report cuda_gpu_kern_sum --format csv"
done
cmp "$W/out_tuiperf_new.txt" "$W/out_tuiperf_old.txt" && echo "same output" >> "$P/times.txt"
mkdir -p "$OUTDIR" && tar -C "$P" -cJf "$OUTDIR/ahead.tar.xz" . && ls -la "$OUTDIR"
