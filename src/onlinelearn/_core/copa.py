"""COPA: the closed-form passive-aggressive step on the squared confusion hinge.

COPA (COnfusion Passive-Aggressive), Ralaivola (NIPS 2012), Theorem 3 and Algorithm 1 of the
paper; the derivation is in its supplementary material (numbers "(S..)" below).

What
    One round of COPA: given the current vectors W^t = [w_1^t .. w_Q^t] (sum_q w_q^t = 0) and an
    example (x, y), find W^{t+1} as the exact solution of the passive-aggressive problem below.

Objective and constraints (paper eq. (18); supplement eq. (S1)-(S3))::

    min_W   1/2 sum_{q=1}^{Q} ||w_q - w_q^t||^2  +  C/2 sum_{q != y} [ <w_q, x> + 1/(Q-1) ]_+^2
    s.t.    sum_{q=1}^{Q} w_q = 0

    The loss is the *squared* hinge of the Lee-Lin-Wahba multiclass loss (paper eq. (16)); it
    involves the rival scores only, not <w_y, x>: the true class is coupled to the rivals by
    the sum-to-zero constraint.  With the class-normalised cost of eq. (17), C is C / T_y^2.

Where
    Q                  number of classes (Q >= 2); y in {0..Q-1} the true class (0-based here)
    s_q = <w_q^t, x>   the scores of the current hypothesis (``scores``)
    r = ||x||^2        (``sqnorm``; the intercept feature included when there is one)
    Delta = 1/(Q-1)    the margin of the loss
    ell_q = s_q + Delta                      (paper (19) / supplement (S16)), q != y
    kappa = 1/C + r                          (S17)
    [u]_+ = max(0, u)

Dual (S15), (S18).  With multipliers alpha_q >= 0 (q != y; alpha_y is clamped to 0) for
xi_q >= <w_q, x> + Delta and lambda for the constraint, stationarity gives
w_q = w_q^t - (alpha_q - s_alpha/Q) x, s_alpha = sum_q alpha_q (S12)-(S14), and::

    max_{alpha >= 0, alpha_y = 0}  H(alpha) = -1/2 kappa sum_q alpha_q^2
                                              + r/(2Q) (sum_q alpha_q)^2 + sum_q alpha_q ell_q

H is strictly concave (its Hessian is -(1/C) I - r (I - 11^T/Q), eigenvalues -1/C and
-(1/C + r); the supplement's Lemma 1 states "1 + 1/C", a slip), so alpha* is unique.

Closed form (supplement (20), (21), Theorem 1 (23)-(24); paper (19)-(21)).  Sort the rivals,
ell_sigma(1) >= ... >= ell_sigma(Q-1).  For an active set I = {sigma(1) .. sigma(I)}::

    s_alpha(I) = Q / (kappa Q - I r) * sum_{q in I} ell_q                        (21)
    alpha_q(I) = (ell_q + r s_alpha(I) / Q) / kappa   if q in I, else 0            (20)

and I* is the largest I in {1..Q-1} with::

    ell_sigma(I) + r / (kappa Q - (I-1) r) * sum_{i<I} ell_sigma(i) > 0          (23)

The update is w_q^{t+1} = w_q^t - (alpha*_q - s_alpha/Q) x  (24), s_alpha = sum_q alpha*_q
(the supplement writes the sum "q = 1..I*"; it is the sum over q in I*, i.e. over all q).

Derivation of (20)-(21) (Lemma 2): for q in I, alpha_q > 0 makes the constraint tight,
alpha_q / C = <w_q^{t+1}, x> + Delta = ell_q - r (alpha_q - s_alpha/Q), i.e.
kappa alpha_q = ell_q + r s_alpha / Q; summing over I gives (21).
Note kappa Q - I r = Q/C + (Q - I) r > 0 for I <= Q-1 (this form is also how it is computed:
no cancellation when C is huge, and C = inf -- the hard-margin problem -- is allowed).

Why a scan with early exit finds "the largest I" of (23): writing s(I) = s_alpha(I),
(kappa Q - I r)(s(I) - s(I-1)) = Q (ell_sigma(I) + r s(I-1)/Q), so s increases exactly when
I satisfies (23); if I fails, s(I) <= s(I-1) and ell_sigma(I+1) <= ell_sigma(I), so I+1 fails
too.  The indices satisfying (23) are therefore a prefix {1..I*}, and I* = 0 (no I satisfies
it, i.e. ell_sigma(1) <= 0: every rival loss is zero) is the passive round, W unchanged.
Rivals tied in ell enter or stay out together.  Optimality of alpha(I*) (Lemma 3): alpha_q > 0
on I*, ell_q + r s_alpha/Q <= 0 off I* (S25)-(S26), and the duality gap is zero.  Equivalently
alpha*_q = [ell_q + r s_alpha(I*)/Q]_+ / kappa for every rival.

Finding I* without sorting.  Write theta(I) = r s(I)/Q = r S_I / (kappa Q - |I| r), S_I the sum
of ell over I (theta of the empty set is 0).  For a prefix I = {sigma(1..n)}, (23) for the next
rival reads ell_sigma(n+1) + theta(I) > 0.  So the round starts from the empty set and makes
passes over the rivals: each pass adds every rival outside I with ell_q + theta(I) > 0, then
recomputes theta.  Every set so formed is a prefix (a threshold on ell), and every rival added
satisfies (23) at its place in the order: s, so theta, grows along the prefix while (23) holds
(the paragraph above), so a rival that passes with the theta of a shorter prefix passes with
its own.  When a pass adds nothing, the next rival in the order fails (23): I = I*, the set of
the scan, with the same ties entering together.  COPA's active sets are large (75-99% of the
columns on every shared multiclass set, ``benchmarks/copa_active_set.py``) and a few passes find
them; sorting the rivals with a heap, as this step did before, cost 0.6 us a round on news20
(Q = 20).  After MAX_PASSES passes without convergence the remaining rivals go into a binary
max-heap and are popped while (23) holds (the scan's rule, from where the passes stopped), so a
round never costs more than O(Q (MAX_PASSES + log Q)), and no allocation.

Names in code: ``scores`` s, ``sqnorm`` r, ``C`` C, ``ell``, ``kappa``, ``theta`` = r s_alpha/Q;
the output array ``alpha`` holds the *update coefficients* s_alpha/Q - alpha*_q (sum zero),
the paper's dual alpha* is returned in ``work_val``.

Slips in the source text (checked by re-deriving; the tests solve (18) independently):
the supplement's (S1) writes "q != p" for "q != y"; Lemma 1 gives the Hessian eigenvalues as
1/C and 1 + 1/C instead of 1/C and 1/C + ||x||^2; in Lemma 3, F(W(I*)) and H(alpha(I*)) read
"- ||x||^2/(2Q) s_alpha" where it is s_alpha^2, and the sum of the gap runs over
sigma(I*+1..Q-1), not "..Q"; (24) sums "q = 1..I*" for q in I*.

Reference
    L. Ralaivola, "Confusion-Based Online Learning and a Passive-Aggressive Scheme", NIPS 2012:
    Sec. 3.3, eq. (16)-(21), Theorem 3, Algorithm 1; supplementary material, eq. (1)-(26),
    Lemmas 1-3, Theorem 1.  Confusion risk: Definitions 1-4 of the paper.
"""

