#!/bin/bash
# Issue 20.1, second pass: does `nsys export --tables` (only the tables tuiperf reads) make the
# export of a default-flags capture (CPU sampling and context switches on) faster, and do the
# summaries stay equal? usage (repository root, on the GPU machine, .debs carried):
#     examples/export_routes/tables.sh OUTDIR [KERNELS] [REPEAT]
set -u
OUTDIR=${1:?usage: tables.sh OUTDIR [KERNELS] [REPEAT]}
K=${2:-1000000}
REPEAT=${3:-3}
W=/tmp/routes2 && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
TABLES='CUPTI_ACTIVITY_KIND_KERNEL,CUPTI_ACTIVITY_KIND_RUNTIME,CUPTI_ACTIVITY_KIND_MEMCPY,CUPTI_ACTIVITY_KIND_MEMSET,CUPTI_ACTIVITY_KIND_GRAPH_TRACE,CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,NVTX_EVENTS,OSRT_API,PROFILER_OVERHEAD,CUDA_GPU_MEMORY_USAGE_EVENTS,StringIds,ThreadNames,PROCESSES,TARGET_INFO_GPU,TARGET_INFO_CUDA_STREAM,ENUM_.*,META_DATA_.*,ANALYSIS_DETAILS,DIAGNOSTIC_EVENT'
t=$SECONDS
timeout 300 "$NSYS" profile -t cuda,nvtx,osrt -f true \
    -o "$W/big" python3 examples/export_routes/many_kernels.py --kernels "$K" > "$P/log_profile.txt" 2>&1
echo "profile (default sampling) rc=$? $((SECONDS - t)) s; $(ls -la $W/big.nsys-rep)" | tee -a "$P/times.txt"
R=$W/big.nsys-rep
ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
one() {
    local label=$1; shift
    sync; local a; a=$(ms)
    "$@" > "$W/out_$label.txt" 2>&1; local rc=$?
    local b; b=$(ms)
    echo "$label rc=$rc $((b - a)) ms" | tee -a "$P/times.txt"
}
for i in $(seq "$REPEAT"); do
    (( SECONDS < 380 )) || { echo "stop rounds at ${SECONDS}s" | tee -a "$P/times.txt"; break; }
    echo "round $i" >> "$P/times.txt"
    rm -rf "$W/e_"*
    one arrowdir_all "$NSYS" export --type arrowdir -f true -o "$W/e_a" "$R"
    one arrowdir_tables "$NSYS" export --type arrowdir --tables="$TABLES" -f true -o "$W/e_at" "$R"
    one parquetdir_tables "$NSYS" export --type parquetdir --tables="$TABLES" -f true -o "$W/e_pt" "$R"
    one sqlite_tables "$NSYS" export --type sqlite --tables="$TABLES" -f true -o "$W/e_st.sqlite" "$R"
    one sqlite_all "$NSYS" export --type sqlite -f true -o "$W/e_s.sqlite" "$R"
    rm -rf "$W/cache"
    one tuiperf_rep env TUIPERF_NSYS=$NSYS TUIPERF_CACHE_DIR="$W/cache" PYTHONPATH=$PWD python3 -m tuiperf summary "$R" --report cuda_gpu_kern_sum --format csv
done
du -sh "$W"/e_* "$R" >> "$P/times.txt"
ls "$W/e_a" > "$P/files_all.txt"; ls "$W/e_at" > "$P/files_tables.txt"
for d in e_a e_at e_pt e_st.sqlite e_s.sqlite; do
    for rep in cuda_gpu_kern_sum cuda_api_sum nvtx_sum osrt_sum cuda_gpu_mem_time_sum; do
        env TUIPERF_NO_CACHE=1 PYTHONPATH=$PWD python3 -m tuiperf summary "$W/$d" --report $rep --format csv > "$P/sum_${d}_$rep.csv" 2>&1
    done
    env TUIPERF_NO_CACHE=1 PYTHONPATH=$PWD python3 -m tuiperf analyze "$W/$d" > "$P/analyze_$d.txt" 2>&1
done
cd "$P" && for f in sum_e_a_*.csv analyze_e_a.txt; do for d in e_at e_pt e_st.sqlite e_s.sqlite; do g=${f/e_a/$d}; cmp -s "$f" "$g" && echo "same $g" || echo "DIFF $g"; done; done > "$P/parity.txt"; cd - > /dev/null
cat "$P/parity.txt"
mkdir -p "$OUTDIR" && tar -C "$P" -cJf "$OUTDIR/routes2.tar.xz" . && ls -la "$OUTDIR"
