"""Kernel values as a small compiled program: one postfix program per kernel expression.

What
    A kernel built with the algebra of :mod:`onlinelearn.kernels` (sums, products, non-negative
    scaling, polynomials with non-negative coefficients, exp, restriction to features) is
    flattened into a postfix program over a stack of floats.  :func:`pair_value` runs it for one
    pair of rows (x, z); :func:`gram_block` fills a Gram block; the kernel SVM and the online
    learners call :func:`pair_value` from their own compiled loops.

Program
    ``ops`` int64[n_ops, 3]: rows (code, a, b).  Leaves push one value; operators pop and push.

    ======== ========================================================= =======================
    code     value pushed                                              a, b
    ======== ========================================================= =======================
    LINEAR   <x, z>_S                                                  leaf, -
    POLY     (g <x, z>_S + c0)^p          g=par[b], c0=par[b+1], p=par[b+2] (integer)    leaf, b
    RBF      exp(-g ||x - z||_S^2)        g = par[b]                    leaf, b
    LAPLACE  exp(-g ||x - z||_{1,S})      g = par[b]                    leaf, b
    COSINE   <x, z>_S / (||x||_S ||z||_S), 0 when a norm is 0           leaf, -
    CONST    par[a]                                                    a, -
    ADD      pop v, u; push u + v                                      -, -
    MUL      pop v, u; push u v                                        -, -
    SCALE    pop u; push par[a] u                                      a, -
    POLYOF   pop u; push sum_{i<b} par[a+i] u^i (Horner)               a, b
    EXP      pop u; push exp(u)                                        -, -
    ======== ========================================================= =======================

Where
    x, z      two rows, dense (``indices`` not used: column j sits at ``data[start + j]``) or CSR
              (sorted ``indices``); a row is (data, indices, start, stop, dense)
    S         the column range [lo, hi) = ``ranges[leaf]`` of the leaf: a kernel on a subset of
              the features reads the columns that the Python layer appended for that subset
    norms     ``||x||_S^2`` per row and leaf, computed once per row (:func:`row_leaf_sqnorms`)

All arithmetic is in float64 (the Python layer hands float64 rows; float32 values would be
widened value by value).
"""

from __future__ import annotations

import math

import numpy as np

from ..config import njit
from ..fp import finite  # noqa: F401 (re-exported to the kernel modules)

LINEAR = 0
POLY = 1
RBF = 2
LAPLACE = 3
COSINE = 4
CONST = 5
ADD = 6
MUL = 7
SCALE = 8
POLYOF = 9
EXP = 10

#: codes below this one are leaves that read the rows
N_LEAF_CODES = 5


@njit
def _dot(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense, lo, hi):
    """<x, z> over the columns [lo, hi)."""
    s = 0.0
    # unsigned positions (rows and column ranges are never negative): numba then drops its
    # test for a negative index on every access, and the dense loop vectorises (mnist rows,
    # 784 columns: 0.96 -> 0.17 ns per column)
    ua = np.uint64(a0)
    ub = np.uint64(b0)
    if adense and bdense:
        for j in range(np.uint64(lo), np.uint64(hi)):
            s += np.float64(ad[ua + j]) * np.float64(bd[ub + j])
    elif adense:
        for q in range(ub, np.uint64(b1)):
            j = bi[q]
            if lo <= j < hi:
                s += np.float64(ad[ua + np.uint64(j)]) * np.float64(bd[q])
    elif bdense:
        for q in range(ua, np.uint64(a1)):
            j = ai[q]
            if lo <= j < hi:
                s += np.float64(ad[q]) * np.float64(bd[ub + np.uint64(j)])
    else:
        p = a0
        q = b0
        while p < a1 and q < b1:
            ja = ai[p]
            jb = bi[q]
            if ja == jb:
                if lo <= ja < hi:
                    s += np.float64(ad[p]) * np.float64(bd[q])
                p += 1
                q += 1
            elif ja < jb:
                p += 1
            else:
                q += 1
    return s


