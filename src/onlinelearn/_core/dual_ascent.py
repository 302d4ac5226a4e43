"""Dual ascent with several dual variables per round, and with a growing c_t (thesis ch. 3-5).

Two kernels, one per parametrisation of the dual of the hinge loss g_i(w) = [gamma - <w, u_i>]_+
(u_i = y_i x_i for one weight vector; x_i in column y_i and -x_i in the rival column r_i, the
max-score rival at round i, for K classes).

1. :func:`window_pass` -- fixed c = 1/C, the SVM-form dual (thesis eq. 5.12 with tau = alpha/c)::

       D(tau) = gamma sum_i tau_i - 1/2 ||w||^2 - sum_i delta_i tau_i^2 / 2,
       w = sum_i tau_i u_i,   0 <= tau_i <= cap_i

   with cap_i = C s_i, delta_i = 0 (PA-I), cap_i = inf, delta_i = 1/(2 C s_i) (PA-II, the dual
   of the squared slack), s_i the example's weight.  Round t appends example t to the store and
   raises D over a set I_t of dual variables (eq. 5.18), all others fixed:

   ``LASTK``     I_t = the last k examples, solved exactly: k = 1 is eq. (7.11) (PA);
                 k = 2 the closed form of :func:`qp2_box`; k > 2 cyclic coordinate ascent to a
                 projected-gradient tolerance (exact to ``tol``);
   ``ROWACTION`` k single-variable closed-form steps, i_1 = t then t-1, ..., t-k+1 (Sec. 5.2.2);
   ``FTRL``      I_t = [t]: coordinate ascent over every stored example, warm-started from the
                 previous round, to tolerance (regularised follow-the-leader; O(t nnz) per sweep).

   A coordinate step on variable i with gradient g_i = gamma - <w, u_i> - delta_i tau_i and
   curvature q_i = ||u_i||^2 + delta_i moves tau_i to clip(tau_i + g_i / q_i, 0, cap_i) and
   raises D by exactly Delta (g_i - q_i Delta / 2) >= 0 (accumulated in ``st[DUAL]``).

2. :func:`tuned_pass` -- a growing c_t (thesis Fig. 3.2 / 5.3, Fig. 4.1), alpha_i in [0, 1]::

       D_t(alpha) = gamma sum_i alpha_i - c_t f*(v / c_t),   v = sum_i alpha_i u_i,
       w_t = grad f*(v / c_t)

   ``FIXEDC``: c = 1/C for every round (the row-action step of the window family on the
   entropy and p-norm links; alpha in [0, s] is tau = alpha / c in [0, C s] of PA-I).
   ``SELFTUNED``: c_t = X_t sqrt((|M_{t-1}| + 1) / U) (eq. 5.17; X_t the largest dual norm of a
   row so far, M the mistakes); ``STRONGLY``: c_t = sigma t, which is Fig. 4.1 for the
   regularised loss sigma f(w) + g_t(w) (theta_{t+1} = (1 - 1/t) theta_t - eta_t lambda_t with
   eta_t = 1 / (sigma t) unrolls to v / (sigma t)).  The step on alpha_t in [0, s_t] (s_t the
   example's weight, 1 in the thesis) is the optimal one (eq. 5.15, ``OPTIMAL``) or the
   subgradient alpha_t = s_t 1[loss > 0] (``SUBGRADIENT``: with c_t = sigma t from the first
   round, Fig. 4.1 with eta_t = 1 / (sigma (t + 1)), its rounds counted from a round 0 at w = 0).
   With a window k > 1 the previous k - 1 stored examples then get the optimal single-variable
   step at the same c_t (row action, Sec. 5.2.2), alpha_i kept in [0, s_i].
   Links (:mod:`.links` codes): Euclidean f* = 1/2||.||^2, closed form (7.11); relative entropy
   on the doubled vector [v, -v] of 2N coordinates (balanced, f* = log sum exp - log 2N), closed
   form (7.16) when the row is in {-1, 0, 1}, bisection otherwise; p-norm f* = ||.||_p^2/(2(p-1)),
   bisection.  c_t f*(theta/c_t) does not increase with c_t (f >= 0), so D_t never decreases
   with the optimal step (Lemma 2).

The code: :mod:`.dual_window` (kernel 1), :mod:`.dual_tuned` (kernel 2; its step:
:mod:`.dual_tuned_step`), :mod:`.dual_common` (the codes, state slots and the store of past
examples both use). This module keeps the names.
"""

from __future__ import annotations

# every code, state slot and store column of dual_common, re-exported: the estimator and the
# tests read them as DA.<name>
from .dual_common import *  # noqa: F403
from .dual_tuned import tuned_pass  # noqa: F401
from .dual_tuned_step import (  # noqa: F401
    bisect_alpha,
    entropy_closed_form,
    entropy_frame,
    pnorm_of,
    sq_step,
    tuned_dual,
    tuned_step,
)
from .dual_window import (  # noqa: F401
    coordinate_step,
    qp2_box,
    store_push,
    window_pass,
)
