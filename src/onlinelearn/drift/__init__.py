"""Drift detectors on a stream of numbers, with River's per-event protocol.

* :class:`ADWIN` - adaptive windowing (Bifet & Gavaldà 2007, ADWIN2's exponential histogram);
* :class:`PageHinkley` - Page's cumulative-sum test (Page 1954) in the Mouss et al. form;
* :class:`DDM` - the drift detection method of Gama et al. (2004) on a stream of errors;
* :class:`EDDM` - the early drift detection method of Baena-García et al. (2006): the distance
  between errors.

and :class:`DriftFollowingClassifier` (:class:`DriftFollowingRegressor`), any online classifier
(regressor) behind one of them, reset or replaced by a background model when the detector
raises an alarm (Gama et al. 2004).

Each detector has ``update(x)`` (one value; returns the detector), the attribute
``drift_detected`` (True right after the value that raised the alarm; the next ``update`` starts
the detector afresh, as River's detectors do) and ``update_many(values)``, which runs a whole
array in one compiled call and returns the indices (into ``values``) of the alarms: the state
afterwards is the one that ``update`` on every value in turn leaves.  A value that is not a
finite number, or of magnitude over 1e140 (where the sums of squares could overflow), raises
``ValueError`` and leaves the detector unchanged.  Detectors pickle.

Example::

    import numpy as np
    from onlinelearn.drift import ADWIN

    rng = np.random.default_rng(0)
    stream = np.r_[rng.normal(0, 1, 1000), rng.normal(2, 1, 1000)]
    ADWIN().update_many(stream)  # array([1023]): one alarm, 23 values after the change
"""

from __future__ import annotations

from .adwin import ADWIN
from .ddm import DDM
from .eddm import EDDM
from .follow import DriftFollowingClassifier, DriftFollowingRegressor
from .page_hinkley import PageHinkley

__all__ = [
    "ADWIN", "DDM", "DriftFollowingClassifier", "DriftFollowingRegressor", "EDDM", "PageHinkley",
]  # fmt: skip
