#!/bin/bash
# Second device call (2026-12-05): GPU metrics of two third-party programs of the advice
# corpus (issue 34 item 2: a GPU-bound bf16 ViT, and BERT in FP32 whose GEMMs miss the
# tensor cores), then advice pairs not yet captured (bench/advice/capture.sh tags).
# usage (repository root, GPU machine, .debs carried): examples/capture_session7b.sh OUTDIR
set -u
OUTDIR=${1:?usage: capture_session7b.sh OUTDIR}
mkdir -p "$OUTDIR"
. examples/nsys_env.sh
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
G=/tmp/gm && rm -rf $G && mkdir -p $G/pack
for i in 1 2 3; do  # slow_python.py as is and --fix, interleaved (the first call's plain 47.5 ms vs 33.7 under nsys)
    for v in slow fix; do
        extra=""; [ $v = fix ] && extra=--fix
        timeout 60 python3 examples/cpu_samples/slow_python.py $extra 2>&1 | grep STEADY | sed "s/^/$v $i /" | tee -a $G/pack/slow_python_ab.txt
    done
done
for prog in healthy hf_bert_fp32; do
    t=$SECONDS
    timeout 150 "$NSYS" profile -t cuda,nvtx --sample=none --cpuctxsw=none --gpu-metrics-devices=all \
        --gpu-metrics-frequency=1000 -f true -o $G/${prog}_metrics \
        python3 bench/advice/programs/$prog.py > $G/pack/${prog}_metrics.nsys.log 2>&1
    echo "$prog metrics rc=$? $((SECONDS - t)) s" | tee -a $G/pack/times.txt
    timeout 90 "$NSYS" export --type sqlite -f true -o $G/${prog}_metrics.sqlite $G/${prog}_metrics.nsys-rep > /dev/null 2>&1
    "$NSYS" stats --report cuda_gpu_kern_sum --format csv -o $G/pack/stats_${prog}_metrics $G/${prog}_metrics.sqlite > /dev/null 2>&1
    xz -T16 -9 -c $G/${prog}_metrics.sqlite > $G/pack/${prog}_metrics.sqlite.xz
    ls -la $G/${prog}_metrics.sqlite $G/pack/${prog}_metrics.sqlite.xz
done
tar -C $G/pack -cf "$OUTDIR/gpu_metrics.tar" . ; ls -la "$OUTDIR"
BUDGET_LIMIT_S=$(( 480 - SECONDS )) bash bench/advice/capture.sh "$OUTDIR" 5 \
    tv_resnet_recipe_fix optimizer_foreach_off optimizer_foreach_off_fix \
    compile_default_batch compile_ahead_batch dataloader_heavy_top
ls -la "$OUTDIR"
