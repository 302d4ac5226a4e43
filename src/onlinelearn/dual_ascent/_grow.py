"""Labels that join a model of the dual ascent family after its first call.

The dual variables of a round are tied to its pair of labels: u_i = y_i x_i for one weight
vector (two classes), x_i in column y_i and -x_i in column r_i (its rival, the highest-scoring
other label known at round i) for K >= 3 classes.  A new label adds a zero column to the
weights (or to v) and no dual variable, so the state stays a feasible point of the enlarged
dual; what changes is how the kept numbers are written:

* K >= 3 known labels (or one, which learned nothing): the columns move to the labels' new
  positions and the stored pairs (y_i, r_i) are renumbered.  The window steps' D(tau) =
  gamma sum tau - 1/2 ||w||^2 - sum delta_i tau_i^2 / 2 is unchanged (zero columns add
  nothing).  For the growing-c steps D_t = gamma sum alpha - c_t f*(v / c_t) is computed again
  at the last c_t: the Euclidean f* is unchanged; the entropy link's f* is over 2N coordinates
  and N = (weights) grows, and the default p of the p-norm link, 2 ln N, grows with it.
* two labels, one weight vector w: the model becomes the columns (-w/2, w/2) at the two labels'
  positions (the linear family's convention: every score difference, so every margin and
  decision, is kept).  A past round's u_i becomes x_i (e_{y_i} - e_{r_i}) with r_i the other
  label, and its dual variable tau_i / 2 (alpha_i / 2), so that W = sum_i (tau_i / 2) u_i =
  (-w/2, w/2) still holds; caps C s_i (s_i) still bound the halved variables.  D is the
  enlarged problem's dual at that point: with Q = sum_i delta_i tau_i^2 / 2 (PA-II; 0
  otherwise, recovered as gamma sum tau - 1/2 ||w||^2 - D),
  D' = gamma sum tau / 2 - 1/2 ||W||^2 - Q / 4, ||W||^2 = ||w||^2 / 2; for the growing-c
  steps sum alpha and the squared hinge's sum alpha^2 / (4 s) scale by 1/2 and 1/4 and D_t is
  computed again.  D' is not D: the two-class problem (regulariser 1/2 ||w||^2, u_i = y_i x_i)
  is not the K-class one restricted to two labels (1/2 ||W||^2 with W's columns summing to 0).

After growth the learner solves the K-class problem whose rounds are the pairs (y_i, r_i)
above; a run with every label declared (``classes=``) from the start differs, because the
declared labels are rivals (score 0 until they move) before they arrive.
"""

from __future__ import annotations

import numpy as np

from .._core import dual_ascent as DA
from .._core import links as L
from .._core.dense import sum_squares

__all__ = ["grow_labels"]


def grow_labels(est, new_classes, plan):
    """Move ``est``'s state (``_state``, ``classes_``, ``class_counts_``) to the sorted label
    set ``new_classes``, a superset of ``est.classes_`` (module docstring)."""
    old = est.classes_
    if len(new_classes) == len(old):
        return
    S = est._state
    st = S["st"]
    key = "theta" if plan.window else "V"
    M = S[key]
    pos = np.searchsorted(new_classes, old)
    n_cols = 1 if len(new_classes) <= 2 else len(new_classes)
    nst = int(st[DA.N_STORED])
    T_ = int(st[DA.T])
    Sf, Si = S["Sf"], S["Si"]
    split = len(old) == 2 and n_cols > 1
    W = np.zeros((M.shape[0], n_cols))
    if split:  # one vector w -> (-w/2, w/2); every past round's variable halves
        W[:, pos[0]], W[:, pos[1]] = -0.5 * M[:, 0], 0.5 * M[:, 0]
        yc = Si[:nst, DA.YC].copy()
        Si[:nst, DA.YC] = pos[yc]
        Si[:nst, DA.RC] = pos[1 - yc]
        Sf[:nst, DA.SGN] = 1.0
        Sf[:nst, DA.Q] *= 2.0  # ||u_i||^2: x_i in two columns
        Sf[:nst, DA.TAU] *= 0.5
        S["dual"][:T_] *= 0.5
    elif M.shape[1] == len(old) and len(old) >= 3:  # K >= 3 columns: renumber
        W[:, pos] = M
        Si[:nst, DA.YC] = pos[Si[:nst, DA.YC]]
        Si[:nst, DA.RC] = pos[Si[:nst, DA.RC]]
    # (one known label: nothing was learned or stored; its zero column gives way)
    S[key] = W
    est.classes_ = new_classes
    counts = np.zeros(len(new_classes), dtype=np.int64)
    counts[pos] = est.class_counts_
    est.class_counts_ = counts
    gamma = plan.margin
    if plan.window:
        if split:
            w2 = sum_squares(M)
            quad = 0.0
            if plan.step.variant == "PA-II":
                quad = gamma * float(S["dual"][:T_].sum()) * 2.0 - 0.5 * w2 - st[DA.DUAL]
            st[DA.DUAL] = gamma * float(S["dual"][:T_].sum()) - 0.25 * w2 - 0.25 * quad
        return
    if split:
        st[DA.SUM_ALPHA] *= 0.5
        st[DA.QUAD] *= 0.25
        st[DA.VSQ] *= 0.5
    c = float(st[DA.C_T])
    if c <= 0.0:
        st[DA.DUAL] = gamma * st[DA.SUM_ALPHA] - st[DA.QUAD]
    elif plan.link == L.EUCLID:
        st[DA.DUAL] = gamma * st[DA.SUM_ALPHA] - st[DA.QUAD] - 0.5 * st[DA.VSQ] / c
    else:
        st[DA.DUAL] = DA.tuned_dual(plan.link, W, c, est._p_value(plan), gamma,
                                    st[DA.SUM_ALPHA], st[DA.QUAD])  # fmt: skip
