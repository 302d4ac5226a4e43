"""Former path of :mod:`onlinelearn.shell.config` (the ``onlinelearn.framework`` package, written
in parallel, imports ``onlinelearn._config.njit``); new code imports the moved module."""

from .shell import config
from .shell.former_paths import forwarding

__all__, __getattr__, __dir__ = forwarding(config)
del config, forwarding
