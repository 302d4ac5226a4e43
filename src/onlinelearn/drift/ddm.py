r"""DDM: the drift detection method of Gama, Medas, Castillo and Rodrigues (2004, "Learning
with drift detection", SBIA 2004) on a stream of errors :math:`x_t \in [0, 1]` (1: the learner
erred on example :math:`t`).

After :math:`n` values since the last reset, the error rate and its binomial standard
deviation are

.. math::

    p_n = p_{n-1} + (x_n - p_{n-1}) / n, \qquad s_n = \sqrt{p_n (1 - p_n) / n} .

For :math:`n >` ``warm_start``: when :math:`p_n + s_n \le p_{min} + s_{min}`, the pair
:math:`(p_{min}, s_{min})` becomes :math:`(p_n, s_n)`; then the warning level is
:math:`p_n + s_n > p_{min} + w\,s_{min}` (``warning_threshold``, 2: about 95% confidence) and the
drift level :math:`p_n + s_n > p_{min} + d\,s_{min}` (``drift_threshold``, 3: about 99%),
which sets ``drift_detected`` (and clears ``warning_detected``).  The update after an alarm
starts afresh.  As in the paper, while no error has been seen :math:`s_{min} = 0`, so the
first error after ``warm_start`` error-free values raises an alarm.

The alarms and warnings are River's (``river.drift.binary.DDM``, 0.26) on the same stream, in
the same floating-point order (``tests/test_drift.py``).  Unlike River, a value outside
[0, 1] is refused (:math:`p_n (1 - p_n)` must be a variance).

Parameters
----------
warm_start : int >= 0, default 30
warning_threshold : float > 0, default 2.0
drift_threshold : float > 0, default 3.0

Example::

    >>> import numpy as np
    >>> from onlinelearn.drift import DDM
    >>> rng = np.random.default_rng(3)
    >>> errors = np.r_[rng.random(1000) < 0.2, rng.random(1000) < 0.6]
    >>> DDM().update_many(errors)  # the error rate rises at index 1000
    array([1032])
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from ._base import WarningDetector, check_range

_P, _N, _PMIN, _SMIN, _PSMIN = range(5)
_DRIFT, _WARN, _NDET = 0, 1, 2


@njit(fastmath=False)
def _ddm_step(x, fs, ints, ps):
    """One value; True when it raises an alarm.  ``ps``: warm_start, warning, drift."""
    if ints[_DRIFT] == 1:
        fs[_P] = 0.0
        fs[_N] = 0.0
        fs[_PMIN] = np.nan
        fs[_SMIN] = np.nan
        fs[_PSMIN] = np.inf
        ints[_DRIFT] = 0
        ints[_WARN] = 0
    fs[_N] += 1.0
    fs[_P] += (1.0 / fs[_N]) * (x - fs[_P])
    p = fs[_P]
    s = math.sqrt(p * (1.0 - p) / fs[_N])
    if not fs[_N] > ps[0]:
        return False
    if p + s <= fs[_PSMIN]:
        fs[_PMIN] = p
        fs[_SMIN] = s
        fs[_PSMIN] = p + s
    ints[_WARN] = 1 if p + s > fs[_PMIN] + ps[1] * fs[_SMIN] else 0
    if p + s > fs[_PMIN] + ps[2] * fs[_SMIN]:
        ints[_DRIFT] = 1
        ints[_WARN] = 0
        ints[_NDET] += 1
        return True
    return False


@njit(fastmath=False)
def _ddm_run(xs, fs, ints, ps, out):
    n_out = 0
    for i in range(xs.shape[0]):
        if _ddm_step(xs[i], fs, ints, ps):
            out[n_out] = i
            n_out += 1
    return n_out


class DDM(WarningDetector):
    __doc__ = __doc__
    _params = ("warm_start", "warning_threshold", "drift_threshold")
    _kernels = (_ddm_step, _ddm_run)
    _slot_drift, _slot_warn, _slot_ndet = _DRIFT, _WARN, _NDET
    _domain = "error indicators in [0, 1]"

    @staticmethod
    def _outside(xs):
        return (xs < 0.0) | (xs > 1.0)

    def __init__(self, warm_start=30, warning_threshold=2.0, drift_threshold=3.0):
        check_range("warm_start", warm_start, 0, integer=True)
        check_range("warning_threshold", warning_threshold, 0.0, low_open=True)
        check_range("drift_threshold", drift_threshold, 0.0, low_open=True)
        self.warm_start = warm_start
        self.warning_threshold = warning_threshold
        self.drift_threshold = drift_threshold
        self._reset()

    def _reset(self):
        self._fs = np.array([0.0, 0.0, np.nan, np.nan, np.inf])
        self._ints = np.zeros(3, dtype=np.int64)
        self._ps = np.array([self.warm_start, self.warning_threshold, self.drift_threshold],
                            dtype=np.float64)  # fmt: skip