@njit
def _dist_mixed(dd, d0, pd, pi, p0, p1, lo, hi, l1):
    """_dist of a dense row D and a sparse row P:
    sum_j f(D_j) + sum_{j in P} (f(D_j - P_j) - f(D_j))."""
    s = 0.0
    ud = np.uint64(d0)  # unsigned positions, as in _dot
    for j in range(np.uint64(lo), np.uint64(hi)):
        t = np.float64(dd[ud + j])
        s += abs(t) if l1 else t * t
    for q in range(np.uint64(p0), np.uint64(p1)):
        j = pi[q]
        if lo <= j < hi:
            u = np.float64(dd[ud + np.uint64(j)])
            t = u - np.float64(pd[q])
            s += (abs(t) - abs(u)) if l1 else (t * t - u * u)
    return s if s > 0.0 else 0.0


@njit
def _dist(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense, lo, hi, l1):
    """||x - z||^2 over [lo, hi) (``l1`` False) or ||x - z||_1 (``l1`` True), summed directly
    from the differences (no cancellation of ||x||^2 + ||z||^2 - 2 <x, z>)."""
    s = 0.0
    if adense and bdense:
        ua = np.uint64(a0)  # unsigned positions, as in _dot
        ub = np.uint64(b0)
        for j in range(np.uint64(lo), np.uint64(hi)):
            t = np.float64(ad[ua + j]) - np.float64(bd[ub + j])
            s += abs(t) if l1 else t * t
        return s
    if adense:
        return _dist_mixed(ad, a0, bd, bi, b0, b1, lo, hi, l1)
    if bdense:
        return _dist_mixed(bd, b0, ad, ai, a0, a1, lo, hi, l1)
    p = a0
    q = b0
    while p < a1 or q < b1:
        ja = ai[p] if p < a1 else 2147483647
        jb = bi[q] if q < b1 else 2147483647
        if ja == jb:
            t = np.float64(ad[p]) - np.float64(bd[q])
            j = ja
            p += 1
            q += 1
        elif ja < jb:
            t = np.float64(ad[p])
            j = ja
            p += 1
        else:
            t = -np.float64(bd[q])
            j = jb
            q += 1
        if lo <= j < hi:
            s += abs(t) if l1 else t * t
    return s


@njit
def _ipow(u, p):
    """u^p for an integer p >= 0 by repeated squaring (exact for small p, no log/exp)."""
    r = 1.0
    b = u
    n = p
    while n > 0:
        if n & 1:
            r *= b
        b *= b
        n >>= 1
    return r


@njit
def leaf_value(code, a, b, par, ranges, ad, ai, a0, a1, adense, anorm, bd, bi, b0, b1, bdense,
               bnorm):  # fmt: skip
    """The value of the leaf ``code`` (a, b its row of ``ops``) for the pair of rows (x, z), in
    the steps of :func:`pair_value`'s leaves (which the one-event road of the kernel online
    learners calls directly for a kernel of one leaf: ``tests/test_events_kernel.py`` checks
    that both give the same values, bit for bit)."""
    lo = ranges[a, 0]
    hi = ranges[a, 1]
    if code == RBF:
        return math.exp(-par[b] * _dist(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense,
                                        lo, hi, False))  # fmt: skip
    if code == LAPLACE:
        return math.exp(-par[b] * _dist(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense,
                                        lo, hi, True))  # fmt: skip
    dt = _dot(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense, lo, hi)
    if code == LINEAR:
        return dt
    if code == POLY:
        return _ipow(par[b] * dt + par[b + 1], int(par[b + 2]))
    den = anorm[a] * bnorm[a]  # COSINE
    return dt / math.sqrt(den) if den > 0.0 else 0.0


