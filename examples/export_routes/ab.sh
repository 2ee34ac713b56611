#!/bin/bash
# Issue 20.1, A/B: tuiperf's first open of a ~1.1M-kernel .nsys-rep, the code before
# (OLD_TREE: probes `nsys export --help`, then exports arrowdir) against the code now
# (arrowdir first, --include-json, progress), interleaved with `nsys export` alone.
# usage (repository root, GPU machine, .debs carried): ab.sh OUTDIR OLD_TREE [KERNELS] [REPEAT]
set -u
OUTDIR=${1:?usage}; OLD=${2:?usage}; K=${3:-1000000}; REPEAT=${4:-5}
W=/tmp/ab && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
. examples/nsys_env.sh
export TUIPERF_NSYS=$NSYS
timeout 240 "$NSYS" profile -t cuda,nvtx,osrt -f true -o "$W/big" \
    python3 examples/export_routes/many_kernels.py --kernels "$K" > "$P/log_profile.txt" 2>&1
echo "profile rc=$? $(ls -la $W/big.nsys-rep)" | tee -a "$P/times.txt"
R=$W/big.nsys-rep
"$NSYS" export --type bogus -o "$W/x" "$R" > "$P/bogus_stdout.txt" 2> "$P/bogus_stderr.txt"; echo "bogus rc=$?" >> "$P/bogus_stdout.txt"
"$NSYS" export --type arrowdir -f true -o "$W/y" "$R" > "$P/streams_stdout.txt" 2> "$P/streams_stderr.txt"
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
one() {
    local label=$1; shift
    sync; local a; a=$(ms)
    "$@" > "$W/out_$label.txt" 2> "$W/err_$label.txt"; local rc=$?
    local b; b=$(ms)
    echo "$label rc=$rc $((b - a)) ms" | tee -a "$P/times.txt"
}
for i in $(seq "$REPEAT"); do
    (( SECONDS < 420 )) || break
    echo "round $i" >> "$P/times.txt"
    rm -rf "$W/e_a" "$W/c_new" "$W/c_old"
    one export_arrowdir "$NSYS" export --type arrowdir -f true -o "$W/e_a" "$R"
    one tuiperf_new env TUIPERF_CACHE_DIR="$W/c_new" PYTHONPATH=$PWD python3 -m tuiperf summary "$R" --report cuda_gpu_kern_sum --format csv
    # python -m puts the working folder first on sys.path: run the old code from its tree
    one tuiperf_old bash -c "cd '$OLD' && TUIPERF_CACHE_DIR='$W/c_old' python3 -m tuiperf summary '$R' --report cuda_gpu_kern_sum --format csv"
done
cmp "$W/out_tuiperf_new.txt" "$W/out_tuiperf_old.txt" && echo "same output" >> "$P/times.txt"
tr '\r' '\n' < "$W/err_tuiperf_new.txt" | tail -5 > "$P/progress_tail.txt"
tr '\r' '\n' < "$W/err_tuiperf_new.txt" | wc -l >> "$P/progress_tail.txt"
head -c 600 "$P/streams_stdout.txt" > "$P/streams_head.txt"; echo >> "$P/streams_head.txt"; head -c 600 "$P/streams_stderr.txt" >> "$P/streams_head.txt"
rm -f "$P/streams_stdout.txt" "$P/streams_stderr.txt"
mkdir -p "$OUTDIR" && tar -C "$P" -cJf "$OUTDIR/ab.tar.xz" . && ls -la "$OUTDIR"
