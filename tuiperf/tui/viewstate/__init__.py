"""The viewer's headless state: what a screen shows and how a key changes it, kept apart
from the terminal (no Textual here; import-linter `viewstate-headless`, and
tests/unit/test_headless.py imports each module in a fresh interpreter).

    viewstate/
      diff.py       the diff view: which side is the baseline, the steps on screen, the
                    listed table and its rows

The widgets and screens above draw this state and dispatch keys to it (`tui-floors`).
"""