@njit
def pair_value(ops, par, ranges, ad, ai, a0, a1, adense, anorm, bd, bi, b0, b1, bdense, bnorm,
               stack):  # fmt: skip
    """k(x, z) for one pair of rows: runs the postfix program (module docstring).

    ``anorm``, ``bnorm``: the rows' ||.||_S^2 per leaf (float64[n_leaves]); ``stack`` scratch of
    length >= n_ops."""
    sp = 0
    for o in range(ops.shape[0]):
        code = ops[o, 0]
        a = ops[o, 1]
        b = ops[o, 2]
        if code < N_LEAF_CODES:
            lo = ranges[a, 0]
            hi = ranges[a, 1]
            if code == RBF:
                v = math.exp(-par[b] * _dist(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense,
                                             lo, hi, False))  # fmt: skip
            elif code == LAPLACE:
                v = math.exp(-par[b] * _dist(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense,
                                             lo, hi, True))  # fmt: skip
            else:
                dt = _dot(ad, ai, a0, a1, adense, bd, bi, b0, b1, bdense, lo, hi)
                if code == LINEAR:
                    v = dt
                elif code == POLY:
                    v = _ipow(par[b] * dt + par[b + 1], int(par[b + 2]))
                else:  # COSINE
                    den = anorm[a] * bnorm[a]
                    v = dt / math.sqrt(den) if den > 0.0 else 0.0
            stack[sp] = v
            sp += 1
        elif code == CONST:
            stack[sp] = par[a]
            sp += 1
        elif code == ADD:
            stack[sp - 2] += stack[sp - 1]
            sp -= 1
        elif code == MUL:
            stack[sp - 2] *= stack[sp - 1]
            sp -= 1
        elif code == SCALE:
            stack[sp - 1] *= par[a]
        elif code == POLYOF:
            u = stack[sp - 1]
            r = 0.0
            for i in range(b - 1, -1, -1):
                r = r * u + par[a + i]
            stack[sp - 1] = r
        else:  # EXP
            stack[sp - 1] = math.exp(stack[sp - 1])
    return stack[0]


@njit
def row_bounds(indptr, i, n_cols, dense):
    """(start, stop) of row i: dense rows are i*n_cols .. (i+1)*n_cols."""
    if dense:
        return i * n_cols, (i + 1) * n_cols
    return indptr[i], indptr[i + 1]


@njit
def row_leaf_sqnorms(data, indices, indptr, n_rows, n_cols, dense, ranges, out):
    """out[i, leaf] = ||x_i||^2 over the columns of that leaf."""
    L = ranges.shape[0]
    for i in range(n_rows):
        s0, s1 = row_bounds(indptr, i, n_cols, dense)
        for leaf in range(L):
            out[i, leaf] = _dot(data, indices, s0, s1, dense, data, indices, s0, s1, dense,
                                ranges[leaf, 0], ranges[leaf, 1])  # fmt: skip


@njit
def gram_block(ops, par, ranges, ad, ai, ap, an, adense, anorm, bd, bi, bp, bn, bdense, bnorm,
               n_cols, out):  # fmt: skip
    """out[i, j] = k(a_i, b_j) for every row i of A (``an`` rows) and j of B (``bn`` rows)."""
    stack = np.zeros(ops.shape[0] + 1)
    for i in range(an):
        a0, a1 = row_bounds(ap, i, n_cols, adense)
        for j in range(bn):
            b0, b1 = row_bounds(bp, j, n_cols, bdense)
            out[i, j] = pair_value(ops, par, ranges, ad, ai, a0, a1, adense, anorm[i],
                                   bd, bi, b0, b1, bdense, bnorm[j], stack)  # fmt: skip


@njit
def gram_symmetric(ops, par, ranges, ad, ai, ap, an, adense, anorm, n_cols, out):
    """out = k(A, A): the upper triangle computed, the lower one copied (exactly symmetric)."""
    stack = np.zeros(ops.shape[0] + 1)
    for i in range(an):
        a0, a1 = row_bounds(ap, i, n_cols, adense)
        for j in range(i, an):
            b0, b1 = row_bounds(ap, j, n_cols, adense)
            v = pair_value(ops, par, ranges, ad, ai, a0, a1, adense, anorm[i],
                           ad, ai, b0, b1, adense, anorm[j], stack)  # fmt: skip
            out[i, j] = v
            out[j, i] = v


@njit
def diag_values(ops, par, ranges, ad, ai, ap, an, adense, anorm, n_cols, out):
    """out[i] = k(a_i, a_i)."""
    stack = np.zeros(ops.shape[0] + 1)
    for i in range(an):
        a0, a1 = row_bounds(ap, i, n_cols, adense)
        out[i] = pair_value(ops, par, ranges, ad, ai, a0, a1, adense, anorm[i],
                            ad, ai, a0, a1, adense, anorm[i], stack)  # fmt: skip
