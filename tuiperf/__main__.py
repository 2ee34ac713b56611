import sys

from tuiperf.cli import main

sys.exit(main())
