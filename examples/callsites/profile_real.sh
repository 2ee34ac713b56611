#!/bin/bash
# `tuiperf profile` under the real nsys (issue 22.2): the flags it passes are accepted, the
# report and its export land in the working folder, the analysis names the planted lines;
# plus a failing program and --steps with a program that does not use tuiperf.torch.
# usage (repository root, GPU machine, .debs carried): profile_real.sh OUTDIR
set -u
OUTDIR=${1:?usage: profile_real.sh OUTDIR}
. examples/nsys_env.sh
export TUIPERF_NSYS=$NSYS
REPO=$PWD
W=/tmp/prof_real && rm -rf "$W" && mkdir -p "$W" && cd "$W"
run() { echo "\$ tuiperf profile $*"; PYTHONPATH=$REPO timeout 240 python3 -m tuiperf profile "$@"; echo "rc=$?"; }
{
    run --no-tui -- python3 "$REPO/examples/callsites/train_gpu.py"
    ls -la "$W"
    printf 'import sys\nimport torch\ntorch.ones(4, device="cuda").sum().item()\nsys.exit(3)\n' > fail.py
    run --no-tui -- python3 fail.py
    ls -la "$W"
} > "$OUTDIR/profile_real.txt" 2>&1
tail -60 "$OUTDIR/profile_real.txt"
