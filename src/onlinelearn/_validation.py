"""The former path of :mod:`onlinelearn.shell.validation`, kept while code written against it
exists (the ``onlinelearn.framework`` package, written in parallel, imports
``onlinelearn._validation``).

Not a copy: ``onlinelearn._validation`` *is* ``onlinelearn.shell.validation`` (one module object
under two names), so a check patched through either name is seen through the other.  New code
imports :mod:`onlinelearn.shell.validation`.
"""

import sys

from .shell import validation as _moved

sys.modules[__name__] = _moved
