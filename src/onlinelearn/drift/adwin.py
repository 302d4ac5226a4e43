r"""ADWIN: adaptive windowing (Bifet & Gavaldà 2007, "Learning from time-changing data with
adaptive windowing", SDM 2007).

ADWIN keeps a window :math:`W` of the most recent values, as ADWIN2's exponential histogram:
buckets of :math:`2^i` values (row :math:`i`), at most :math:`M` (``max_buckets``) per row; when
a row holds :math:`M + 1`, its two oldest buckets merge into one of the next row (their sums
add; their sums of squared deviations add with :math:`n_1 n_2 (\mu_1 - \mu_2)^2 / (n_1 + n_2)`,
Chan et al.'s merge).  The window's sum of squared deviations :math:`S_W` is kept exactly
(Welford's update on insertion, the same merge undone on deletion).

Every ``clock`` values, once the window holds more than ``grace_period``, every split of
:math:`W` at a bucket boundary into an older part :math:`W_0` and a newer :math:`W_1`
(sizes :math:`n_0, n_1 \ge` ``min_window_length`` :math:`= \ell`, means
:math:`\hat\mu_0, \hat\mu_1`) is tested, oldest split first:

.. math::

    |\hat\mu_0 - \hat\mu_1| > \epsilon_{cut}
    = \sqrt{\tfrac{2}{m}\,\sigma_W^2\,\delta'} + \tfrac{2}{3m}\,\delta', \qquad
    \tfrac{1}{m} = \tfrac{1}{n_0 - \ell + 1} + \tfrac{1}{n_1 - \ell + 1}, \quad
    \delta' = \ln\frac{2 \ln |W|}{\delta}, \quad \sigma_W^2 = S_W / |W|

(the paper's Bernstein form of :math:`\epsilon_{cut}`, section 4, with its :math:`\ln(2/\delta')`,
:math:`\delta' = \delta / \ln n`, as in MOA and River).  When a split passes, the oldest
bucket is dropped, ``drift_detected`` is set, and the splits are tested again from the oldest
until none passes.  As in River, the next ``update`` then starts from an empty window.
The cut assumes values in [0, 1], the paper's setting (its term :math:`\tfrac{2}{3m}\delta'`
is not scale-free): rescale values of another range, or even rounding errors in the sums of
large values can pass it.

The alarms are River's (``river.drift.ADWIN``, 0.26) on the same stream: the same bucket
schedule, tests and floating-point order (``tests/test_drift.py`` checks it).  Unlike River,
``max_buckets`` must be at least 2 (with 1, a row can empty in the middle of the histogram)
and ``min_window_length`` at least 1; ``variance`` is the window's variance (River's returns
its sum of squared deviations) and ``n_detections`` counts every alarm since the detector was
created (River's restarts at 0 with the window).

Parameters
----------
delta : float in (0, 1), default 0.002
    Confidence: a larger delta raises alarms sooner and more often.
clock : int >= 1, default 32
    Test for a change every ``clock`` values.
max_buckets : int >= 2, default 5
    :math:`M`, buckets kept per row.
min_window_length : int >= 1, default 5
    :math:`\ell`, the smallest sub-window tested.
grace_period : int >= 0, default 10
    No test until the window holds more than this many values.

Example::

    >>> import numpy as np
    >>> from onlinelearn.drift import ADWIN
    >>> rng = np.random.default_rng(1)
    >>> stream = np.r_[rng.integers(0, 2, 1000), rng.integers(4, 8, 1000)]
    >>> adwin = ADWIN()
    >>> adwin.update_many(stream)  # the values change at index 1000
    array([1023])
    >>> adwin.drift_detected, adwin.width
    (False, 976)
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from ._base import DriftDetector, check_range

#: rows of the histogram: row i holds buckets of 2**i values, so 62 rows hold any int64 count
_ROWS = 62
# positions in the float and int state arrays
_TOTAL, _VAR, _WIDTH = 0, 1, 2
_TICK, _NROWS, _DRIFT, _NDET = 0, 1, 2, 3


@njit(fastmath=False)
def _shift(totals, variances, counts, row, k):
    """Drop the ``k`` oldest buckets of ``row``."""
    c = counts[row]
    for j in range(c - k):
        totals[row, j] = totals[row, j + k]
        variances[row, j] = variances[row, j + k]
    for j in range(c - k, c):
        totals[row, j] = 0.0
        variances[row, j] = 0.0
    counts[row] = c - k


@njit(fastmath=False)
def _insert(x, fs, ints, totals, variances, counts, m):
    counts[0] += 1
    totals[0, counts[0] - 1] = x
    variances[0, counts[0] - 1] = 0.0
    fs[_WIDTH] += 1.0
    w = fs[_WIDTH]
    if w > 1.0:
        d = x - fs[_TOTAL] / (w - 1.0)
        fs[_VAR] += (w - 1.0) * d * d / w
    fs[_TOTAL] += x
    row = 0
    while counts[row] == m + 1:  # merge the two oldest buckets of a full row into the next
        size = float(2**row)
        t0, t1 = totals[row, 0], totals[row, 1]
        mu0, mu1 = t0 / size, t1 / size
        v01 = variances[row, 0] + variances[row, 1] + size * 0.5 * (mu0 - mu1) * (mu0 - mu1)
        if row + 1 >= ints[_NROWS]:
            ints[_NROWS] = row + 2
        counts[row + 1] += 1
        totals[row + 1, counts[row + 1] - 1] = t0 + t1
        variances[row + 1, counts[row + 1] - 1] = v01
        _shift(totals, variances, counts, row, 2)
        if counts[row + 1] <= m:
            break
        row += 1


@njit(fastmath=False)
def _delete_oldest(fs, ints, totals, variances, counts):
    last = ints[_NROWS] - 1
    n = float(2**last)
    u = totals[last, 0]
    v = variances[last, 0]
    mu = u / n
    fs[_WIDTH] -= n
    fs[_TOTAL] -= u
    w = fs[_WIDTH]
    mu_w = fs[_TOTAL] / w
    fs[_VAR] -= v + n * w * (mu - mu_w) * (mu - mu_w) / (n + w)
    _shift(totals, variances, counts, last, 1)
    if counts[last] == 0:
        ints[_NROWS] = last


@njit(fastmath=False)
def _cut(fs, n0, n1, delta_mean, delta, ell):
    w = fs[_WIDTH]
    dprime = math.log(2.0 * math.log(w) / delta)
    m_recip = 1.0 / (n0 - ell + 1.0) + 1.0 / (n1 - ell + 1.0)
    eps = math.sqrt(2.0 * m_recip * (fs[_VAR] / w) * dprime) + 2.0 / 3.0 * dprime * m_recip
    return abs(delta_mean) > eps


@njit(fastmath=False)
def _detect(fs, ints, totals, variances, counts, delta, clock, ell, grace):
    ints[_TICK] += 1
    found = False
    if ints[_TICK] % clock != 0 or not fs[_WIDTH] > grace:
        return found
    again = True
    while again:
        again = False
        n0, n1, u0, u1 = 0.0, fs[_WIDTH], 0.0, fs[_TOTAL]
        done = False
        for row in range(ints[_NROWS] - 1, -1, -1):  # oldest row first
            size = float(2**row)
            c = counts[row]
            for k in range(c):
                n0 += size
                n1 -= size
                u0 += totals[row, k]
                u1 -= totals[row, k]
                if row == 0 and k == c - 1:
                    done = True
                    break
                if n1 >= ell and n0 >= ell and _cut(fs, n0, n1, u0 / n0 - u1 / n1, delta, ell):
                    found = True
                    again = True
                    _delete_oldest(fs, ints, totals, variances, counts)
                    done = True
                    break
            if done:
                break
    return found


@njit(fastmath=False)
def _adwin_step(x, fs, ints, totals, variances, counts, ps):
    """One value; True when it raises an alarm.  ``ps``: delta, clock, max_buckets,
    min_window_length, grace_period."""
    m = int(ps[2])
    if ints[_DRIFT] == 1:  # the update after an alarm starts afresh
        for r in range(ints[_NROWS]):
            counts[r] = 0
            for j in range(m + 1):
                totals[r, j] = 0.0
                variances[r, j] = 0.0
        fs[:] = 0.0
        ints[_TICK] = 0
        ints[_NROWS] = 1
        ints[_DRIFT] = 0
    _insert(x, fs, ints, totals, variances, counts, m)
    if _detect(fs, ints, totals, variances, counts, ps[0], int(ps[1]), ps[3], ps[4]):
        ints[_DRIFT] = 1
        ints[_NDET] += 1
        return True
    return False


@njit(fastmath=False)
def _adwin_run(xs, fs, ints, totals, variances, counts, ps, out):
    """Run ``xs`` through the detector; alarm positions go to ``out``; returns their count."""
    n_out = 0
    for i in range(xs.shape[0]):
        if _adwin_step(xs[i], fs, ints, totals, variances, counts, ps):
            out[n_out] = i
            n_out += 1
    return n_out


class ADWIN(DriftDetector):
    __doc__ = __doc__
    _params = ("delta", "clock", "max_buckets", "min_window_length", "grace_period")
    _kernels = (_adwin_step, _adwin_run)
    _slot_drift, _slot_ndet = _DRIFT, _NDET

    def __init__(self, delta=0.002, clock=32, max_buckets=5, min_window_length=5,
                 grace_period=10):  # fmt: skip
        check_range("delta", delta, 0.0, 1.0, low_open=True)
        check_range("clock", clock, 1, integer=True)
        check_range("max_buckets", max_buckets, 2, integer=True)
        check_range("min_window_length", min_window_length, 1, integer=True)
        check_range("grace_period", grace_period, 0, integer=True)
        self.delta = delta
        self.clock = clock
        self.max_buckets = max_buckets
        self.min_window_length = min_window_length
        self.grace_period = grace_period
        self._reset()

    def _state(self):
        return (self._fs, self._ints, self._totals, self._variances, self._counts, self._ps)

    def _reset(self):
        self._fs = np.zeros(3)
        self._ints = np.array([0, 1, 0, 0], dtype=np.int64)
        self._totals = np.zeros((_ROWS, self.max_buckets + 1))
        self._variances = np.zeros((_ROWS, self.max_buckets + 1))
        self._counts = np.zeros(_ROWS, dtype=np.int64)
        self._ps = np.array([self.delta, self.clock, self.max_buckets, self.min_window_length,
                             self.grace_period], dtype=np.float64)  # fmt: skip

    @property
    def width(self) -> int:
        """Values in the window."""
        return int(self._fs[_WIDTH])

    @property
    def total(self) -> float:
        """Sum of the values in the window."""
        return float(self._fs[_TOTAL])

    @property
    def variance(self) -> float:
        """Variance of the window (its sum of squared deviations over its width; 0 if empty)."""
        w = self._fs[_WIDTH]
        return float(self._fs[_VAR] / w) if w > 0 else 0.0

    @property
    def estimation(self) -> float:
        """Mean of the window (0 if empty)."""
        w = self._fs[_WIDTH]
        return float(self._fs[_TOTAL] / w) if w > 0 else 0.0
