#!/usr/bin/env bash
# Capture the memory examples on a GPU machine (see ../../../shared/CAPTURE.md for where
# nsys lives and the libdw it needs). Writes to $OUT (or ./out): <name>.pickle (the
# allocator snapshot), expect_<name>.json (PyTorch's own peaks), and for leak.py an nsys
# report with --cuda-memory-usage=true exported to SQLite. Then, here:
#   tuiperf memory out/leak.pickle out/leak.sqlite --format json
# and copy the small results into tests/data/gpumem/ (xz) with a README line each.
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-out}
mkdir -p "$OUT"
NSYS=${NSYS:-nsys}

python3 leak.py "$OUT"
python3 fragmentation.py "$OUT"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 fragmentation.py "$OUT" fragmentation_expandable
python3 oom.py "$OUT"
python3 leak.py "$OUT" kineto   # torch.profiler, profile_memory=True

# the same leak loop under nsys: cudaMalloc/cudaFree rows (reserved) and the step ranges
mkdir -p "$OUT/nsys"
"$NSYS" profile -t cuda,nvtx --sample=none --cpuctxsw=none --cuda-memory-usage=true \
    -o "$OUT/leak_nsys" --force-overwrite true python3 leak.py "$OUT/nsys"
"$NSYS" export --type sqlite --force-overwrite true -o "$OUT/leak_nsys.sqlite" "$OUT/leak_nsys.nsys-rep"

for f in "$OUT"/*.pickle "$OUT"/*.sqlite; do xz -k -9 -T4 "$f"; done
"$NSYS" stats --report cuda_gpu_kern_sum,cuda_api_sum --format csv -o "$OUT/stats_leak_nsys" "$OUT/leak_nsys.sqlite" > /dev/null 2>&1 || true
ls -l "$OUT"
