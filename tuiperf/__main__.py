from tuiperf.cli import run

run()
