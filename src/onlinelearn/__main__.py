"""``python -m onlinelearn``: the command line interface (see :mod:`onlinelearn.cli`)."""

import sys

from onlinelearn.cli import main

if __name__ == "__main__":
    sys.exit(main())
