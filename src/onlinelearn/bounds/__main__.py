"""``python -m onlinelearn.bounds``."""

from .cli import main

raise SystemExit(main())
