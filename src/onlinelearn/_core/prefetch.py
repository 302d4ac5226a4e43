"""A software prefetch for the compiled passes: ``prefetch(a, flat_index)``.

The averaged Euclidean pass writes two entries of a float64 array U (d+1 rows, K columns) per
nonzero of each updated row.  When U is larger than the core's private caches (news20: 9 MB),
those read-modify-writes miss and cost more than the rest of the pass.  The row's feature
indices are known before the update (the class y of the example from the start, the rival
after the score sweep), so the lines can be requested early and the misses overlap with the
sweep instead of stalling the update.  A prefetch is only a hint: it changes no value, never
faults (LLVM's ``llvm.prefetch``), and compiles to nothing on a target without it.
"""

from __future__ import annotations

import llvmlite
import llvmlite.ir as ir
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .config import njit
from .sparse import row_offset

#: U arrays with at least this many float64 entries (1 MiB) are prefetched; smaller ones stay
#: in the core's L2 cache (mnist: 785 x 10) and the hints would only cost instructions.
PREFETCH_MIN_ENTRIES = 1 << 17

#: The intrinsic's name is mangled by its pointer type: ``i8*`` while llvmlite's IR layer writes
#: typed pointers (every llvmlite so far), ``ptr`` once it writes opaque ones.
_TYPED = getattr(llvmlite, "ir_layer_typed_pointers_enabled", True)
_NAME = "llvm.prefetch.p0i8" if _TYPED else "llvm.prefetch.p0"


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that ``arr.ravel()[idx]`` (C-contiguous ``arr``) will be written soon."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _NAME)
        # rw = 1 (write), locality = 3 (keep in all levels), cache type = 1 (data)
        builder.call(fn, [ptr, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, types.intp), codegen


@njit(inline="always")
def prefetch_matrix_row(M, j):
    """Request every cache line of row j of the C-contiguous 2-D array ``M``: its first entry,
    one per line after it, and its last."""
    K = M.shape[1]
    base = j * K
    for kk in range(0, K, max(1, 64 // M.itemsize)):
        prefetch(M, base + kk)
    prefetch(M, base + K - 1)


@njit(inline="always")
def prefetch_column(indices, off, start, stop, M, k):
    """Request M[j, k] for the feature indices j of one row (positions ``start``..``stop``
    of a CSR batch, ``off`` its offset into ``indices``; unsigned positions, as the row loops)."""
    K = M.shape[1]
    o = np.uint64(off)
    for q in range(np.uint64(start), np.uint64(stop)):
        prefetch(M, np.intp(indices[q - o]) * K + k)


@njit
def prefetch_rows(data, indices, indptr, i, M):
    """Request every line of the rows of ``M`` (C-contiguous (R, K)) that row i of a CSR batch
    (dense: ``indices`` = arange(d) shared by the rows) will read.  Issued one example ahead,
    while the current one is swept and updated, it turns the sweep's misses on a weight matrix
    larger than the core's caches into hits (news20's 4.5 MB of float32 weights: the averaged
    PA-I pass 41 -> 31 ms)."""
    o = np.uint64(row_offset(data, indices, indptr[i]))
    for q in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        prefetch_matrix_row(M, np.intp(indices[q - o]))


@njit
def prefetch_entries(data, indices, indptr, i):
    """Request the lines of row i's values and feature indices (a CSR row, or a dense row with
    the shared ``indices`` = arange(d)).  For rows visited in a shuffled order, whose next row
    the hardware prefetcher cannot guess (mnist, a random order: the averaged PA-I pass
    71 -> 64 ms; news20 44 -> 36 ms)."""
    a = indptr[i]
    b = indptr[i + 1]
    if b <= a:
        return
    o = row_offset(data, indices, a)
    sd = max(1, 64 // data.itemsize)
    si = max(1, 64 // indices.itemsize)
    for q in range(a, b, sd):
        prefetch(data, q)
    prefetch(data, b - 1)
    for q in range(a - o, b - o, si):
        prefetch(indices, q)
    prefetch(indices, b - 1 - o)


def without_prefetch(dispatcher):
    """The compiled function ``dispatcher`` compiled again, uncached, with every prefetch gated
    on :data:`PREFETCH_MIN_ENTRIES` switched off (its module global out of reach) and the same
    fastmath and nogil options: the before/after of the hints, for tests and benchmarks."""
    import types

    import numba

    f = dispatcher.py_func
    opts = dispatcher.targetoptions
    g = dict(f.__globals__, PREFETCH_MIN_ENTRIES=1 << 62)
    return numba.njit(
        cache=False, fastmath=opts.get("fastmath", False), nogil=opts.get("nogil", False)
    )(types.FunctionType(f.__code__, g, f.__name__, f.__defaults__))
