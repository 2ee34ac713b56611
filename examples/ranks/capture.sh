#!/bin/bash
# Per-rank captures on one GPU (issue 23): torchrun with gloo, one nsys report per rank,
# a planted straggler (rank 1 does 3 extra passes), 2 and 4 ranks; torch.profiler per rank;
# and a world-size-1 NCCL run for real NCCL kernels on the H200.
# usage (repository root, on the GPU machine, libdw/libelf .debs in .debs/): capture.sh OUTDIR
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR}
W=/tmp/ranks && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
PROG=examples/ranks/train_ranks.py
for n in 2 4; do
    t=$SECONDS
    mkdir -p "$W/r$n"
    timeout 200 torchrun --nproc-per-node "$n" --master-port 2953$n --no-python \
        "$NSYS" profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none -f true \
        -o "$W/r$n/rank%q{RANK}" python3 $PROG --steps 12 > "$P/log_r$n.txt" 2>&1
    echo "nsys ranks=$n rc=$? $((SECONDS - t)) s"
    for f in "$W/r$n"/*.nsys-rep; do
        b=$(basename "$f" .nsys-rep)
        "$NSYS" export --type sqlite -f true -o "$W/r$n/$b.sqlite" "$f" >> "$P/log_r$n.txt" 2>&1
        "$NSYS" stats --report cuda_gpu_kern_sum,nvtx_sum --format csv -o "$P/stats_r${n}_$b" "$W/r$n/$b.sqlite" > /dev/null 2>&1
        xz -9 -c "$W/r$n/$b.sqlite" > "$P/r${n}_$b.sqlite.xz"
    done
    t=$SECONDS
    timeout 150 torchrun --nproc-per-node "$n" --master-port 2954$n $PROG --steps 12 --kineto "$W/k$n" >> "$P/log_r$n.txt" 2>&1
    echo "kineto ranks=$n rc=$? $((SECONDS - t)) s"
    for f in "$W/k$n"/*.json; do gzip -9 -c "$f" > "$P/k${n}_$(basename "$f").gz"; done
done
t=$SECONDS
timeout 150 "$NSYS" profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none -f true \
    -o "$W/nccl1" python3 $PROG --backend nccl --steps 12 > "$P/log_nccl1.txt" 2>&1
echo "nccl1 rc=$? $((SECONDS - t)) s"
"$NSYS" export --type sqlite -f true -o "$W/nccl1.sqlite" "$W/nccl1.nsys-rep" >> "$P/log_nccl1.txt" 2>&1
"$NSYS" stats --report cuda_gpu_kern_sum,nvtx_sum --format csv -o "$P/stats_nccl1" "$W/nccl1.sqlite" > /dev/null 2>&1
xz -9 -c "$W/nccl1.sqlite" > "$P/nccl1.sqlite.xz"
ls -la "$P"
mkdir -p "$OUTDIR" && tar -C "$P" -cf "$OUTDIR/ranks.tar" . && ls -la "$OUTDIR"
