"""The former path of :mod:`onlinelearn.shell.config`, kept while code written against it exists
(the ``onlinelearn.framework`` package, written in parallel, imports ``onlinelearn._config.njit``).

Not a copy: ``onlinelearn._config`` *is* ``onlinelearn.shell.config`` (one module object under two
names), so a flag set or patched through either name is seen through the other.  New code
imports :mod:`onlinelearn.shell.config`.
"""

import sys

from .shell import config as _moved

sys.modules[__name__] = _moved
