"""Plain NumPy / SciPy references for COPA's step (problem (18) of Ralaivola, NIPS 2012).

Problem, for the current W^t = [w_1^t .. w_Q^t] (d x Q, columns summing to 0) and (x, y)::

    min_W  F(W) = 1/2 ||W - W^t||_F^2 + C/2 sum_{q != y} [<w_q, x> + 1/(Q-1)]_+^2
    s.t.   W 1 = 0

Three references, none of which uses COPA's sorting argument:

* :func:`solve_enumeration` -- exact, in W-space.  F is strongly convex and piecewise
  quadratic; for each subset A of rivals it solves the equality-constrained QP in which the
  rivals of A carry the plain square (<w_q, x> + Delta)^2 and the others nothing, through its
  KKT linear system in the unknowns V = W - W^t (d x Q), xi_A and the multiplier lambda of
  W 1 = 0.  The minimiser W* of F is the solution for A* = {q : <w*_q, x> + Delta > 0}
  (the gradients of F and of that QP agree at W*), and it is the only KKT-consistent one
  (xi_q >= 0 on A, loss <= 0 off A) up to degenerate ties that give the same W.
* :func:`solve_lbfgs` -- a generic solver: scipy's L-BFGS-B on F over the sum-to-zero
  parametrisation W = W^t + U B^T (B an orthonormal basis of 1-perp), exact gradient.
* :func:`closed_form` -- a readable transcription of Theorem 1 of the supplement with a full
  sort and a scan of *every* I (the "largest I" of (23), no early exit), for comparison with
  the compiled heap version.

Also :func:`objective` and :func:`projected_gradient` (the first-order optimality residual of
F on the constraint set, which is differentiable: the squared hinge is C^1).
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.optimize
import scipy.sparse as sp


def _dense(x):
    if sp.issparse(x):
        return np.asarray(x.toarray(), dtype=np.float64).ravel()
    return np.asarray(x, dtype=np.float64).ravel()


def scores_of(W, x):
    """s_q = <w_q, x>, with x dense (d,) or a CSR row (1, d)."""
    if sp.issparse(x):
        return np.asarray(x @ W, dtype=np.float64).ravel()
    return W.T @ x


def sqnorm_of(x):
    if sp.issparse(x):
        return float(x.multiply(x).sum())
    return float(x @ x)


def losses(W, x, y):
    """ell_q = <w_q, x> + 1/(Q-1) for every q (the true class included, unused)."""
    Q = W.shape[1]
    return scores_of(W, x) + 1.0 / (Q - 1)


def objective(Wt, W, x, y, C):
    ell = losses(W, x, y)
    ell[y] = 0.0
    h = np.maximum(ell, 0.0)
    reg = 0.5 * np.sum((W - Wt) ** 2)
    if np.isinf(C):
        return reg if np.all(h <= 0.0) else np.inf
    return reg + 0.5 * C * np.sum(h * h)


def projected_gradient(Wt, V, x, y, C):
    """Gradient of F at W = W^t + V minus its mean over the columns (zero at the optimum).

    Returned in units of x: column q of the gradient is V[:, q] + C [ell_q]_+ x, and V is
    x a^T for the updates compared here, so the residual is returned as the matrix itself.
    """
    xd = _dense(x)
    Q = Wt.shape[1]
    # ell_q(W) = <w_q^t, x> + Delta + <v_q, x>, the update part computed on its own
    ell = losses(Wt, x, y) + V.T @ xd
    a = C * np.maximum(ell, 0.0)
    a[y] = 0.0
    G = V + np.outer(xd, a)
    return G - G.mean(axis=1, keepdims=True), a, ell[np.arange(Q) != y]


def solve_enumeration(Wt, x, y, C):
    """Exact minimiser of F by enumerating the active sets (Q <= ~11).

    Returns (V, xi, A): the update V = W* - W^t, the multipliers xi (= C [ell_q(W*)]_+, 0 for y
    and the inactive rivals) and the chosen active set.
    """
    xd = _dense(x)
    d, Q = Wt.shape
    rivals = [q for q in range(Q) if q != y]
    if not np.any(xd):
        # the loss does not depend on W: W* = W^t (with C = inf and a positive loss the
        # problem is infeasible; no update is the convention)
        return np.zeros((d, Q)), np.zeros(Q), []
    c = losses(Wt, x, y)  # <w_q^t, x> + Delta, from the given representation of x
    nv = d * Q
    nr = Q - 1
    n = nv + nr + d
    # rows for  x.v_q - xi_q / C = -c_q  are multiplied by min(1, C) to keep them O(1)
    sc = min(1.0, C)
    invC = 0.0 if np.isinf(C) else 1.0 / C

    base = np.zeros((n, n))
    rhs = np.zeros(n)
    eye = np.eye(d)
    for q in range(Q):
        r0 = q * d
        base[r0 : r0 + d, r0 : r0 + d] = eye  # v_q
        base[r0 : r0 + d, nv + nr :] = -eye  # - lambda
    for k, q in enumerate(rivals):
        base[q * d : (q + 1) * d, nv + k] = xd  # + xi_q x
    for q in range(Q):
        base[nv + nr :, q * d : (q + 1) * d] = eye  # sum_q v_q = 0

    subsets = list(itertools.product((False, True), repeat=nr))
    M = np.broadcast_to(base, (len(subsets), n, n)).copy()
    R = np.broadcast_to(rhs, (len(subsets), n)).copy()
    for s, act in enumerate(subsets):
        for k, q in enumerate(rivals):
            row = nv + k
            if act[k]:
                M[s, row, q * d : (q + 1) * d] = sc * xd
                M[s, row, nv + k] = -sc * invC
                R[s, row] = -sc * c[q]
            else:
                M[s, row, nv + k] = 1.0  # xi_q = 0
    Z = np.linalg.solve(M, R[..., None])[..., 0]

    best = None
    cscale = 1.0 + np.max(np.abs(c))
    for s, act in enumerate(subsets):
        V = Z[s, :nv].reshape(Q, d).T
        xi_r = Z[s, nv : nv + nr]
        ell = c[rivals] + V[:, rivals].T @ xd
        act = np.array(act, dtype=bool)
        xscale = 1.0 + np.max(np.abs(xi_r))
        viol = 0.0
        if act.any():
            viol = max(viol, np.max(np.maximum(-xi_r[act], 0.0)) / xscale)
        if (~act).any():
            viol = max(viol, np.max(np.maximum(ell[~act], 0.0)) / cscale)
        if viol > 1e-9:
            continue
        f = 0.5 * np.sum(V * V) + 0.5 * (0.0 if np.isinf(C) else C) * np.sum(
            np.maximum(ell, 0.0) ** 2
        )
        if best is None or f < best[0]:
            xi = np.zeros(Q)
            xi[rivals] = xi_r
            best = (f, V, xi, [q for k, q in enumerate(rivals) if act[k]])
    assert best is not None, "no KKT-consistent active set (reference solver failure)"
    return best[1], best[2], best[3]


def solve_lbfgs(Wt, x, y, C, gtol=1e-14, restarts=4):
    """Generic minimisation of F (finite C) over W = W^t + U B^T with L-BFGS-B."""
    xd = _dense(x)
    d, Q = Wt.shape
    # orthonormal basis of {v in R^Q : sum v = 0}: the first Q-1 columns of I - 11^T/Q are
    # independent and span it
    B = np.linalg.qr(np.eye(Q) - 1.0 / Q)[0][:, : Q - 1]
    c = losses(Wt, x, y)
    mask = np.arange(Q) != y

    def fg(u):
        U = u.reshape(d, Q - 1)
        V = U @ B.T
        ell = c + V.T @ xd
        h = np.where(mask, np.maximum(ell, 0.0), 0.0)
        f = 0.5 * np.sum(U * U) + 0.5 * C * np.sum(h * h)
        G = V + np.outer(xd, C * h)  # dF/dV
        return f, (G @ B).ravel()

    # F is only C^1 (its Hessian jumps where a rival loss crosses 0) and L-BFGS-B's line search
    # can stop early near such a kink: restarting from the last iterate polishes the solution
    u = np.zeros(d * (Q - 1))
    for _ in range(restarts):
        res = scipy.optimize.minimize(
            fg,
            u,
            jac=True,
            method="L-BFGS-B",
            options={"gtol": gtol, "ftol": 0.0, "maxiter": 20000, "maxcor": 50},
        )
        u = res.x
    return u.reshape(d, Q - 1) @ B.T


def closed_form(scores, y, sqnorm, C):
    """Theorem 1 of the supplement, transcribed: returns (dual alpha*, update coefficients, I*)."""
    s = np.asarray(scores, dtype=np.float64)
    Q = s.size
    r = float(sqnorm)
    alpha = np.zeros(Q)
    if r <= 0.0 or not C > 0.0:
        return alpha, np.zeros(Q), 0
    inv_C = 0.0 if np.isinf(C) else 1.0 / C
    kappa = inv_C + r
    ell = s + 1.0 / (Q - 1)
    rivals = np.array([q for q in range(Q) if q != y])
    sigma = rivals[np.argsort(-ell[rivals], kind="stable")]
    I_star = 0
    for I in range(1, Q):  # every I, keep the largest satisfying (23)
        head = ell[sigma[: I - 1]].sum()
        if ell[sigma[I - 1]] + r / (kappa * Q - (I - 1) * r) * head > 0.0:
            I_star = I
    if I_star == 0:
        return alpha, np.zeros(Q), 0
    act = sigma[:I_star]
    s_alpha = Q / (kappa * Q - I_star * r) * ell[act].sum()  # (21)
    alpha[act] = (ell[act] + r / Q * s_alpha) / kappa  # (20)
    coef = alpha.sum() / Q - alpha  # (24): w_q += coef_q x
    return alpha, coef, I_star