from __future__ import annotations

import numpy as np

from .config import njit
from .steps import COPA, COPA_HINGE

#: threshold passes of :func:`copa_step` before the heap takes over (see the module docstring)
MAX_PASSES = 6


@njit
def _sift_down(ell, idx, start, end):
    """Restore the max-heap property (keys ``ell[idx[.]]``) of ``idx[start:end]`` below
    ``start``."""
    i = start
    while True:
        c = 2 * i + 1
        if c >= end:
            return
        if c + 1 < end and ell[idx[c + 1]] > ell[idx[c]]:
            c += 1
        if ell[idx[c]] > ell[idx[i]]:
            t = idx[i]
            idx[i] = idx[c]
            idx[c] = t
            i = c
        else:
            return


@njit
def passive_round(Q, r, C, alpha, work_val):
    """True, with alpha = work_val = 0, when a round of Q classes, ||x||^2 = r and aggressiveness
    C has no step: Q < 2, r <= 0 or not finite, C <= 0 or NaN (the rule of both COPA steps).
    A plain compiled function: inlined by numba (inline='always'), it made copa_step 10%
    slower; LLVM's own inlining keeps the step's speed."""
    if Q < 2 or not (0.0 < r < np.inf) or not (C > 0.0):
        for q in range(Q):
            alpha[q] = 0.0
            work_val[q] = 0.0
        return True
    return False


