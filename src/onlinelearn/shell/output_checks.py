"""Checks of what a learner produced, run after a pass and before decision values are returned.

* :func:`check_aggressive_steps`: a pass of a Euclidean aggressive learner in which a row with a
  loss made no update because its squared norm overflowed float64;
* :func:`check_readout`: read-out weights ``grad f*(theta)`` that are not finite or underflowed;
* :func:`check_scores`: decision values that overflowed;
* :func:`check_mapped`: the columns of an explicit feature map that overflowed.

The estimators reach them through :mod:`onlinelearn.shell.validation`, the one module they import
for checks.  See ``docs/reliability.md`` for the promises these checks serve and how each is tested.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_aggressive_steps", "check_mapped", "check_readout", "check_scores"]


# -- after a pass: degenerate steps and the weights that predict ------------------------------


def check_aggressive_steps(est, batch, loss, weights, order, updates_before) -> None:
    """Refuse a pass of a Euclidean aggressive learner (PA, PA-I, PA-II, COPA) in which a row
    that suffered a loss made no update because its squared norm overflowed float64.

    Such a row has ``tau = loss / ||x||^2 = 0``: the learner silently learns nothing (values
    near 1e160 give zero weights).  Costs nothing in the usual case: every row with a positive
    loss and weight updates, so the count of updates is compared first, and the row norms are
    computed only when the counts differ (rows of zeros without an intercept also differ)."""
    from .._core import links as L
    from .._core import steps as S
    from .._core.checks import count_lossy_rows, first_overflowing_row
    from .._core.state import N_UPDATES

    step = est._step_code()
    if est._link != L.EUCLID or step == S.CONSERVATIVE:
        return
    if step == S.COPA or step == S.COPA_HINGE:
        # COPA's loss is not in ``loss`` (its own margin 1/(Q-1)): look at every weighted row
        rows = order[weights[order] > 0.0]
    else:
        # counted in one compiled loop first (the index array cost ~0.9 ms on mnist's 60 000
        # rows, on every call); built only when the counts differ
        if est._st[N_UPDATES] - updates_before >= count_lossy_rows(loss, weights, order):
            return
        rows = order[(loss[order] > 0.0) & (weights[order] > 0.0)]
    b = est._intercept_value()
    bad = first_overflowing_row(batch.data, batch.indptr, rows.astype(np.int64), b * b)
    if bad >= 0:
        lo, hi = batch.indptr[bad], batch.indptr[bad + 1]
        big = float(np.abs(batch.data[lo:hi]).max())
        raise ValueError(
            f"{type(est).__name__}: row {int(bad)} of the batch has a squared norm that "
            f"overflows float64 (largest |value| {big:.3g}), so its step would be 0 and nothing "
            "would be learned. The model was left as it was before this call. Scale the "
            "features (e.g. to unit norm)."
        )


def check_readout(est, rows=None) -> None:
    """Refuse weights that predict nothing sensible: non-finite read-out weights, or read-out
    weights that underflowed to all zeros while the dual sum theta is not zero.

    The compiled pass checks theta; the weights that predict are ``grad f*(theta)`` (and their
    average), which can overflow or underflow for the multiplicative and p-norm links even when
    theta is finite (e.g. unbalanced Winnow with a large eta, or p = 500).  For the Euclidean
    link the read-out is theta, or the average (S theta - U) / T, and the intercept is b times
    the last row: finite theta and U can still give an infinite S theta or b w[d] (rows of
    1e300, where b is their norm), so these are checked on ``rows``, the rows the pass could
    change (all when None): O(batch), not O(model)."""
    from .._core import links as L

    advice = "The model was left as it was before this call. Scale the features (e.g. to unit "
    name = type(est).__name__
    if est._link == L.EUCLID:
        if not _euclid_readout_finite(est, rows):
            raise FloatingPointError(
                f"{name}: the weights read out from the learner's state (the average of the "
                f"iterates, or the intercept b w[d] with b = {est._intercept_value():.3g}) "
                f"overflow float64. {advice}norm)."
            )
        return
    with np.errstate(all="ignore"):
        W = est._weights_matrix()
    advice += "norm), lower eta or p, or use the balanced or Euclidean learners."
    if not np.isfinite(W).all():
        raise FloatingPointError(
            f"{name}: the weights read out from the learner's state (grad f* of theta"
            f"{', averaged' if est.average else ''}) are infinite or NaN. {advice}"
        )
    if W.size and not W.any() and est._theta.any():
        raise FloatingPointError(
            f"{name}: the weights read out from the learner's state underflowed to zero "
            f"although its dual sum theta is not zero (a degenerate step). {advice}"
        )


def _euclid_readout_finite(est, rows):
    b = est._intercept_value()
    if not est.average and b == 0.0:
        return True  # theta itself, checked by the pass
    if est.average:
        from .._core.euclid_readout import averaged_finite

        # one compiled sweep, without writing the averaged matrix (no warnings either)
        sel = np.zeros(0, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
        return bool(averaged_finite(est._theta, est._A, est._st, sel, b))
    # the intercept row is the last row of the state, and the last of the touched rows
    last = est._theta[-1] if rows is None else est._theta[rows[-1]]
    # in Python floats: the same IEEE products, no warning on overflow, no errstate (which
    # cost a stream of one-row calls ~3 us)
    return all(math.isfinite(b * float(v)) for v in last)


def check_scores(scores) -> None:
    """Refuse decision values that overflowed (an argmax over inf or NaN is garbage)."""
    finite = np.isfinite(scores)
    if finite.all():
        return
    bad = np.flatnonzero(~finite.reshape(finite.shape[0], -1).all(axis=1))[0]
    raise ValueError(
        f"the decision values of row {int(bad)} are not finite (an overflow of <w, x>: its "
        "feature values are too large for float64 with these weights); scale the features."
    )


def check_mapped(out, what) -> None:
    """Refuse the output of a feature map (dense or CSR) in which a product of feature values
    overflowed float64: a model learned on inf is garbage."""
    values = out.data if hasattr(out, "indptr") else np.asarray(out).reshape(-1)
    if np.isfinite(values).all():
        return
    pos = int(np.flatnonzero(~np.isfinite(values))[0])
    if hasattr(out, "indptr"):
        row = int(np.searchsorted(out.indptr, pos, side="right") - 1)
    else:
        row = pos // max(out.shape[1], 1)
    raise ValueError(
        f"{what} overflows float64 on row {row} (a product of its feature values is infinite); "
        "scale the features."
    )
