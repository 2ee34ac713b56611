#!/bin/bash
# One device call (2026-12-05): the memory examples (issue 33), the CPU-samples / GPU-metrics
# program (issue 34) and a real ~1M-kernel capture for the cache benchmarks (issue 37).
# usage (repository root, GPU machine, .debs carried): examples/capture_session7.sh OUTDIR
# Returns at most 8 files: memory.tar, cpusamples.tar, big.sqlite.xz.part-* , log.txt.
set -u
OUTDIR=${1:?usage: capture_session7.sh OUTDIR}
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/log.txt") 2>&1
. examples/nsys_env.sh
export NSYS PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c 'import torch; print("torch", torch.__version__)'
t=$SECONDS
M=/tmp/mem && rm -rf $M && mkdir -p $M
(OUT=$M timeout 240 bash examples/memory/capture.sh) ; echo "memory rc=$? $((SECONDS - t)) s"
(cd $M && tar -cf "$OUTDIR/memory.tar" ./*.xz ./*.json ./*.json.gz ./nsys/*.json ./stats_* 2>/dev/null); ls -la $M
t=$SECONDS
timeout 300 bash examples/cpu_samples/capture.sh "$OUTDIR"; echo "cpusamples rc=$? $((SECONDS - t)) s"
if (( SECONDS < 330 )); then
    B=/tmp/big && rm -rf $B && mkdir -p $B
    t=$SECONDS
    timeout 150 "$NSYS" profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none -f true -o $B/big \
        python3 examples/export_routes/many_kernels.py --kernels 1000000 > $B/profile.log 2>&1
    echo "big profile rc=$? $((SECONDS - t)) s"; tail -3 $B/profile.log
    t=$SECONDS
    timeout 60 "$NSYS" export --type sqlite -f true -o $B/big.sqlite $B/big.nsys-rep > /dev/null 2>&1
    echo "big export rc=$? $((SECONDS - t)) s"; ls -la $B
    t=$SECONDS
    timeout 90 xz -T16 -6 -c $B/big.sqlite > $B/big.sqlite.xz; echo "xz rc=$? $((SECONDS - t)) s"
    ls -la $B/big.sqlite.xz
    (cd "$OUTDIR" && split -b 15M -d -a 1 $B/big.sqlite.xz big.sqlite.xz.part-)
fi
ls -la "$OUTDIR"
