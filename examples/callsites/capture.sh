#!/bin/bash
# Call-site captures on one GPU (issue 22): train_gpu.py under torch.profiler (with_stack,
# record_shapes) and under nsys with Python backtraces (export with --include-json=true).
# usage (repository root, GPU machine, .debs carried): examples/callsites/capture.sh OUTDIR
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR}
W=/tmp/callsites && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
PROG=examples/callsites/train_gpu.py
timeout 120 python3 $PROG --kineto "$W/kineto_callsites_gpu.json" > "$P/log_kineto.txt" 2>&1
echo "kineto rc=$?"
gzip -9 -c "$W/kineto_callsites_gpu.json" > "$P/kineto_callsites_gpu.json.gz"
timeout 150 "$NSYS" profile -t cuda,nvtx,osrt --cpuctxsw=none --sample=process-tree --cudabacktrace=all \
    --python-backtrace=cuda -f true -o "$W/callsites_gpu" python3 $PROG > "$P/log_nsys.txt" 2>&1
echo "nsys rc=$?"
"$NSYS" export --type sqlite --include-json=true -f true -o "$W/callsites_gpu.sqlite" "$W/callsites_gpu.nsys-rep" >> "$P/log_nsys.txt" 2>&1
"$NSYS" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum --format csv -o "$P/stats_callsites_gpu" "$W/callsites_gpu.sqlite" > /dev/null 2>&1
xz -9 -c "$W/callsites_gpu.sqlite" > "$P/callsites_gpu.sqlite.xz"
python3 -c 'import torch; print("torch", torch.__version__)' > "$P/env.txt"
ls -la "$P"
mkdir -p "$OUTDIR" && tar -C "$P" -cf "$OUTDIR/callsites.tar" . && ls -la "$OUTDIR"
