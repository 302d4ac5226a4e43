"""Compilation options for the numba core, in one place.

``fastmath`` is enabled with an explicit flag set that leaves out ``nnan`` and
``ninf``: the core must be able to *see* a non-finite value (to report it), and
LLVM may otherwise fold ``x != x`` to ``False``.  ``cache=True`` writes the
compiled machine code next to the sources (``__pycache__``) so that a second
process does not compile again; where no cache directory is writable, functions are compiled
without the cache instead of failing at import.  ``tests/test_config.py`` checks these flags.
"""

from __future__ import annotations

import os

#: fastmath flags: reassociation, contraction, reciprocal, no signed zeros, afn.
FASTMATH: frozenset[str] = frozenset({"reassoc", "contract", "arcp", "nsz", "afn"})

#: Disable the on-disk cache with ONLINELEARN_NUMBA_CACHE=0 (e.g. read-only installs).
CACHE: bool = os.environ.get("ONLINELEARN_NUMBA_CACHE", "1") != "0"

JIT_OPTIONS: dict = {"nopython": True, "nogil": True, "cache": CACHE, "fastmath": set(FASTMATH)}


def _jit(opts: dict, func):
    """``numba.jit(**opts)(func)``, without the on-disk cache when numba finds no writable
    place for it (neither beside the sources, nor ``NUMBA_CACHE_DIR``, nor the user's cache
    directory under HOME): compiling in every process is slower, failing to import is worse."""
    import numba

    try:
        return numba.jit(**opts)(func)
    except RuntimeError as exc:
        if not (opts.get("cache") and "cannot cache" in str(exc)):
            raise
        return numba.jit(**dict(opts, cache=False))(func)


def njit(*args, **kwargs):
    """``numba.njit`` with the project's options (overridable per function); falls back to
    no on-disk cache when no cache directory is writable."""
    opts = dict(JIT_OPTIONS)
    opts.update(kwargs)
    if args and callable(args[0]):
        return _jit(opts, args[0])
    return lambda func: _jit(opts, func)
