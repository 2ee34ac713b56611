#!/bin/bash
# Capture the advice corpus (bench/advice/programs/*.py) on one GPU and pack the results.
#
# usage (repository root, on the GPU machine, libdw/libelf .debs in .debs/, see
# ../shared/CAPTURE.md and examples/nsys_env.sh):
#     bench/advice/capture.sh OUTDIR CALL [TAG...]     (default: every TAG of PLAN, in order)
# For each variant (TAG) of PLAN, serially:
#   1. the program alone, no profiler:        <TAG>.plain.log (its STEADY_STEP_MS)
#   2. nsys profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none [extra] python3 prog.py
#                                             <TAG>.nsys.log (STEADY_STEP_MS under nsys)
#   3. nsys export --type sqlite               (in the background, beside the next variant's
#                                             nsys run, never beside a plain run)
#   4. at the end: xz -9 of every export, in parallel: <TAG>.sqlite.xz
# PLAIN 2 in PLAN: the program alone only (no nsys), for a timing that a first call missed.
# profiler_cycle runs without nsys: --no-profiler (timing), then torch.profiler with
# active=3 and active=1: profiler_cycle.pt.trace.json.gz, profiler_cycle_active1.pt.trace.json.gz.
# Files are appended to OUTDIR/advice_<CALL>_<k>.tar as soon as they exist (a new tar every
# 15 MiB), the log goes to OUTDIR/capture_<CALL>.log, so a timeout still returns what was done.
# No variant starts when its estimated time would pass BUDGET_LIMIT_S seconds (default 470),
# no run goes on past BUDGET_LIMIT_S + 30 s; the skipped TAGs are listed at the end (run them
# in a second call).
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR CALL [TAG...]}
CALL=${2:?usage: capture.sh OUTDIR CALL [TAG...]}
shift 2
ONLY=" $* "
LIMIT=${BUDGET_LIMIT_S:-470}
W=/tmp/advice
P=$W/pack
PD=bench/advice/programs
rm -rf "$W" && mkdir -p "$P"
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/capture_$CALL.log") 2>&1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
. examples/nsys_env.sh
NSYS=${NSYS_OVERRIDE:-$NSYS}   # a stand-in for a dry run without a GPU
PY=${PY:-python3}
tmo() { local r=$(( LIMIT + 30 - SECONDS )); (( r > 180 )) && r=180; (( r < 10 )) && r=10; echo $r; }

# TAG  PROGRAM  PLAIN(1: also run without nsys)  EST_S  PROGRAM_ARGS(- none)  NSYS_EXTRA(- none)
PLAN="
hf_gpt2_trainer        hf_gpt2_trainer       1 45  -     -
hf_gpt2_trainer_fix    hf_gpt2_trainer       1 45  --fix -
hf_bert_fp32           hf_bert_fp32          1 45  -     -
hf_bert_fp32_fix       hf_bert_fp32          1 45  --fix -
timm_vit_loader        timm_vit_loader       1 50  -     -
timm_vit_loader_fix    timm_vit_loader       1 45  --fix -
dataloader_heavy       dataloader_heavy      1 40  -     -
dataloader_heavy_fix   dataloader_heavy      1 40  --fix -
tv_resnet_recipe       tv_resnet_recipe      1 45  -     -
hf_bert_fp32_fix_plain hf_bert_fp32          2 20  --fix -
lightning_resnet18     lightning_resnet18    1 35  -     -
lightning_resnet18_fix lightning_resnet18    1 35  --fix -
ddp_gloo               ddp_gloo              1 30  -     -
ddp_gloo_fix           ddp_gloo              1 30  --fix -
hf_generate            hf_generate           1 30  -     -
hf_generate_fix        hf_generate           1 30  --fix -
healthy                healthy               1 30  -     -
profiler_cycle         profiler_cycle        1 40  -     -
compile_default        compile_default       1 80  -     -
compile_ahead          compile_ahead         1 35  -     -
reduce_overhead        reduce_overhead       1 60  -     -
reduce_overhead_fix    reduce_overhead       2 40  --fix -
tv_resnet_recipe_fix   tv_resnet_recipe      1 40  --fix -
reduce_overhead_node   reduce_overhead       0 25  -     --cuda-graph-trace=node
sync_metrics           sync_metrics          1 30  -     -
sync_metrics_fix       sync_metrics          1 30  --fix -
optimizer_foreach_off  optimizer_foreach_off 1 30  -     -
optimizer_foreach_off_fix optimizer_foreach_off 1 30 --fix -
compile_default_top    compile_default       2 70  --mode=reduce-overhead -
lightning_resnet18_top lightning_resnet18    2 30  --batch=1024 -
sync_metrics_top       sync_metrics          2 25  --batch=256 -
ddp_gloo_top           ddp_gloo              2 25  --batch=256 -
tv_resnet_recipe_top   tv_resnet_recipe      2 35  --batch=128 -
hf_gpt2_trainer_top    hf_gpt2_trainer       2 40  --batch=32 -
compile_ahead_top      compile_ahead         2 50  --mode=reduce-overhead -
sync_metrics_again     sync_metrics          2 25  -     -
lightning_resnet18_again lightning_resnet18  2 30  -     -
compile_default_batch  compile_default       2 60  --batch=64 -
compile_ahead_batch    compile_ahead         2 50  --batch=64 -
dataloader_heavy_top   dataloader_heavy      2 30  --batch=256 -
compile_default_again  compile_default       2 60  -     -
"

