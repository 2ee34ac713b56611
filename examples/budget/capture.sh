#!/bin/bash
# Capture every program of programs.py on one GPU and pack the results.
#
# usage (repository root, on the GPU machine, libdw/libelf .debs in .debs/):
#     examples/budget/capture.sh OUTDIR [NAME...]   (default: every program)
# writes OUTDIR/budget.tar: <name>.sqlite.xz (nsys export), <name>.kineto.json.gz
# (torch.profiler, a separate run without nsys), stats_<name>_<report>.csv (nsys stats),
# analyze_<name>.txt (nsys analyze), log_<name>.txt (the program's own output), env.txt.
# New captures stop starting after BUDGET_LIMIT_S seconds (default 420) so that
# the packing always happens inside a 10-minute call.
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR [NAME...]}
shift
ONLY=" $* "
LIMIT=${BUDGET_LIMIT_S:-420}
W=/tmp/budget
P=$W/pack
rm -rf "$W" && mkdir -p "$P"
PROG=examples/budget/programs.py
export PYTHONUNBUFFERED=1

. examples/nsys_env.sh
REPORTS=cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,osrt_sum,cuda_gpu_mem_time_sum

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    nvidia-smi | head -4
    "$NSYS" --version
    python3 -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version()); print(torch.cuda.get_device_name(0))'
    uname -r
    nproc
} > "$P/env.txt" 2>&1
cat "$P/env.txt"

left() { (( SECONDS < LIMIT )) || { echo "SKIP $1: past ${LIMIT}s"; return 1; }; }
wanted() { [ "$ONLY" = "  " ] || [[ $ONLY == *" $1 "* ]]; }

nsys_one() {  # name
    local n=$1 t=$SECONDS
    wanted "$n" || return 0
    left "nsys $n" || return
    timeout 150 "$NSYS" profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none -f true \
        -o "$W/$n" python3 $PROG "$n" > "$P/log_$n.txt" 2>&1
    echo "rc=$?" >> "$P/log_$n.txt"
    timeout 90 "$NSYS" export --type sqlite -f true -o "$W/$n.sqlite" "$W/$n.nsys-rep" >> "$P/log_$n.txt" 2>&1
    cp "$W/$n.sqlite" "$P/$n.sqlite"  # pristine copy: stats/analyze read the other one
    timeout 90 "$NSYS" stats --report $REPORTS --format csv -o "$P/stats_$n" "$W/$n.sqlite" > /dev/null 2>> "$P/log_$n.txt"
    echo "nsys $n: $((SECONDS - t)) s; $(grep -h 'steady steps' "$P/log_$n.txt")"
}

kineto_one() {  # name
    local n=$1 t=$SECONDS
    wanted "$n" || return 0
    left "kineto $n" || return
    timeout 120 python3 $PROG "$n" --steps 6 --kineto "$P/$n.kineto.json" > "$P/log_${n}_kineto.txt" 2>&1
    echo "kineto $n: $((SECONDS - t)) s; $(grep -h 'steady steps' "$P/log_${n}_kineto.txt")"
}

for n in cpu_bound data_bound sync_bound gpu_bound copy_bound; do
    nsys_one $n
    kineto_one $n
done
for n in no_nvtx cpu_bound_fixed data_bound_fixed; do
    nsys_one $n
done
for f in "$W"/*.sqlite; do
    [ -e "$f" ] || continue
    n=$(basename "$f" .sqlite)
    left "analyze $n" && timeout 60 "$NSYS" analyze "$f" > "$P/analyze_$n.txt" 2>&1
done

ls -la "$P"
ls "$P"/*.sqlite | xargs -r -P 8 -n 1 xz -9
gzip -9 "$P"/*.kineto.json
tar cf "$OUTDIR/budget.tar" -C "$P" .
ls -la "$OUTDIR"
echo "total $SECONDS s"
