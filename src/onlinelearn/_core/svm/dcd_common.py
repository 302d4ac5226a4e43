"""What the dual coordinate ascent solvers share: the clock, the random generator, row
operations with the intercept feature, and the columns of the history array."""

from __future__ import annotations

import time

import numpy as np
from numba import objmode

from ..config import njit
from ..sparse import copy_row, row_offset

#: columns of the history array
H_EPOCH, H_PRIMAL, H_DUAL, H_GAP, H_TIME, H_ACTIVE = range(6)
N_HIST = 6

#: what a solve counts (the ``stats`` array of the solvers; float64, counts are whole numbers):
#: coordinate steps (example visits, shrunk ones included), nonzeros read by the steps (dot
#: products and updates of w; Crammer-Singer: times the active classes), evaluations of a
#: problem's objectives, nonzeros they read, seconds spent in them, re-openings of the
#: active set (unshrinking or a finer eps), seconds of the whole compiled solve
STATS_FIELDS = (
    "steps", "step_nnz", "evals", "eval_nnz", "eval_seconds", "unshrink", "seconds",
)  # fmt: skip
ST_STEPS, ST_STEP_NNZ, ST_EVALS, ST_EVAL_NNZ, ST_EVAL_SECONDS, ST_UNSHRINK, ST_SECONDS = range(7)


@njit(nogil=False)
def now():
    """Wall clock (seconds) from inside compiled code."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(inline="always")
def rand_below(state, n):
    """A pseudo-random integer in [0, n) (0 < n < 2**32) from the xorshift64* generator whose
    state is ``state[0]`` (uint64, never 0): the high 32 bits of the output scaled by n
    (a multiplication and a shift instead of a 64-bit division; bias below n / 2**32)."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    hi = (x * np.uint64(2685821657736338717)) >> np.uint64(32)
    return np.int64((hi * np.uint64(n)) >> np.uint64(32))


@njit
def rng_state(seed):
    """A non-zero xorshift64* state from an integer seed (splitmix64 of the seed)."""
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    if z == np.uint64(0):
        z = np.uint64(1)
    st = np.empty(1, dtype=np.uint64)
    st[0] = z
    return st


@njit
def rows_with_cost(Ci):
    """Indices of the rows with a positive cost C_i (a row of cost 0 is not in the problem)."""
    m = 0
    for i in range(Ci.shape[0]):
        if Ci[i] > 0.0:
            m += 1
    base = np.empty(m, dtype=np.int64)
    m = 0
    for i in range(Ci.shape[0]):
        if Ci[i] > 0.0:
            base[m] = i
            m += 1
    return base


@njit(inline="always")
def shuffle_prefix(idx, act, rng):
    """A uniformly random permutation of ``idx[:act]`` in place (Fisher-Yates)."""
    for s in range(act):
        j = s + rand_below(rng, act - s)
        t = idx[s]
        idx[s] = idx[j]
        idx[j] = t


@njit(inline="always")
def row_dot(data, indices, indptr, i, w, b, d):
    """<w, x_i> (+ b w[d] for the intercept feature)."""
    start = indptr[i]
    off = row_offset(data, indices, start)
    s = 0.0
    for p in range(start, indptr[i + 1]):
        s += data[p] * w[indices[p - off]]
    if b != 0.0:
        s += b * w[d]
    return s


@njit(inline="always")
def count_evaluation(stats, work, t_start):
    """Add one evaluation of a problem's objectives to ``stats``: the nonzeros it read and
    the seconds since ``t_start``."""
    stats[ST_EVALS] += 1
    stats[ST_EVAL_NNZ] += work
    stats[ST_EVAL_SECONDS] += now() - t_start


@njit(inline="always")
def count_solve(stats, work, n_steps, t_start):
    """Close a solve's counts in ``stats``: the nonzeros its steps read since the last
    evaluation, its steps, and the seconds since ``t_start``."""
    stats[ST_STEP_NNZ] += work
    stats[ST_STEPS] += n_steps
    stats[ST_SECONDS] = now() - t_start


@njit(inline="always")
def write_row(hist, row, epoch, primal, dual, t, n_active):
    """One history row: epoch, primal, dual, gap, seconds, active variables."""
    hist[row, H_EPOCH] = epoch
    hist[row, H_PRIMAL] = primal
    hist[row, H_DUAL] = dual
    hist[row, H_GAP] = primal - dual
    hist[row, H_TIME] = t
    hist[row, H_ACTIVE] = n_active


