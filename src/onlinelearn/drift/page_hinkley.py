r"""Page-Hinkley: Page's cumulative-sum test (Page 1954, "Continuous inspection schemes",
Biometrika 41) in the form of Mouss et al. (2004) and Gama et al. (2013), with a fading factor.

After value :math:`x_t` (:math:`t` counted since the last reset), with the running mean
:math:`\bar x_t = \bar x_{t-1} + (x_t - \bar x_{t-1}) / t`:

.. math::

    U_t = \alpha U_{t-1} + (x_t - \bar x_t) - \delta, \qquad
    L_t = \alpha L_{t-1} + (x_t - \bar x_t) + \delta, \qquad U_0 = L_0 = 0,

    PH^{up}_t = U_t - \min_{s \le t} U_s, \qquad PH^{down}_t = \max_{s \le t} L_s - L_t .

From :math:`t \ge` ``min_instances`` on, an alarm is raised when :math:`PH^{up}_t > \lambda`
(``mode='up'``: the mean rose), :math:`PH^{down}_t > \lambda` (``'down'``) or either
(``'both'``); :math:`\delta` is the size of change tolerated, :math:`\lambda` the threshold,
:math:`\alpha` the fading factor (1: Page's test).  The update after an alarm starts afresh.

For values in an interval of length :math:`R` and :math:`\alpha = 1`, a stationary stream
(known mean) crosses :math:`\lambda` from a given start with probability at most
:math:`\exp(-8\delta\lambda / R^2)` (Hoeffding's lemma and Ville's inequality), so at most
:math:`N \exp(-8\delta\lambda/R^2)` false alarms are expected in :math:`N` values.

The alarms are River's (``river.drift.PageHinkley``, 0.26) on the same stream, in the same
floating-point order (``tests/test_drift.py``).  Unlike River, ``delta`` must be >= 0.

Parameters
----------
min_instances : int >= 1, default 30
delta : float >= 0, default 0.005
threshold : float > 0, default 50.0
    :math:`\lambda`.
alpha : float in (0, 1], default 0.9999
mode : {'both', 'up', 'down'}, default 'both'

Example::

    >>> import numpy as np
    >>> from onlinelearn.drift import PageHinkley
    >>> rng = np.random.default_rng(1)
    >>> stream = np.r_[rng.integers(0, 2, 1000), rng.integers(4, 8, 1000)]
    >>> PageHinkley().update_many(stream)  # the values change at index 1000
    array([1008, 1838])
"""

from __future__ import annotations

import numpy as np

from .._core.config import njit
from ._base import DriftDetector, check_range

_MODES = {"both": 0, "up": 1, "down": 2}
_MEAN, _N, _UP, _DOWN, _MIN_UP, _MAX_DOWN = range(6)
_DRIFT, _NDET = 0, 1


@njit(fastmath=False)
def _ph_step(x, fs, ints, ps):
    """One value; True when it raises an alarm.  ``ps``: min_instances, delta, threshold,
    alpha, mode."""
    if ints[_DRIFT] == 1:
        fs[_MEAN] = 0.0
        fs[_N] = 0.0
        fs[_UP] = 0.0
        fs[_DOWN] = 0.0
        fs[_MIN_UP] = np.inf
        fs[_MAX_DOWN] = -1.0
        ints[_DRIFT] = 0
    delta, alpha = ps[1], ps[3]
    fs[_N] += 1.0
    fs[_MEAN] += (1.0 / fs[_N]) * (x - fs[_MEAN])
    dev = x - fs[_MEAN]
    fs[_UP] = alpha * fs[_UP] + dev - delta
    fs[_DOWN] = alpha * fs[_DOWN] + dev + delta
    if fs[_UP] < fs[_MIN_UP]:
        fs[_MIN_UP] = fs[_UP]
    if fs[_DOWN] > fs[_MAX_DOWN]:
        fs[_MAX_DOWN] = fs[_DOWN]
    if fs[_N] < ps[0]:
        return False
    up = fs[_UP] - fs[_MIN_UP] > ps[2]
    down = fs[_MAX_DOWN] - fs[_DOWN] > ps[2]
    mode = ps[4]
    alarm = (up or down) if mode == 0.0 else (up if mode == 1.0 else down)
    if alarm:
        ints[_DRIFT] = 1
        ints[_NDET] += 1
    return alarm


@njit(fastmath=False)
def _ph_run(xs, fs, ints, ps, out):
    n_out = 0
    for i in range(xs.shape[0]):
        if _ph_step(xs[i], fs, ints, ps):
            out[n_out] = i
            n_out += 1
    return n_out


class PageHinkley(DriftDetector):
    __doc__ = __doc__
    _params = ("min_instances", "delta", "threshold", "alpha", "mode")
    _kernels = (_ph_step, _ph_run)
    _slot_drift, _slot_ndet = _DRIFT, _NDET

    def __init__(self, min_instances=30, delta=0.005, threshold=50.0, alpha=1 - 0.0001,
                 mode="both"):  # fmt: skip
        check_range("min_instances", min_instances, 1, integer=True)
        check_range("delta", delta, 0.0)
        check_range("threshold", threshold, 0.0, low_open=True)
        check_range("alpha", alpha, 0.0, 1.0, low_open=True)
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
        self.min_instances = min_instances
        self.delta = delta
        self.threshold = threshold
        self.alpha = alpha
        self.mode = mode
        self._reset()

    def _reset(self):
        self._fs = np.array([0.0, 0.0, 0.0, 0.0, np.inf, -1.0])
        self._ints = np.zeros(2, dtype=np.int64)
        self._ps = np.array([self.min_instances, self.delta, self.threshold, self.alpha,
                             _MODES[self.mode]], dtype=np.float64)  # fmt: skip
