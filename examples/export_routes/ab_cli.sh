#!/bin/bash
# usage: ab_cli.sh ROUNDS REPORT TREE... — `tuiperf summary REPORT -r kern` into an empty cache, a fresh process each, trees (paths) interleaved; medians and paired differences
R=$1; REP=$2; shift 2
for r in $(seq $R); do
  trees="$@"; [ $((r % 2)) = 0 ] && trees=$(echo "$@" | tr ' ' '\n' | tac | tr '\n' ' ')
  for t in $trees; do rm -rf ${TMPDIR:-/tmp}/ab_cli_cache; s=$(date +%s.%N); (cd $t && /work/main/.venv/bin/python -m tuiperf summary $REP -r kern --top 3 -q --cache-dir ${TMPDIR:-/tmp}/ab_cli_cache > /dev/null); e=$(date +%s.%N); echo "$t $(echo "$e - $s" | bc)"; done
done | python3 -c "
import sys, statistics as st
d={}
for line in sys.stdin:
    t,v=line.split(); d.setdefault(t,[]).append(float(v))
for t,v in d.items(): print(t, 'median %.3f' % st.median(v), 'min %.3f max %.3f n %d' % (min(v), max(v), len(v)))
ks=list(d)
if len(ks)==2:
    diff=[a-b for a,b in zip(d[ks[0]], d[ks[1]])]
    print(ks[0],'-',ks[1],'median %+.0f ms' % (1000*st.median(diff)), ks[1], 'faster in', sum(x>0 for x in diff), 'of', len(diff))
"
