r"""EDDM: the early drift detection method of Baena-García, del Campo-Ávila, Fidalgo, Bifet,
Gavaldà and Morales-Bueno (2006, "Early drift detection method", 4th ECML PKDD workshop on
knowledge discovery from data streams) on a stream of errors :math:`x_t \in \{0, 1\}`.

EDDM watches the distance between consecutive errors (in values, the first counted from the
last reset) rather than the error rate: at the :math:`k`-th error, with :math:`p'_k` and
:math:`s'_k` the mean and the sample standard deviation (divisor :math:`k - 1`; 0 for one
distance) of the :math:`k` distances so far, Welford's running form,

.. math::

    \text{level}_k = \frac{p'_k + 2 s'_k}{\max_{j < k} (p'_j + 2 s'_j)} .

Once more than ``warm_start`` values have been seen, a new maximum only updates the maximum;
otherwise, once more than ``warm_start`` errors have been seen, :math:`\text{level}_k <
\beta` raises an alarm, :math:`\text{level}_k < \alpha` sets ``warning_detected`` and a higher
level clears it.  A correct prediction (0) changes nothing but the count of values.  The update
after an alarm starts afresh.

The alarms and warnings are River's (``river.drift.binary.EDDM``, 0.26) on the same stream
(``tests/test_drift.py``); as there, the warning flag is left as it was by an alarm, and by the
values that are not tested.  Unlike River, a value other than 0 or 1 is refused (River
counts only a value equal to 1 as an error).

Parameters
----------
warm_start : int >= 0, default 30
alpha : float in (0, 1], default 0.95
    Warning level.
beta : float in (0, alpha], default 0.9
    Drift level.

Example::

    >>> import numpy as np
    >>> from onlinelearn.drift import EDDM
    >>> rng = np.random.default_rng(0)
    >>> errors = np.r_[rng.random(3000) < 0.1, rng.random(1000) < 0.5]
    >>> alarms = EDDM().update_many(errors)  # the error rate rises at index 3000
    >>> alarms[alarms >= 3000][:1], alarms.size
    (array([3040]), 12)

The ten alarms before the change are false: with the defaults, EDDM raises one every few
hundred values of a stationary stream of 10% errors, River's alike.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from ._base import WarningDetector, check_range

_N, _LAST, _NERR, _MEAN, _K, _S, _MAX = range(7)
_DRIFT, _WARN, _NDET = 0, 1, 2


@njit(fastmath=False)
def _eddm_step(x, fs, ints, ps):
    """One value; True when it raises an alarm.  ``ps``: warm_start, alpha, beta."""
    if ints[_DRIFT] == 1:
        fs[:] = 0.0
        fs[_MAX] = -1.0
        ints[_DRIFT] = 0
        ints[_WARN] = 0
    fs[_N] += 1.0
    if x != 1.0:
        return False
    fs[_NERR] += 1.0
    dist = fs[_N] - fs[_LAST]
    old = fs[_MEAN]
    fs[_K] += 1.0
    fs[_MEAN] += (1.0 / fs[_K]) * (dist - old)
    fs[_S] += 1.0 * (dist - old) * (dist - fs[_MEAN])
    fs[_LAST] = fs[_N]
    if not fs[_N] > ps[0]:
        return False
    var = fs[_S] / (fs[_K] - 1.0) if fs[_K] > 1.0 else 0.0
    p2s = fs[_MEAN] + 2.0 * math.sqrt(var)
    if p2s > fs[_MAX]:
        fs[_MAX] = p2s
    elif fs[_NERR] > ps[0]:
        level = p2s / fs[_MAX]
        if level < ps[2]:
            ints[_DRIFT] = 1
            ints[_NDET] += 1
            return True
        ints[_WARN] = 1 if level < ps[1] else 0
    return False


@njit(fastmath=False)
def _eddm_run(xs, fs, ints, ps, out):
    n_out = 0
    for i in range(xs.shape[0]):
        if _eddm_step(xs[i], fs, ints, ps):
            out[n_out] = i
            n_out += 1
    return n_out


class EDDM(WarningDetector):
    __doc__ = __doc__
    _params = ("warm_start", "alpha", "beta")
    _kernels = (_eddm_step, _eddm_run)
    _slot_drift, _slot_warn, _slot_ndet = _DRIFT, _WARN, _NDET
    _domain = "error indicators 0 or 1"

    @staticmethod
    def _outside(xs):
        return (xs != 0.0) & (xs != 1.0)

    def __init__(self, warm_start=30, alpha=0.95, beta=0.9):
        check_range("warm_start", warm_start, 0, integer=True)
        check_range("alpha", alpha, 0.0, 1.0, low_open=True)
        check_range("beta", beta, 0.0, alpha, low_open=True)
        self.warm_start = warm_start
        self.alpha = alpha
        self.beta = beta
        self._reset()

    def _reset(self):
        self._fs = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])
        self._ints = np.zeros(3, dtype=np.int64)
        self._ps = np.array([self.warm_start, self.alpha, self.beta], dtype=np.float64)