@njit(inline="always")
def evaluation_due(hist, row, epoch, last, work, ecost, tol, gap, primal):
    """Whether the schedule (``check_every`` = 0) evaluates the objectives after this epoch;
    ``row`` is the last history row (evaluated at epoch ``last``), ``work`` the nonzeros the
    coordinate steps read since then, ``ecost`` what that evaluation read, ``gap`` and
    ``primal`` the last values.  Due:

    * once the steps have cost 2 + 2 ln(gap / (tol P)) times the last evaluation (the
      farther the gap from tol, the rarer the evaluations: at most about 1 / (2 + 2 ln ...)
      of the work goes into them);
    * once the epochs since the last evaluation reach a quarter of all, at least 10 (when
      shrinking makes epochs cheap: at most ~25% more epochs than needed), 20 before the
      first evaluation (the start says nothing about the rate of convergence);
    * once they reach the epochs that the rate of the last two evaluations (ln of the ratio
      of their gaps per epoch) needs to bring the gap down to tol P.
    """
    far = gap / (tol * primal) if tol > 0.0 else np.inf
    rho = 2.0 + 2.0 * np.log(far) if far > 1.0 else 2.0
    if work >= rho * ecost:
        return True
    if epoch - last >= max(10 if row > 0 else 20, epoch // 4):
        return True
    if row >= 1 and tol > 0.0 and far > 1.0:
        g0 = hist[row - 1, H_GAP]
        g1 = hist[row, H_GAP]
        if 0.0 < g1 < g0:
            rate = np.log(g0 / g1) / (hist[row, H_EPOCH] - hist[row - 1, H_EPOCH])
            if epoch - last >= np.log(far) / rate:
                return True
    return False


# ---------------------------------------------------------------------------- packed rows
def node_dtype(value_dtype):
    """One nonzero of a packed row: its feature index and value side by side, without
    padding (12 bytes for float64 values, 8 for float32), so that a row is one contiguous run
    of memory (unaligned float64 loads cost nothing extra on x86-64 and arm64; news20
    one-vs-rest: 0.86-0.96x the time of 16-byte aligned records, interleaved)."""
    return np.dtype([("j", np.int32), ("v", value_dtype)], align=False)


@njit
def _fill_nodes(data, indices, indptr, b, d, ptr, node_j, node_v):
    n = indptr.shape[0] - 1
    q = 0
    for i in range(n):
        q = copy_row(data, indices, indptr, i, b, d, node_j, node_v, q)
        ptr[i + 1] = q


@njit
def exact_in_float32(data):
    """Whether every value of ``data`` (float64) is a float32 number (stops at the first
    that is not)."""
    for p in range(data.shape[0]):
        if np.float64(np.float32(data[p])) != data[p]:
            return False
    return True


def pack_rows(data, indices, indptr, b, d):
    """(nodes, ptr): the rows of a CSR batch (dense: ``indices`` = arange(d) shared) as one
    array of (feature, value) records, row i at ``nodes[ptr[i]:ptr[i + 1]]``, with the
    intercept feature (index d, value b) appended to every row when b != 0.  Values are
    stored as float32 (8-byte records) when they and b are float32 numbers, as float64 values
    that are exactly float32 are (binary or small-integer features, a9a, w8a): the same
    numbers, half the memory read per row; otherwise as float64."""
    n = indptr.shape[0] - 1
    dense = indices.shape[0] != data.shape[0]
    nnz = n * indices.shape[0] if dense else int(indptr[-1])
    b32 = np.float64(np.float32(b)) == b
    vdtype = np.dtype(np.float32) if b32 and (
        data.dtype == np.float32 or exact_in_float32(data[: n * indices.shape[0] if dense else nnz])
    ) else np.dtype(np.float64)  # fmt: skip
    nodes = np.empty(nnz + (n if b != 0.0 else 0), dtype=node_dtype(vdtype))
    ptr = np.zeros(n + 1, dtype=np.int64)
    _fill_nodes(data, indices, indptr, float(b), int(d), ptr, nodes["j"], nodes["v"])
    return nodes, ptr


@njit(inline="always")
def node_dot(nodes, ptr, i, w):
    """<w, x_i> over a packed row.  The positions and feature indices are cast to unsigned
    integers: numba then omits the wraparound of negative indices on every access (news20,
    rows in a random order: 0.75-0.8x the time of the signed loop, as fast as the same loop
    in C)."""
    s = 0.0
    for p in range(np.uint64(ptr[i]), np.uint64(ptr[i + 1])):
        s += nodes[p].v * w[np.uint32(nodes[p].j)]
    return s


@njit(inline="always")
def node_axpy(nodes, ptr, i, a, w):
    """w += a x_i over a packed row (unsigned positions and indices, as :func:`node_dot`)."""
    for p in range(np.uint64(ptr[i]), np.uint64(ptr[i + 1])):
        w[np.uint32(nodes[p].j)] += a * nodes[p].v


@njit(inline="always")
def node_sqnorm(nodes, ptr, i):
    """||x_i||^2 over a packed row (float32 values squared in double precision)."""
    s = 0.0
    for p in range(ptr[i], ptr[i + 1]):
        v = np.float64(nodes[p].v)
        s += v * v
    return s
