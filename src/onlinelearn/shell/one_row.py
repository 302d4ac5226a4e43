"""``partial_fit`` on one row of a fitted linear classifier, without the layers a stream of rows
pays for again and again (River's ``learn_one``, :mod:`onlinelearn.river`).

:func:`learn_row` is the shell's own path of :meth:`OnlineMixin.partial_fit` ->
:meth:`ProbabilityMixin._calibrating` -> ``ConvergenceStopMixin._learn`` ->
:meth:`OnlineLinearClassifier._learn` for the case that dominates a stream: a fitted model of
the linear family, one row of the fitted width (float64, a C-contiguous (1, d) array or a
canonical CSR row, with no feature names), a label it already knows, no sample weight.  It
makes the same calls in the same order (the parameter memo, the transaction, the touched rows,
the example weight, :meth:`_run` with its checks, the class counts, the calibration after
success), so the model is bit for bit the one ``partial_fit`` gives, and a rejected row (a NaN
or an infinity, an overflow) raises the same error and leaves the model as it was.  It skips
what is known in that case: the general input checks (dtype, width, labels: the caller hands a
known label of the classes' dtype), the label merge, the context variables of the calibration
(only an outermost call calibrates: it refuses to run inside a learning call).  Anything else
returns False, and the caller calls ``partial_fit``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._core.checks import all_finite
from . import validation as V
from .base import OnlineLinearClassifier
from .online import OnlineMixin
from .proba import _ACTIVE, _IN_PASS, _OFF, HeldOut, ProbabilityMixin
from .snapshot import restoring
from .stop import ConvergenceStopMixin

__all__ = ["learn_row"]

_LEARNS = (OnlineLinearClassifier._learn, ConvergenceStopMixin._learn)


def _applies(est, X, y):
    cls = type(est)
    if not (isinstance(est, OnlineLinearClassifier) and cls.partial_fit is OnlineMixin.partial_fit
            and cls._learn in _LEARNS and cls._prepare is OnlineLinearClassifier._prepare
            and cls._calibrating is ProbabilityMixin._calibrating):
        return False  # fmt: skip
    d = est.__dict__
    classes = d.get("classes_")
    if classes is None or len(classes) < 2 or d.get("feature_names_in_") is not None:
        return False
    if isinstance(est.intercept_scaling, str) and "intercept_scaling_" not in d:
        return False  # 'auto' set after fitting: the general path fixes its value
    if not (type(y) is np.ndarray and y.shape == (1,) and y.dtype == classes.dtype):
        return False
    if sp.issparse(X):
        if (X.format != "csr" or X.dtype != np.float64 or not X.has_canonical_format
                or X.data.shape[0] != X.indptr[-1]):
            return False  # fmt: skip
    elif not (type(X) is np.ndarray and X.dtype == np.float64 and X.flags.c_contiguous):
        return False
    return X.shape == (1, d.get("n_features_in_"))


def learn_row(est, X, y):
    """``est.partial_fit(X, y)`` for one row (module docstring); False when the case is not
    the one this path covers (nothing was done: call ``partial_fit``), else True."""
    if not _applies(est, X, y):
        return False
    classes = est.classes_
    code = int(np.searchsorted(classes, y[0]))
    if code >= len(classes) or classes[code] != y[0]:
        return False  # a new label: the label set grows
    if _ACTIVE.get():
        return False  # inside a learning call: the general path decides who calibrates
    calibrate = not (_OFF.get() or est._native_proba())
    before = est._scores_before("partial", X) if calibrate else None
    # a scored row of a learner whose pass scores it: the pass writes its score (_learn's
    # HeldOut request, here without the context variable)
    req = HeldOut(id(est), 1, 1) if before is _IN_PASS else None
    snap = est._snapshot(copy_arrays=False)
    with restoring(est, snap):
        # OnlineLinearClassifier._prepare, for a row whose dtype, width and label are known
        est._validate_params_once()
        V.check_sparse_structure(X)
        if not est._finite_in_pass() and not all_finite(X.data if sp.issparse(X) else X[0]):
            V.raise_nonfinite_x(est, X.data if sp.issparse(X) else X)
        V.check_class_weight_keys(est.class_weight, classes)
        batch = V.CSRBatch(X)
        # OnlineLinearClassifier._learn, a partial_fit of a fitted model, no new label
        rows = est._touched_rows(batch)
        est._save_arrays(snap, rows)
        y_codes = np.array([code], dtype=np.int64)
        pred = np.zeros(1, dtype=np.int64)
        loss = np.zeros(1)
        weights = est._example_weights(y_codes, np.ones(1), None)
        order = np.arange(1, dtype=np.int64)
        held = est._run(batch, y_codes, weights, order, pred, loss, rows, False,
                        None if req is None else (0, 1))  # fmt: skip
        if req is not None:
            req.scores = est._held_out_view(held, 1)
        est._count_classes(y_codes)
        if isinstance(est, ConvergenceStopMixin):
            est.n_iter_ = 1
            est.__dict__.pop("_stop_rule", None)
    if calibrate:
        est._calibrate_after("partial", X, y, None, None, before, req)
    return True
