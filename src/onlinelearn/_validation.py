"""The former path of :mod:`onlinelearn.shell.validation`, kept while code written against it
exists (the ``onlinelearn.framework`` package, written in parallel, imports
``onlinelearn._validation``).

Every name is looked up in :mod:`onlinelearn.shell.validation` when it is asked for (PEP 562),
so this path always gives the objects of the moved module, patched ones included.  New code
imports :mod:`onlinelearn.shell.validation`.
"""

from .shell import validation as _moved

__all__ = [n for n in getattr(_moved, "__all__", dir(_moved)) if not n.startswith("_")]


def __getattr__(name):
    return getattr(_moved, name)


def __dir__():
    return dir(_moved)
