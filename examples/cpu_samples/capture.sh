#!/bin/bash
# CPU samples, Python samples, thread state and GPU metrics of slow_python.py (issue 34).
# usage (repository root, GPU machine, .debs carried): examples/cpu_samples/capture.sh OUTDIR
#   slow.*      nsys -t cuda,nvtx,osrt --sample=process-tree --backtrace=dwarf
#               --python-sampling=true --cpuctxsw=process-tree (whole run), exported with
#               --include-json=true (the Python frames), plus nsys stats reports
#   metrics.*   nsys -t cuda,nvtx --sample=none --gpu-metrics-devices=all over the steady steps
#               only (--capture-range=cudaProfilerApi) of the --copy-heavy variant
#   *.plain.log the program alone, and its --fix, for the measured saving
set -u
OUTDIR=${1:?usage: capture.sh OUTDIR}
W=/tmp/cpusamples && rm -rf "$W" && mkdir -p "$W/pack"
P=$W/pack
export PYTHONUNBUFFERED=1
. examples/nsys_env.sh
PROG=examples/cpu_samples/slow_python.py
"$NSYS" --version > "$P/env.txt" 2>&1
"$NSYS" profile --help > "$P/profile_help.txt" 2>&1
for v in slow fix; do
    extra=""; [ $v = fix ] && extra=--fix
    timeout 120 python3 $PROG $extra > "$P/$v.plain.log" 2>&1; echo "$v plain rc=$?"
done
timeout 150 "$NSYS" profile -t cuda,nvtx,osrt --sample=process-tree --backtrace=dwarf \
    --python-sampling=true --cpuctxsw=process-tree -f true -o "$W/slow" \
    python3 $PROG > "$P/slow.nsys.log" 2>&1
echo "slow nsys rc=$?"
"$NSYS" export --type sqlite --include-json=true -f true -o "$W/slow.sqlite" "$W/slow.nsys-rep" >> "$P/slow.nsys.log" 2>&1
"$NSYS" stats --report cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,osrt_sum --format csv -o "$P/stats_slow" "$W/slow.sqlite" > /dev/null 2>&1
timeout 150 "$NSYS" profile -t cuda,nvtx --sample=none --cpuctxsw=none --gpu-metrics-devices=all \
    --capture-range=cudaProfilerApi --capture-range-end=stop -f true -o "$W/metrics" \
    python3 $PROG --copy-heavy --steps 6 > "$P/metrics.nsys.log" 2>&1
echo "metrics nsys rc=$?"
"$NSYS" export --type sqlite -f true -o "$W/metrics.sqlite" "$W/metrics.nsys-rep" >> "$P/metrics.nsys.log" 2>&1
"$NSYS" stats --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum --format csv -o "$P/stats_metrics" "$W/metrics.sqlite" > /dev/null 2>&1
for f in slow metrics; do xz -T8 -9 -c "$W/$f.sqlite" > "$P/$f.sqlite.xz"; done
ls -la "$W" "$P"
mkdir -p "$OUTDIR" && tar -C "$P" -cf "$OUTDIR/cpusamples.tar" . && ls -la "$OUTDIR"
