#!/bin/bash
# Nsight Compute captures for issue 24 on one GPU, and ncu's own exports of them.
# usage (repository root, on the GPU machine): examples/ncu_depth/capture.sh OUTDIR
# writes OUTDIR/ncu_depth.tar.xz: <dtype>.ncu-rep (ncu --set full --import-source yes of the
# four kernels of kernels.py), and for each: details.csv, details_base.csv, raw.csv,
# details_all.txt (--print-details all), rules.txt (--print-rule-details), source_<k>.csv
# (--page source, SASS and source views of each kernel), plus ncu --version and --help.
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR}
W=/tmp/ncu_depth && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
NCU=$(command -v ncu || find /opt/nvidia /usr/local -name ncu -type f 2>/dev/null | head -1)
{ "$NCU" --version; nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'; } > "$P/env.txt" 2>&1
"$NCU" --help > "$P/ncu_help.txt" 2>&1
for dt in fp32 bf16; do
    t=$SECONDS
    timeout 240 "$NCU" --set full --import-source yes --clock-control none --profile-from-start off \
        -f -o "$P/$dt" python3 examples/ncu_depth/kernels.py --dtype "$dt" > "$P/log_$dt.txt" 2>&1
    echo "ncu $dt rc=$? $((SECONDS - t)) s"
    R="$P/$dt.ncu-rep"
    "$NCU" -i "$R" --csv --page details > "$P/${dt}_details.csv" 2>&1
    "$NCU" -i "$R" --csv --page details --print-units base > "$P/${dt}_details_base.csv" 2>&1
    "$NCU" -i "$R" --csv --page raw > "$P/${dt}_raw.csv" 2>&1
    "$NCU" -i "$R" --page details --print-details all > "$P/${dt}_details_all.txt" 2>&1
    "$NCU" -i "$R" --page details --print-rule-details > "$P/${dt}_rules.txt" 2>&1
    "$NCU" -i "$R" --page source --csv --print-source sass > "$P/${dt}_source_sass_all.csv" 2>&1
    "$NCU" -i "$R" --page source --csv --print-source cuda,sass > "$P/${dt}_source_cuda_all.csv" 2>&1
    for k in 0 1 2 3; do
        "$NCU" -i "$R" --page source --csv --print-source sass --launch-skip "$k" --launch-count 1 \
            > "$P/${dt}_source_sass_$k.csv" 2>&1
        "$NCU" -i "$R" --page source --csv --print-source cuda,sass --launch-skip "$k" --launch-count 1 \
            > "$P/${dt}_source_cuda_$k.csv" 2>&1
    done
done
ls -la "$P"
mkdir -p "$OUTDIR" && tar -C "$P" -cJf "$OUTDIR/ncu_depth.tar.xz" . && ls -la "$OUTDIR"
