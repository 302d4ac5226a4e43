"""Modules kept at the path they had before they moved into :mod:`onlinelearn.shell`, for code
written against that path outside this package.  Such a module forwards every name."""

from __future__ import annotations

__all__ = ["forwarding"]


def forwarding(moved):
    """``(__all__, __getattr__, __dir__)`` for a module kept at a former path: every name is
    looked up in ``moved`` when it is asked for (PEP 562), so the former path always gives the
    moved module's objects, patched ones included."""

    def __getattr__(name):
        return getattr(moved, name)

    def __dir__():
        return dir(moved)

    names = [n for n in getattr(moved, "__all__", dir(moved)) if not n.startswith("_")]
    return names, __getattr__, __dir__
