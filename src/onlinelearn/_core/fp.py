"""Floating-point tests that survive the project's fastmath flags.

numba compiles ``math.isfinite(v)`` (and NumPy's ``isfinite`` on floats) as "``v - v`` is
ordered"; under the ``reassoc`` flag of :data:`onlinelearn._core.config.FASTMATH` LLVM may fold
``v - v`` to 0, and the test to True.  It did in the Euclidean pass: a check written
``not math.isfinite(sq)`` never fired on a NaN ``sq`` (every step, dense and CSR, float32 and
float64), although the same call in a small function did.  :func:`finite` is written as
ordered comparisons, which no flag of ours lets LLVM fold (that takes ``nnan``/``ninf``,
which the project leaves out).  Compiled code uses it instead of ``math.isfinite``
(``tests/test_config.py`` checks the sources).
"""

from __future__ import annotations

from .config import njit

#: the largest finite float64
FMAX = 1.7976931348623157e308


@njit
def finite(v):
    """v is neither NaN nor infinite (False for NaN: every ordered comparison with it is)."""
    return v == v and -FMAX <= v <= FMAX