@njit
def copa_step(scores, y, sqnorm, C, alpha, work_idx, work_val):
    """One COPA round: the exact solution of problem (18) as the update W += x alpha^T.

    What
        Solves min_W 1/2 sum_q ||w_q - w_q^t||^2 + C/2 sum_{q != y} [<w_q, x> + 1/(Q-1)]_+^2
        s.t. sum_q w_q = 0 (paper (18)); the solution is W^t + x alpha^T (see the module
        docstring for the dual, (20)-(21), (23)-(24), and how I* is found).

    Inputs
        scores   float[Q]   s_q = <w_q^t, x> for the current W^t (Q >= 2)
        y        int        true class, 0 <= y < Q
        sqnorm   float      r = ||x||^2 >= 0
        C        float      cost (> 0; may be inf), already multiplied by the class / sample
                            weight (eq. (17): C / T_y^2 for the class-normalised cost)
        alpha    float64[>=Q]  output
        work_idx int64[>=Q]    scratch / output
        work_val float64[>=Q]  scratch / output

    Returns
        I* = |I*|, the number of active rivals (0: passive round, alpha = 0).  On return:
        alpha[q] = s_alpha/Q - alpha*_q, the coefficient of x in column q's update
        (w_q^{t+1} = w_q^t + alpha[q] x, (24)); sum_q alpha[q] = 0 up to rounding, so the
        update keeps sum_q w_q = 0.  The true class and the inactive rivals get
        alpha[q] = s_alpha/Q > 0; the active rivals get s_alpha/Q - alpha*_q (which may be
        negative or positive).  work_val[q] = alpha*_q, the paper's dual variables (>= 0,
        0 for y and the inactive rivals); work_idx[:I*] = the active rivals, by increasing
        class index.
        sqnorm <= 0 (x = 0: nothing can change), an infinite sqnorm (||x||^2 overflowed: no
        step is defined, and the estimator reports the row), C <= 0, Q < 2 or a NaN in
        sqnorm / C give 0 with alpha = 0.
    """
    Q = scores.shape[0]
    r = sqnorm
    if passive_round(Q, r, C, alpha, work_val):
        return 0
    delta = 1.0 / (Q - 1)
    inv_C = 1.0 / C  # 0 when C = inf

    # alpha[q] = 1 marks the rivals in I while it is built.  The first pass (theta of the
    # empty set is 0) also writes ell_q = s_q + Delta into work_val.  The tests are selects,
    # not branches: whether a rival enters is a coin toss (news20: 0.6 -> 0.4 us a round)
    S = 0.0  # sum of ell over I
    n_act = 0
    theta = 0.0  # theta(I) = r S / (kappa Q - |I| r) = r S / (Q/C + (Q - |I|) r)
    added = 0
    for q in range(Q):
        ell = scores[q] + delta
        work_val[q] = ell
        enters = (q != y) & (ell > 0.0)  # NaN never enters
        S += ell if enters else 0.0
        added += 1 if enters else 0
        alpha[q] = 1.0 if enters else 0.0
    n_pass = 1
    while added > 0 and n_pass < MAX_PASSES:
        n_act += added
        theta = r * S / (Q * inv_C + (Q - n_act) * r)
        added = 0
        for q in range(Q):
            # (23) for q after the prefix I
            enters = (q != y) & (alpha[q] == 0.0) & (work_val[q] + theta > 0.0)
            S += work_val[q] if enters else 0.0
            added += 1 if enters else 0
            alpha[q] = 1.0 if enters else alpha[q]
        n_pass += 1
    if added > 0:
        # the set still grew at the last pass: the scan of (23) over the rest, by decreasing
        # ell (a max-heap of the outsiders)
        n_act += added
        theta = r * S / (Q * inv_C + (Q - n_act) * r)
        n = 0
        for q in range(Q):
            if q != y and alpha[q] == 0.0:
                work_idx[n] = q
                n += 1
        for start in range(n // 2 - 1, -1, -1):
            _sift_down(work_val, work_idx, start, n)
        end = n
        while end > 0:
            top = work_idx[0]
            if not (work_val[top] + theta > 0.0):
                break
            alpha[top] = 1.0
            S += work_val[top]
            n_act += 1
            theta = r * S / (Q * inv_C + (Q - n_act) * r)
            end -= 1
            work_idx[0] = work_idx[end]
            _sift_down(work_val, work_idx, 0, end)
    if n_act == 0:
        for q in range(Q):
            work_val[q] = 0.0
        return 0

    # (21) as theta = r s_alpha / Q = r S / (kappa Q - I* r), then (20) for q in I*
    kappa = inv_C + r
    m = 0
    for q in range(Q):
        if alpha[q] != 0.0:
            alpha[q] = (work_val[q] + theta) / kappa
            work_idx[m] = q
            m += 1
    s_alpha = 0.0
    for q in range(Q):
        s_alpha += alpha[q]
    mean = s_alpha / Q
    # (24): work_val <- dual alpha*, alpha <- coefficients of x in the update
    for q in range(Q):
        a = alpha[q]
        work_val[q] = a
        alpha[q] = mean - a
    return n_act


@njit
def copa_losses(scores, y, out):
    """Per-class losses of one round for the empirical confusion risk (paper Def. 2-4, eq. (16)).

    What
        out[q] = ell_{q|y}(h_W, x) = [ s_q + 1/(Q-1) ]_+  for q != y,   out[y] = 0.

    This is the row y of L^_{|y}(h, x) (Definition 2): the plain hinge of eq. (16) (COPA's
    family, an instance of Example 2), not squared -- the square only appears in the problem
    (17)-(18) that COPA's step solves.  The empirical online confusion risk (Definition 4) is
    C^_{ell,y}(h, X) = sum_t L^_{|y_t}(h_{t-1}, X_t) / T_{y_t}: the losses are those of the
    hypothesis *before* round t's update, and the row is divided by T_{y_t}, the count of
    class y_t in the sequence.

    Inputs
        scores float[Q]  s_q = <w_q, x>;  y int (0-based true class);  out float64[>=Q]  output
    """
    Q = scores.shape[0]
    delta = 1.0 / (Q - 1) if Q > 1 else 0.0
    for q in range(Q):
        v = scores[q] + delta
        out[q] = v if (q != y and v > 0.0) else 0.0


# ---------------------------------------------------------------------------------------------
# the hinge variant


@njit
def copa_hinge_step(scores, y, sqnorm, C, alpha, work_idx, work_val):
    """One round of COPA with the plain confusion hinge: the exact solution of

        min_W   1/2 sum_{q=1}^{Q} ||w_q - w_q^t||^2  +  C sum_{q != y} [ <w_q, x> + 1/(Q-1) ]_+
        s.t.    sum_{q=1}^{Q} w_q = 0

    the problem (18) of the paper with the hinge of eq. (16) in place of its square (the
    question left open in the paper's conclusion), C multiplying the sum as in PA-I.

    Derivation (as the supplement's (S4)-(S19) for the square).  With slacks xi_q >= 0,
    xi_q >= <w_q, x> + Delta, multipliers alpha_q >= 0 for the second and beta_q >= 0 for the
    first, and lambda for the constraint: d/dxi_q gives C - alpha_q - beta_q = 0, i.e.
    0 <= alpha_q <= C; d/dw_q gives, as (S14), w_q = w_q^t - (alpha_q - s_alpha/Q) x with
    s_alpha = sum_q alpha_q (alpha_y = 0).  Substituting, the dual is (S15) without the 1/C
    term, on a box::

        max_{0 <= alpha_q <= C, alpha_y = 0}  H(alpha) = -r/2 sum_q alpha_q^2
                                              + r/(2Q) (sum_q alpha_q)^2 + sum_q alpha_q ell_q

    with ell_q = s_q + Delta and r = ||x||^2.  On the Q-1 rival coordinates the Hessian is
    -r (I - 11^T/Q), eigenvalues -r and -r/Q: for r > 0 H is strictly concave and alpha* is
    unique.  dH/dalpha_q = ell_q - r alpha_q + r s_alpha/Q = <w_q^{t+1}, x> + Delta, the loss
    argument after the update; the KKT conditions of the box say alpha_q = 0 where it is < 0,
    alpha_q = C where it is > 0, and it is 0 in between.  So, with v = r s_alpha / Q::

        alpha*_q = clip((ell_q + v) / r, 0, C),   and v solves   G(v) = Q v,
        G(v) = sum_{q != y} clip(ell_q + v, 0, r C)

    G - Q id is continuous, piecewise linear and strictly decreasing (slope (number of free
    rivals) - Q <= -1), and G(0) >= 0: the root v* >= 0 is unique, v* = 0 (the passive round)
    exactly when no rival has ell_q > 0.  As v grows a rival becomes free at v = -ell_q and
    saturates at v = rC - ell_q: both events come in the order of decreasing ell_q, so with the
    rivals sorted (ell_sigma(1) >= ...) the saturated ones are a prefix {1..n_sat}, the free ones
    the next block {n_sat+1..n_act}.  The walk starts at v = 0 and crosses the events in
    increasing v; on a segment with fixed blocks the root of the linear piece is::

        v = (sum_{free} ell_q + n_sat r C) / (Q - n_free)

    accepted when it lies before the next event (G - Q id is then <= 0 there); else the event is
    crossed.  The final blocks give v from a fresh sum, then alpha* and the update
    w_q^{t+1} = w_q^t - (alpha*_q - s_alpha/Q) x, as (24).  With C = inf no rival saturates and
    the step is the squared COPA step at C = inf (the hard-margin problem is the same).

    Inputs and outputs as :func:`copa_step`: ``alpha`` returns the coefficients
    s_alpha/Q - alpha*_q of x in each column's update, ``work_val`` the dual alpha*
    (0 <= alpha*_q <= C), ``work_idx[:n]`` the rivals with alpha*_q > 0 by increasing class index;
    the return value n is their number (0: passive round).  Degenerate input (Q < 2, r <= 0 or
    not finite, C <= 0 or NaN) gives 0 with alpha = 0, as :func:`copa_step`.
    """
    Q = scores.shape[0]
    r = sqnorm
    if passive_round(Q, r, C, alpha, work_val):
        return 0
    delta = 1.0 / (Q - 1)
    cap = r * C  # inf when C = inf (or the product overflows: no rival can reach it then)
    m = 0
    any_loss = False
    for q in range(Q):
        ell = scores[q] + delta
        if ell != ell:
            ell = -np.inf  # a NaN score never enters (as in :func:`copa_step`)
        work_val[q] = ell
        if q != y:
            work_idx[m] = q
            m += 1
            if ell > 0.0:
                any_loss = True
    if not any_loss:  # also a NaN score: no rival with a positive loss
        for q in range(Q):
            alpha[q] = 0.0
            work_val[q] = 0.0
        return 0
    # heap sort of the rivals by increasing ell (work_idx[m-1] has the largest)
    for start in range(m // 2 - 1, -1, -1):
        _sift_down(work_val, work_idx, start, m)
    for end in range(m - 1, 0, -1):
        t = work_idx[0]
        work_idx[0] = work_idx[end]
        work_idx[end] = t
        _sift_down(work_val, work_idx, 0, end)
    # position k = 0.. in decreasing order is work_idx[m - 1 - k]
    n_act = 0  # rivals with ell + v > 0 (free or saturated): the first n_act
    n_sat = 0  # rivals with ell + v >= rC: the first n_sat
    S = 0.0  # sum of ell over the free block
    while n_act < m and work_val[work_idx[m - 1 - n_act]] > 0.0:
        S += work_val[work_idx[m - 1 - n_act]]
        n_act += 1
    while n_sat < n_act and work_val[work_idx[m - 1 - n_sat]] >= cap:
        S -= work_val[work_idx[m - 1 - n_sat]]
        n_sat += 1
    # each pass crosses one event or stops: at most 2 (Q - 1) passes, also when a score is
    # infinite and v is not a number
    while n_act < m or n_sat < n_act:
        n_free = n_act - n_sat
        top = S + (n_sat * cap if n_sat > 0 else 0.0)
        v = top / (Q - n_free)
        e_in = -work_val[work_idx[m - 1 - n_act]] if n_act < m else np.inf
        e_sat = cap - work_val[work_idx[m - 1 - n_sat]] if n_sat < n_act else np.inf
        if v <= e_in and v <= e_sat:
            break
        if n_act < m and (e_in <= e_sat or n_sat >= n_act):
            S += work_val[work_idx[m - 1 - n_act]]
            n_act += 1
        else:
            S -= work_val[work_idx[m - 1 - n_sat]]
            n_sat += 1
    # v from a fresh sum over the final free block (no drift from the additions above)
    S = 0.0
    for k in range(n_sat, n_act):
        S += work_val[work_idx[m - 1 - k]]
    v = (S + (n_sat * cap if n_sat > 0 else 0.0)) / (Q - (n_act - n_sat))
    # alpha*_q = clip((ell_q + v) / r, 0, C): C for the saturated block, 0 after the active one
    for q in range(Q):
        alpha[q] = 0.0
    for k in range(n_act):
        q = work_idx[m - 1 - k]
        if k < n_sat:
            a = C
        else:
            a = (work_val[q] + v) / r
            a = C if a > C else a
        alpha[q] = a if a > 0.0 else 0.0
    n = 0
    s_alpha = 0.0
    for q in range(Q):
        a = alpha[q]
        s_alpha += a
        if a > 0.0:
            work_idx[n] = q
            n += 1
    mean = s_alpha / Q
    for q in range(Q):
        a = alpha[q]
        work_val[q] = a
        alpha[q] = mean - a
    if n == 0:
        for q in range(Q):
            alpha[q] = 0.0
    return n


@njit
def is_copa(step):
    """True for the step codes of COPA's closed forms (squared and plain confusion hinge)."""
    return step == COPA or step == COPA_HINGE


@njit
def copa_update(step, scores, y, sqnorm, C, alpha, work_idx, work_val):
    """The COPA round of ``step``: :func:`copa_hinge_step` for ``COPA_HINGE``, else
    :func:`copa_step` (the squared hinge of the paper)."""
    if step == COPA_HINGE:
        return copa_hinge_step(scores, y, sqnorm, C, alpha, work_idx, work_val)
    return copa_step(scores, y, sqnorm, C, alpha, work_idx, work_val)
