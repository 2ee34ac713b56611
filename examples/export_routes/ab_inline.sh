#!/bin/bash
# usage: [TREE=PATH REPORT=ARROWDIR] ab_inline.sh ROUNDS — one tree, its entry writes in line against behind (bench/entry_phases.py), alternating; medians of the open
R=$1
for r in $(seq $R); do
  for arm in $( [ $((r % 2)) = 0 ] && echo "inline behind" || echo "behind inline"); do
    x=""; [ $arm = inline ] && x="--inline"
    echo "$arm $(PYTHONPATH=${TREE:-/work/main} /work/main/.venv/bin/python ${PHASES:-/work/main/bench/entry_phases.py} ${REPORT:-/work/main/bench/data/x400_arrowdir} $x | grep -E '^(opened)' | cut -d' ' -f2)"
  done
done | python3 -c "
import sys, statistics as st
d={}
for line in sys.stdin:
    t,v=line.split(); d.setdefault(t,[]).append(float(v))
for t,v in d.items(): print(t, 'median %.3f' % st.median(v), 'min %.3f max %.3f n %d' % (min(v), max(v), len(v)))
ks=list(d)
diff=[a-b for a,b in zip(d['inline'], d['behind'])]
print('inline - behind median %+.0f ms' % (1000*st.median(diff)), 'behind faster in', sum(x>0 for x in diff), 'of', len(diff))
"
