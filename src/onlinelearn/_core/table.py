"""Arrays handed to compiled code as one argument: a table of their addresses and shapes.

Numba's dispatch unboxes each array argument (about 0.1 us an array); a compiled function that
reads a dozen arrays on every call of a few microseconds (one event of an online learner) spends
more on its arguments than on its work.  :func:`table` writes, for a list of 1-D or 2-D numpy
arrays, one int64 row (address, rows, columns) each; compiled code takes views of them back with
:func:`array_of`, given the table, a row and the kind of the array (:data:`F1`: float64, 1-D;
:data:`F2`: float64, 2-D; :data:`I1`, :data:`I2`: int64; :data:`I32`: int32, 1-D): one
argument instead of many.

The views carry no reference to the arrays: the table is valid while the arrays it was made
from are alive and unmoved, so whoever keeps a table keeps the arrays referenced beside it,
makes it again when any of them is replaced, and never lets it leave the process (no pickling,
no copying).  :func:`table` takes only C-contiguous, aligned, writeable arrays.
"""

from __future__ import annotations

import numpy as np
from numba import carray, literal_unroll, types
from numba.core import cgutils
from numba.extending import intrinsic

from .config import njit

__all__ = ["F1", "F2", "I1", "I2", "I32", "array_of", "table"]


def table(arrays, previous=None):
    """The (address, rows, columns) table of ``arrays``, 1-D or 2-D numpy arrays that are
    C-contiguous, aligned and writeable (else ValueError; the module docstring says how long
    the table is valid).  ``previous``: (arrays, table) of an earlier call, whose rows are
    taken again for the arrays that are still there (the same objects, in the same places)."""
    if previous is not None and len(previous[0]) == len(arrays):
        tab = previous[1].copy()
        for i, (a, b) in enumerate(zip(arrays, previous[0], strict=True)):
            if a is not b:
                if not a.flags.carray:
                    raise ValueError("a table takes writeable C-contiguous arrays")
                tab[i] = (a.ctypes.data, a.shape[0], a.shape[1] if a.ndim == 2 else 0)
        return tab
    for a in arrays:
        if not a.flags.carray:
            raise ValueError("a table takes writeable C-contiguous arrays")
    tab = np.array([(0, a.shape[0], a.shape[1] if a.ndim == 2 else 0) for a in arrays],
                   dtype=np.int64)  # fmt: skip
    _addresses(tuple(arrays), tab)  # (ndarray.ctypes.data: 1 us an array, several x this)
    return tab


@njit
def _addresses(arrays, tab):
    i = 0
    for a in literal_unroll(arrays):
        tab[i, 0] = a.ctypes.data
        i += 1


@intrinsic
def _pointer(typingctx, address):
    """The int64 ``address`` as a void pointer (for ``numba.carray``)."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


#: the kinds of view (:func:`array_of`): float64 1-D and 2-D, int64 1-D and 2-D, int32 1-D
F1, F2, I1, I2, I32 = (np.zeros(0), np.zeros((0, 0)), np.zeros(0, np.int64),
                       np.zeros((0, 0), np.int64), np.zeros(0, np.int32))  # fmt: skip


@njit
def array_of(tab, i, like):
    """The array of row ``i`` of the table, of the dtype and number of dimensions of ``like``
    (one of :data:`F1`, :data:`F2`, :data:`I1`, :data:`I2`, :data:`I32`)."""
    if like.ndim == 1:
        return carray(_pointer(tab[i, 0]), (tab[i, 1],), like.dtype)
    return carray(_pointer(tab[i, 0]), (tab[i, 1], tab[i, 2]), like.dtype)
