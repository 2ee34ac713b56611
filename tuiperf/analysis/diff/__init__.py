"""`tuiperf diff`: two timeline reports side by side (numbers only; report/diff draws them,
tui/viewstate/diff holds the viewer's state over them). compare measures each side on its
own (the steady step, its budget, kernels, copies, API calls, communication, the findings
engine's results) and matches them: a verdict, the rows largest change first, the reasons.

A room of one module, named for what it does (not diff/diff.py). It sits on the top floor
of analysis/ because it runs the engine on both sides; ranks/ beside it never imports it
(`analysis-floors`)."""
