"""One event of the scale-free learners: ``learn_one`` / ``predict_one`` of a dict row
{column index: value} straight to the compiled step, as ``partial_fit`` / ``predict`` of that
row would do it.

The road takes a row when the model is fitted without feature names, the row is a dict of int
keys and real values, and (``learn_one``) the label is known, no class weights are set and no
probability calibration is fed (a logistic loss, or a regressor); any other row goes the
general way (``partial_fit`` of a one-row matrix), which also says what is wrong with it.  A
step that makes a weight infinite or NaN is undone (the rows it touched are put back) and
refused, as the general path refuses it.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import adaptive as AD
from ..shell.online import OnlineMixin
from ..shell.params import validate_once

__all__ = ["EventMixin"]

_ONE = np.ones(1)
_FIRST = np.zeros(1, dtype=np.int64)


def _entries(est, x):
    """(data float64, indices int32) of a dict row, or None when the road cannot take it."""
    if type(x) is not dict or "feature_names_in_" in est.__dict__:
        return None
    d = est.n_features_in_
    keys = list(x)
    for k in keys:
        if type(k) is not int or not 0 <= k < d:
            return None
    try:
        data = np.array(list(x.values()), dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if data.ndim != 1 or not np.isfinite(data).all():
        return None
    return data, np.array(keys, dtype=np.int32)


class EventMixin:
    """``learn_one`` / ``predict_one`` of the family (module docstring)."""

    def _road_open(self):
        if "_A" not in self.__dict__:
            return False
        if getattr(self, "importance_invariant", False) and self._loss_code() not in (
            AD.HINGE,
            AD.SQUARED,
        ):
            return False  # the general path refuses it
        if "classes_" in self.__dict__:
            return (len(self.classes_) >= 2 and self.class_weight is None
                    and self.loss == "logistic")  # fmt: skip
        return True

    def _scores_of(self, data, idx):
        rows = np.append(idx, self._A.shape[0] - 1) if self.fit_intercept else idx
        if self._step == AD.NAG:
            W = self._A[rows]
        else:  # the closed form of the rows the row touches only
            W = np.empty((len(rows), self._A.shape[1]))
            AD.ftrl_weights(self._A[rows], self._B[rows], *self._rates(), W)
        s = data @ W[: len(idx)]
        if self.fit_intercept:
            s = s + self._intercept_value() * W[-1]
        return s

    def predict_one(self, x):
        """``predict`` of one row (a dict {column index: value}, or anything ``predict``
        takes as one row); None (classifier) or 0.0 (regressor) before any learning."""
        ent = _entries(self, x) if "_A" in self.__dict__ else None
        if ent is None:
            return OnlineMixin.predict_one(self, x)
        s = self._scores_of(*ent)
        if "classes_" not in self.__dict__:
            return float(s[0])
        K = len(self.classes_)
        code = 0 if K == 1 else (int(s[0] > 0) if s.shape[0] == 1 else int(np.argmax(s)))
        out = self.classes_[code]
        return out.item() if isinstance(out, np.generic) else out

    def learn_one(self, x, y):
        """Learn one row ``x`` with target ``y``: ``partial_fit`` of that row, in one compiled
        step when the row takes the road (module docstring)."""
        ent = _entries(self, x) if self._road_open() else None
        target = None
        if ent is not None:
            target = self._event_target(y)
        if target is None:
            return OnlineMixin.learn_one(self, x, y)
        prior = self.__dict__.get("_validated_params")
        validate_once(self, self._validate_params)
        try:
            self._event_step(*ent, target)
        except FloatingPointError:
            if prior is None:  # the model is left exactly as it was
                del self.__dict__["_validated_params"]
            else:
                self._validated_params = prior
            raise

    def _event_target(self, y):
        if "classes_" in self.__dict__:
            classes = self.classes_
            try:
                code = int(np.searchsorted(classes, y))
            except (TypeError, ValueError):
                return None
            if code >= len(classes) or classes[code] != y:
                return None
            return float(code)
        if isinstance(y, bool) or not isinstance(y, int | float | np.integer | np.floating):
            return None
        y = float(y)
        return y if math.isfinite(y) else None

    def _event_step(self, data, idx, target):
        rows = np.append(idx, self._A.shape[0] - 1) if self.fit_intercept else idx
        ftrl = self._step == AD.FTRL
        saved = [self._A[rows], self._B[rows], self._S[rows], self._st.copy()]
        if ftrl:
            saved += [self._G1[rows], self._Q[rows]]
        K = self._A.shape[1]
        alpha, beta, l1, l2 = self._rates()
        loss = AD.adaptive_pass(
            data, idx, np.array([0, len(idx)], dtype=np.int64), np.array([target]), _ONE,
            _FIRST, self._A, self._B, self._S, self._st, self._step, self._loss_code(), alpha,
            beta, l1, l2, float(getattr(self, "epsilon", 0.0)), self._intercept_value(),
            np.empty(1), np.zeros(K), np.zeros(K),
            bool(getattr(self, "importance_invariant", False)),
            *((self._G1, self._Q) if ftrl else ()),
        )  # fmt: skip
        if not (np.isfinite(loss) and np.isfinite(self._A[rows]).all()
                and np.isfinite(self._B[rows]).all()):  # fmt: skip
            self._A[rows], self._B[rows], self._S[rows], self._st[:] = saved[:4]
            if ftrl:
                self._G1[rows], self._Q[rows] = saved[4:]
            raise FloatingPointError(
                f"{type(self).__name__}: a weight became infinite or NaN; the model was left as "
                "it was. Lower the learning rate or scale the target."
            )
        if "classes_" in self.__dict__:
            self.class_counts_[int(target)] += 1
