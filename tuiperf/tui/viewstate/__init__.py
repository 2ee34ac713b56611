"""The viewer's headless state: what a screen shows and how a key changes it, kept apart
from the terminal (no Textual here: import-linter `viewstate-headless`, and
tests/unit/test_headless.py imports each module in a fresh interpreter). Each is a plain
object the unit tests drive without a terminal; the widgets and screens above draw it and
dispatch keys to it (`tui-floors`).

    viewstate/
      timeline.py   the timeline: lanes, viewport and zoom stack, cursor row, selection
      events.py     the events table: table, query, sort, cursor, per-name summary
      matches.py    the events table's rows as matches on the timeline (`n`/`N`, highlights)
      diff.py       the diff view: which side is the baseline, the steps on screen, the
                    listed table and its rows, their cells
      flame.py      the CPU samples screen: one thread's samples as a tree, top-down or
                    bottom-up
      layout.py     lane control: hidden, pinned and moved lanes, folded groups, OS runtime
                    lanes bundled; saved per report
      range.py      the range statistics screen (`R`): which range (marks, selection,
                    visible window) and the table's sections

They read model/ (lanes, queries), analysis/ (the diff) and report/ (the diff's cells); no
module here imports another tui module.
"""
