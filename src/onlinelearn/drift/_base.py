"""The protocol the detectors share: input checks, ``update`` / ``update_many`` over one
compiled kernel per detector, and pickling (plain attributes: NumPy arrays and numbers)."""

from __future__ import annotations

import math
import numbers

import numpy as np

#: the largest magnitude taken: the detectors' sums of squared deviations (ADWIN's) stay
#: finite up to 2**60 values of this size, (2 * 1e140)**2 * 2**60 < 1e300
LARGEST = 1e140


def finite_value(x) -> float:
    """``x`` as a float, or ``ValueError`` when it is not a finite real number."""
    kind = type(x)
    if kind is not float and kind is not int and kind is not bool:  # else: the ABCs' check
        if isinstance(x, (np.ndarray, list, tuple, dict, str, bytes)) or not isinstance(
            x, (numbers.Real, np.bool_)
        ):
            raise ValueError(f"a drift detector takes one real number per update, got {x!r}")
    value = float(x)
    if not -LARGEST <= value <= LARGEST:  # NaN, an infinity, or a value whose square overflows
        raise ValueError(
            f"a drift detector takes finite values of magnitude up to {LARGEST:g}, got {value!r}"
        )
    return value


def finite_values(values) -> np.ndarray:
    """``values`` as a contiguous 1-D float64 array, or ``ValueError`` (empty, not 1-D, not
    numbers, or not finite; the index of the first bad value is named)."""
    try:
        arr = np.ascontiguousarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"update_many takes a 1-D array of real numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"update_many takes a 1-D array of values, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("update_many got an empty array: there is nothing to update with")
    bad = np.flatnonzero(~(np.abs(arr) <= LARGEST))
    if bad.size:
        raise ValueError(
            f"update_many takes finite values of magnitude up to {LARGEST:g}; value "
            f"{int(bad[0])} is {arr[bad[0]]!r} (the detector is unchanged)"
        )
    return arr


def check_range(name: str, value, low=None, high=None, integer=False, low_open=False):
    """Refuse a parameter outside [low, high] (or (low, high] with ``low_open``)."""
    ok = isinstance(value, numbers.Integral) if integer else isinstance(value, numbers.Real)
    ok = ok and not isinstance(value, bool) and math.isfinite(float(value))
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value <= high
    if not ok:
        kind = "an integer" if integer else "a finite number"
        lo = "" if low is None else f" {'>' if low_open else '>='} {low}"
        hi = "" if high is None else f" and <= {high}"
        raise ValueError(f"{name} must be {kind}{lo}{hi}, got {value!r}")


class DriftDetector:
    """Base: a subclass sets ``_kernels`` (its compiled step on one checked value, and the
    compiled loop of the same step over an array that writes the alarm indices), ``_reset``
    (fresh state arrays ``_fs``, ``_ints``, ``_ps`` and any more that ``_state`` lists, in the
    kernels' order) and the slots of its flags in ``_ints``; ``_domain`` names the values it
    takes when they are fewer than the finite reals, and ``_outside`` finds the others."""

    _domain = None
    _slot_drift = 0
    _slot_ndet = 1

    def _state(self):
        return self._fs, self._ints, self._ps

    @staticmethod
    def _outside(xs):
        """Where (of a float, or of an array) the values are not in ``_domain``."""
        return False

    def update(self, x):
        """Update with one value ``x``; sets ``drift_detected``. Returns the detector."""
        x = finite_value(x)
        if self._domain is not None and self._outside(x):
            raise ValueError(f"{type(self).__name__} takes {self._domain}, got {x!r}")
        self._kernels[0](x, *self._state())
        return self

    def update_many(self, values) -> np.ndarray:
        """Update with every value of the 1-D array ``values`` in order, in one compiled call.

        Returns the indices into ``values`` where ``drift_detected`` became True (int64)."""
        xs = finite_values(values)
        if self._domain is not None:
            bad = np.flatnonzero(self._outside(xs))
            if bad.size:
                raise ValueError(f"{type(self).__name__} takes {self._domain}; value "
                                 f"{int(bad[0])} is {xs[bad[0]]!r} (the detector is "
                                 "unchanged)")  # fmt: skip
        out = np.empty(xs.shape[0], dtype=np.int64)
        k = self._kernels[1](xs, *self._state(), out)
        return out[:k].copy()

    @property
    def drift_detected(self) -> bool:
        """True when the last value raised an alarm."""
        return bool(self._ints[self._slot_drift])

    @property
    def n_detections(self) -> int:
        """Alarms raised since the detector was created."""
        return int(self._ints[self._slot_ndet])

    def __repr__(self):
        params = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._params)
        return f"{type(self).__name__}({params})"


class WarningDetector(DriftDetector):
    """A detector with a warning zone below its alarm (``_slot_warn`` in ``_ints``)."""

    _slot_warn = 1

    @property
    def warning_detected(self) -> bool:
        """True when the last value put the detector in the warning zone (see the class
        docstring for when the flag changes)."""
        return bool(self._ints[self._slot_warn])
