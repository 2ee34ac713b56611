"""Text for people: every renderer of the headless commands and the viewer's text panes
(Rich renderables and plain strings; no Textual, no numbers of its own).

    report/
      tables.py     Rich tables of `info`, `summary` and `ncu --link` (make_console, cells)
      findings.py   findings as text (Rich), Markdown and JSON (`tuiperf analyze`, fixes panel)
      budget.py     the step budget as a stacked bar and a table
      diff.py       `tuiperf diff` as text and CSV rows, the cells of the diff view
      roofline.py   the roofline as a text plot (braille or ASCII)
      memory.py     the memory chart of one ncu kernel as text
      source.py     an ncu kernel's source hot spots as text

The numbers come from analysis/ (step budget, diff, roofline), model/ and load/ (ncu source
pages); report/ sits above analysis/ and beside export/ (import-linter `floors`). Inside it,
findings draws with budget's bar and memory with roofline's axis labels (`report-floors`).
"""
