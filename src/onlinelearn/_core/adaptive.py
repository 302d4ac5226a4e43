"""Scale-free online steps: per-coordinate adaptive rates (AdaGrad's diagonal in FTRL-Proximal
form) and Vowpal Wabbit's normalized adaptive update.

Both steps learn a linear model W (R, K) (R = d features, plus one row for the constant feature
of value b when b != 0; K = 1 for a binary or real-valued output, one column per class
otherwise) from the gradient of a loss of the scores p = W^T x.  For one round with row x,
target y and importance c, g_{ik} = c * dl(p, y)/dp_k * x_i.

**FTRL-Proximal** (McMahan, Holt, Sculley et al. 2013, "Ad click prediction", Algorithm 1; the
per-coordinate FTRL of McMahan & Streeter 2010 and AdaGrad's diagonal of Duchi, Hazan, Singer
2011).  Per coordinate (i, k) it keeps z and n = sum_s g_s^2; the weights solve::

    w_{t+1} = argmin_w  g_{1:t} w + 1/2 sum_{s<=t} sigma_s (w - w_s)^2 + beta/(2 alpha) w^2
                        + l1 |w| + l2/2 w^2,      sigma_{1:t} = sqrt(n_t) / alpha

whose closed form, with z = g_{1:t} - sum_s sigma_s w_s, is::

    w = 0                                                        if |z| <= l1
    w = -(z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2)      otherwise

and the round's update is sigma = (sqrt(n + g^2) - sqrt(n)) / alpha, z += g - sigma w,
n += g^2.  With l1 = l2 = 0 this is AdaGrad's diagonal (per-coordinate rate
eta_{t,i} = alpha / (beta + sqrt(n_{t,i}))) in its "lazy" (dual-averaging) form.

**NAG** (Ross, Mineiro, Langford 2013, "Normalized online learning", Algorithm 2; Vowpal
Wabbit's ``--adaptive --normalized``).  Per feature i a scale s_i = max_t |x_{ti}|, per
coordinate G = sum_s g_s^2, and N = sum_t sum_i x_{ti}^2 / s_i^2::

    for each i with |x_i| > s_i:  W[i, :] *= s_i / |x_i|;  s_i = |x_i|
    p = W^T x;  N += c sum_i x_i^2 / s_i^2;  t += c
    G_{ik} += g_{ik}^2;  W_{ik} -= eta sqrt(t / N) g_{ik} / (s_i sqrt(G_{ik}))

State ``st``: [t, N, n_updates, n_mistakes, the summed loss of the predictions (times c),
FTRL-Proximal's sum_t sum_i g_{t,i}^2 / ((beta + sqrt(n_{t,i}))/alpha + l2)] (the regret
bound's gradient term, :mod:`onlinelearn.bounds.adaptive`).  FTRL-Proximal also keeps, per
weight, g_{1:t} (``G1``) and sum_s sigma_s w_s^2 (``Q``), the other terms of that bound.

Loss codes: :data:`HINGE`, :data:`LOGISTIC` (binary, y in {-1, +1} from class codes 0 / 1),
:data:`MC_HINGE` (multiclass hinge with the max-loss rival: Crammer-Singer), :data:`SOFTMAX`
(multinomial log loss), :data:`SQUARED` (1/2 (p - y)^2), :data:`ABSOLUTE` (|p - y|),
:data:`EPS_INSENSITIVE` ([|p - y| - eps]_+).
"""

from __future__ import annotations

import numpy as np

from .config import njit

ST_T, ST_N, ST_UPD, ST_MIS, ST_LOSS, ST_DNORM = range(6)
N_ST = 6

HINGE, LOGISTIC, MC_HINGE, SOFTMAX, SQUARED, ABSOLUTE, EPS_INSENSITIVE = range(7)
FTRL, NAG = 0, 1


@njit
def ftrl_weight(z, n, alpha, beta, l1, l2):
    """The FTRL-Proximal closed form of one coordinate (module docstring)."""
    if abs(z) <= l1:
        return 0.0
    sgn = 1.0 if z > 0.0 else -1.0
    return -(z - sgn * l1) / ((beta + np.sqrt(n)) / alpha + l2)


@njit
def ftrl_weights(Z, Nn, alpha, beta, l1, l2, out):
    """``out`` = the closed-form weights of every coordinate."""
    R, K = Z.shape
    for j in range(R):
        for k in range(K):
            out[j, k] = ftrl_weight(Z[j, k], Nn[j, k], alpha, beta, l1, l2)