{
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    nvidia-smi | head -4
    "$NSYS" --version
    $PY - <<'EOF'
import importlib.metadata as md, sys, torch
print("python", sys.version.split()[0], sys.executable)
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
for p in ("transformers", "accelerate", "timm", "torchvision", "lightning", "pytorch-lightning", "triton", "numpy", "pillow"):
    try:
        print(p, md.version(p))
    except md.PackageNotFoundError:
        print(p, "not installed")
EOF
    echo "kernel $(uname -r) nproc $(nproc)"
    free -g | head -2
} > "$P/env.txt" 2>&1
cat "$P/env.txt"

TARK=1
pack() {  # files in $P (relative names) -> the current tar in OUTDIR; a new tar before 15 MiB
    local tar="$OUTDIR/advice_${CALL}_${TARK}.tar" add=0 f
    for f in "$@"; do add=$((add + $(stat -c %s "$P/$f") + 1024)); done
    if [ -f "$tar" ] && (( $(stat -c %s "$tar") + add > 15 * 1024 * 1024 )); then
        TARK=$((TARK + 1)); tar="$OUTDIR/advice_${CALL}_${TARK}.tar"
    fi
    tar rf "$tar" -C "$P" "$@"
}
pack env.txt

steady() { grep -h '^STEADY_STEP_MS' "$1" 2>/dev/null | tail -1 | awk '{print $2}'; }

BG=""          # pid of the background export
BGTAG=""
export_bg() {  # tag: nsys export in the background (xz comes at the end)
    local t=$1
    ( timeout 120 "$NSYS" export --type sqlite -f true -o "$W/$t.sqlite" "$W/$t.nsys-rep" \
        > "$W/$t.export.log" 2>&1 ) &
    BG=$!; BGTAG=$t
}
wait_bg() {
    [ -n "$BG" ] || return 0
    wait "$BG"
    if [ -s "$W/$BGTAG.sqlite" ]; then
        echo "  exported $BGTAG: $(stat -c %s "$W/$BGTAG.sqlite") bytes at ${SECONDS}s"
    else
        echo "  EXPORT FAILED $BGTAG: $(tail -3 "$W/$BGTAG.export.log")"
    fi
    BG=""; BGTAG=""
}