@njit
def loss_derivative(loss, p, y, eps, gp):
    """dl/dp_k into ``gp`` (K,) for scores ``p`` (K,) and target ``y`` (a class code, or the
    real target); returns the loss.  Binary losses read y = +1 for code 1, else -1."""
    K = p.shape[0]
    for k in range(K):
        gp[k] = 0.0
    if loss == HINGE:
        s = 1.0 if y == 1.0 else -1.0
        m = 1.0 - s * p[0]
        if m > 0.0:
            gp[0] = -s
            return m
        return 0.0
    if loss == LOGISTIC:
        s = 1.0 if y == 1.0 else -1.0
        u = -s * p[0]
        # sigma(u) and log(1 + e^u) without overflow
        if u > 0.0:
            e = np.exp(-u)
            sig = 1.0 / (1.0 + e)
            val = u + np.log1p(e)
        else:
            e = np.exp(u)
            sig = e / (1.0 + e)
            val = np.log1p(e)
        gp[0] = -s * sig
        return val
    if loss == MC_HINGE:
        yi = int(y)
        r = -1
        best = -np.inf
        for k in range(K):
            if k != yi and p[k] > best:
                best = p[k]
                r = k
        if r < 0:
            return 0.0
        m = 1.0 - p[yi] + best
        if m > 0.0:
            gp[yi] = -1.0
            gp[r] = 1.0
            return m
        return 0.0
    if loss == SOFTMAX:
        yi = int(y)
        mx = p[0]
        for k in range(1, K):
            mx = max(mx, p[k])
        tot = 0.0
        for k in range(K):
            gp[k] = np.exp(p[k] - mx)
            tot += gp[k]
        for k in range(K):
            gp[k] /= tot
        gp[yi] -= 1.0
        return mx + np.log(tot) - p[yi]
    r = p[0] - y
    if loss == SQUARED:
        gp[0] = r
        return 0.5 * r * r
    if loss == ABSOLUTE:
        gp[0] = 1.0 if r > 0.0 else (-1.0 if r < 0.0 else 0.0)
        return abs(r)
    # EPS_INSENSITIVE
    if r > eps:
        gp[0] = 1.0
        return r - eps
    if r < -eps:
        gp[0] = -1.0
        return -r - eps
    return 0.0


@njit
def _label(p, K, loss):
    """The label code (classifiers) or the value (regression) scores ``p`` predict."""
    if loss == SQUARED or loss == ABSOLUTE or loss == EPS_INSENSITIVE:
        return p[0]
    if K == 1:
        return 1.0 if p[0] > 0.0 else 0.0
    best = 0
    for k in range(1, K):
        if p[k] > p[best]:
            best = k
    return float(best)


@njit
def invariant_scale(loss, p, y, q, h):
    """s(h) = integral_0^h dl/dp(p(u)) du along dp/du = -q dl/dp(p(u)), p(0) = p: the
    importance-invariant update of Karampatziakis & Langford 2011 (Table 1) for a step whose
    prediction moves by -q per unit of gradient (q = x^T diag(r) x, r the per-coordinate rates)::

        squared  l = 1/2 (p - y)^2:  s(h) = (p - y) (1 - e^{-q h}) / q
        hinge    l = [1 - y p]_+:    s(h) = -y min(h, (1 - y p) / q)     (y in {-1, +1})
    """
    if loss == SQUARED:
        if q * h < 1e-12:
            return (p - y) * h * (1.0 - 0.5 * q * h)
        return -(p - y) * np.expm1(-q * h) / q
    yy = 1.0 if y == 1.0 else -1.0
    m = 1.0 - yy * p
    if m <= 0.0:
        return 0.0
    if q * h <= m:
        return -yy * h
    return -yy * m / q


@njit
def _invariant_update(data, indices, start, stop, off, A, B, S, d, b, c, rate, loss, p, y, g0):
    """NAG's round with importance c as the importance-invariant update (one column): G_i
    grows by c (g0 x_i)^2 (Vowpal Wabbit's accounting: c repetitions of the gradient), the
    rates r_i = rate / (s_i sqrt(G_i)) are frozen, and w_i -= r_i x_i s(c)
    (:func:`invariant_scale`)."""
    q = 0.0
    for pp in range(start, stop + (1 if b != 0.0 else 0)):
        j = d
        v = b
        if pp < stop:
            j = indices[pp - off]
            v = data[pp]
        if v != 0.0:
            B[j, 0] += c * (g0 * v) ** 2
            q += rate * v * v / (S[j] * np.sqrt(B[j, 0]))
    if q <= 0.0:
        return
    sh = invariant_scale(loss, p, y, q, c)
    for pp in range(start, stop + (1 if b != 0.0 else 0)):
        j = d
        v = b
        if pp < stop:
            j = indices[pp - off]
            v = data[pp]
        if v != 0.0:
            A[j, 0] -= rate * v * sh / (S[j] * np.sqrt(B[j, 0]))


@njit
def adaptive_pass(
    data, indices, indptr, target, weight, order, A, B, S, st, step, loss, alpha, beta, l1, l2,
    eps, b, pred, p, gp, invariant=False, G1=None, Q=None,
):  # fmt: skip
    """One pass of the FTRL-Proximal (``step`` = FTRL: A = z, B = n) or NAG (``step`` = NAG:
    A = W, B = G, S = the scales s_i, ``alpha`` = eta) step over the rows ``order``.

    ``target``: class codes (as floats) or real targets; ``weight``: importances c (a row of
    weight 0 is skipped); ``b``: value of the constant feature (row R - 1) or 0; ``pred``
    (len(order),): receives the prediction made before each row's update (label code or
    value); ``p``, ``gp`` (K,): scratch; ``invariant`` (NAG with the binary hinge or the
    squared loss): the importance-invariant update (:func:`invariant_scale`); ``G1``, ``Q``
    (R, K), FTRL only: the regret bound's sums (module docstring), kept when given.  Returns the
    summed loss of the rows before their updates (times c)."""
    R, K = A.shape
    d = R - 1 if b != 0.0 else R
    dense = indices.shape[0] != data.shape[0]
    regression = loss == SQUARED or loss == ABSOLUTE or loss == EPS_INSENSITIVE
    total = 0.0
    for q in range(order.shape[0]):
        i = order[q]
        start = indptr[i]
        stop = indptr[i + 1]
        off = start if dense else 0
        c = weight[i]
        # NAG: new scales first (Algorithm 2, lines 4-9)
        if step == NAG and c > 0.0:
            for pp in range(start, stop):
                j = indices[pp - off]
                ax = abs(data[pp])
                if ax > S[j]:
                    if S[j] > 0.0:
                        r = S[j] / ax
                        for k in range(K):
                            A[j, k] *= r
                    S[j] = ax
            if b != 0.0 and abs(b) > S[d]:
                if S[d] > 0.0:
                    for k in range(K):
                        A[d, k] *= S[d] / abs(b)
                S[d] = abs(b)
        # scores p = W^T x
        for k in range(K):
            p[k] = 0.0
        for pp in range(start, stop):
            j = indices[pp - off]
            v = data[pp]
            if v == 0.0:
                continue
            for k in range(K):
                if step == FTRL:
                    p[k] += v * ftrl_weight(A[j, k], B[j, k], alpha, beta, l1, l2)
                else:
                    p[k] += v * A[j, k]
        if b != 0.0:
            for k in range(K):
                if step == FTRL:
                    p[k] += b * ftrl_weight(A[d, k], B[d, k], alpha, beta, l1, l2)
                else:
                    p[k] += b * A[d, k]
        guess = _label(p, K, loss)
        pred[q] = guess
        if c <= 0.0:
            continue
        y = target[i]
        if not regression and guess != y:
            st[ST_MIS] += 1.0
        lt = c * loss_derivative(loss, p, y, eps, gp)
        total += lt
        st[ST_LOSS] += lt
        rate = 0.0
        if step == NAG:
            st[ST_T] += c
            nx = 0.0
            for pp in range(start, stop):
                j = indices[pp - off]
                if S[j] > 0.0:
                    nx += (data[pp] / S[j]) ** 2
            if b != 0.0:
                nx += 1.0
            st[ST_N] += c * nx
            if st[ST_N] > 0.0:
                rate = alpha * np.sqrt(st[ST_T] / st[ST_N])
        else:
            st[ST_T] += 1.0
        changed = False
        for k in range(K):
            if gp[k] != 0.0:
                changed = True
        if not changed:
            continue
        st[ST_UPD] += 1.0
        if invariant and step == NAG:
            _invariant_update(data, indices, start, stop, off, A, B, S, d, b, c, rate, loss,
                              p[0], y, gp[0])  # fmt: skip
            continue
        for pp in range(start, stop + (1 if b != 0.0 else 0)):
            if pp < stop:
                j = indices[pp - off]
                v = data[pp]
            else:
                j = d
                v = b
            if v == 0.0:
                continue
            for k in range(K):
                if gp[k] == 0.0:
                    continue
                g = c * gp[k] * v
                if step == FTRL:
                    n = B[j, k]
                    w = ftrl_weight(A[j, k], n, alpha, beta, l1, l2)
                    sigma = (np.sqrt(n + g * g) - np.sqrt(n)) / alpha
                    A[j, k] += g - sigma * w
                    B[j, k] = n + g * g
                    st[ST_DNORM] += g * g / ((beta + np.sqrt(n + g * g)) / alpha + l2)
                    if G1 is not None:
                        G1[j, k] += g
                        Q[j, k] += sigma * w * w
                else:
                    B[j, k] += g * g
                    A[j, k] -= rate * g / (S[j] * np.sqrt(B[j, k]))
    return total