DONE=""; SKIPPED=""; FAILED=""; PENDING=""
run_profiler_cycle() {
    local d=$W/kineto r
    timeout $(tmo) $PY $PD/profiler_cycle.py --no-profiler > "$P/profiler_cycle.plain.log" 2>&1
    echo "rc=$?" >> "$P/profiler_cycle.plain.log"
    for a in 3 1; do
        rm -rf "$d"
        timeout $(tmo) $PY $PD/profiler_cycle.py --active $a --trace-dir "$d" \
            > "$P/profiler_cycle_active$a.log" 2>&1
        echo "rc=$?" >> "$P/profiler_cycle_active$a.log"
        r=$(ls "$d"/*.pt.trace.json.gz 2>/dev/null | head -1)
        if [ -n "$r" ]; then
            if [ $a = 3 ]; then cp "$r" "$P/profiler_cycle.pt.trace.json.gz"; pack profiler_cycle.pt.trace.json.gz
            else cp "$r" "$P/profiler_cycle_active1.pt.trace.json.gz"; pack profiler_cycle_active1.pt.trace.json.gz; fi
        else
            FAILED="$FAILED profiler_cycle_active$a"
        fi
    done
    pack profiler_cycle.plain.log profiler_cycle_active3.log profiler_cycle_active1.log
    echo "RESULT profiler_cycle plain_ms=$(steady "$P/profiler_cycle.plain.log") active3_ms=$(steady "$P/profiler_cycle_active3.log") active1_ms=$(steady "$P/profiler_cycle_active1.log") at ${SECONDS}s"
}

while read -r tag prog plain est pargs nextra; do
    [ -n "$tag" ] || continue
    [ "$ONLY" = "  " ] || [[ $ONLY == *" $tag "* ]] || continue
    if (( SECONDS + est > LIMIT )); then
        echo "SKIP $tag: ${SECONDS}s + ~${est}s > ${LIMIT}s"
        SKIPPED="$SKIPPED $tag"; continue
    fi
    [ "$pargs" = "-" ] && pargs=""
    [ "$nextra" = "-" ] && nextra=""
    t0=$SECONDS
    echo "== $tag (python3 $PD/$prog.py $pargs) at ${t0}s"
    if [ "$prog" = profiler_cycle ]; then
        run_profiler_cycle
        DONE="$DONE $tag"; continue
    fi
    pl=""
    if [ "$plain" != 0 ]; then  # nothing runs beside a plain (timed) run
        timeout $(tmo) $PY $PD/$prog.py $pargs > "$P/$tag.plain.log" 2>&1
        echo "rc=$?" >> "$P/$tag.plain.log"
        pack "$tag.plain.log"
        pl=$(steady "$P/$tag.plain.log")
        echo "  plain: $pl ms/step at ${SECONDS}s"
    fi
    if [ "$plain" = 2 ]; then
        echo "RESULT $tag plain_ms=${pl:-NA} (no nsys run) ($((SECONDS - t0))s)"
        DONE="$DONE $tag"; continue
    fi
    [ -n "$PENDING" ] && export_bg "$PENDING"  # the previous capture's export runs beside this nsys run
    PENDING=""
    timeout $(tmo) "$NSYS" profile -t cuda,nvtx,osrt --sample=none --cpuctxsw=none $nextra -f true \
        -o "$W/$tag" $PY $PD/$prog.py $pargs > "$P/$tag.nsys.log" 2>&1
    echo "rc=$?" >> "$P/$tag.nsys.log"
    pack "$tag.nsys.log"
    ns=$(steady "$P/$tag.nsys.log")
    wait_bg
    if [ -s "$W/$tag.nsys-rep" ]; then
        PENDING=$tag
        DONE="$DONE $tag"
    else
        FAILED="$FAILED $tag"
    fi
    echo "RESULT $tag plain_ms=${pl:-NA} nsys_ms=${ns:-NA} ($((SECONDS - t0))s)"
done <<< "$PLAN"
[ -n "$PENDING" ] && export_bg "$PENDING"
wait_bg
echo "xz at ${SECONDS}s"
ls "$W"/*.sqlite 2>/dev/null | timeout 60 xargs -r -P 16 -n 1 sh -c 'xz -9 -T1 -c "$0" > "$0.xz.part" && mv "$0.xz.part" "$0.xz"'
for f in "$W"/*.sqlite.xz; do
    [ -e "$f" ] || continue
    mv "$f" "$P/" && pack "$(basename "$f")"
    echo "  $(basename "$f"): $(stat -c %s "$P/$(basename "$f")") bytes"
done

echo "done:$DONE"
echo "failed:$FAILED"
echo "skipped:$SKIPPED"
ls -la "$P" "$OUTDIR"
echo "total ${SECONDS}s"
