"""The online-to-batch risk bounds of the thesis's Appendix B.3, beside the converted hypothesis.

Premise (thesis App. B.3, stated before eq. B.3): the rows (x_t, y_t) of the run are drawn
i.i.d. from one distribution Q; the bounds are on the *risk* (expected loss under Q) of the
hypothesis a conversion of :mod:`onlinelearn.evaluation` returns, with probability >= 1 - delta
over the draw of the rows (and of the conversion's random stopping times).  The data of a
benchmark file come in an order of their own: shuffle the rows (fixed seed) before the run, so
that the premise is a reasonable reading.

The thesis states its conversions' bounds against risk(h*) + B(T)/T (Theorems 10, 11), which
cannot be evaluated from a run.  Its Theorem 13 (from Theorem 3 of Zhang, the thesis's [122];
a similar bound in Cesa-Bianchi et al., its [18]) bounds the ensemble's average risk by the
online loss of the same run, for a loss of range [0, 1]::

    (1/T) sum_t risk(h_t) <= M_T + 3 ln((T + 3)/delta) / T + 2 sqrt(M_T ln((T + 3)/delta) / T)

with M_T = (1/T) sum_t loss(h_t, z_t) the online loss (thesis eq. B.3).  This second inequality
is a martingale concentration and needs no convexity; the first one of Theorem 13,
risk(h_bar) <= (1/T) sum_t risk(h_t), is Jensen's and needs a convex loss and a convex class.
Every bound below plugs that observable ensemble bound into the conversion steps of App. B.3.3:

``'average'`` (Theorem 13, both inequalities)
    h_bar = (1/T) sum_t h_t.  The 0-1 loss is not convex, so the loss is the multiclass hinge at
    margin 1 scaled to [0, 1] on a ball:  loss(W; x, y) = [1 - (s_y - max_{r != y} s_r)]_+ / B,
    s = W'x (x with the intercept feature), B = 1 + c R U, c = 1 for one weight vector (binary,
    margin y <w, x>), c = sqrt 2 for K columns (|s_y - s_r| <= ||w_y - w_r|| ||x|| <=
    sqrt 2 ||W||_F ||x||); H = {||W||_F <= U} (convex), ||x|| <= R.  The bound is on the risk
    of h_bar under that loss; since the 0-1 loss is <= the hinge at margin 1 (a mistake or a tie
    has margin <= 0), B times it bounds the 0-1 risk (``bound_zero_one``, often > 1 when B is
    large).  R is a premise on Q (default: the largest row norm in the data given); U is read
    from the run as the smallest power of 2 >= max_t ||W_t||_F, and the confidence is split over
    the powers 2^k (delta_k = delta / (2 (|k| + 1)(|k| + 2)), sum_k delta_k <= delta), so that
    the data-dependent choice of U is covered by a union bound.
``'last'`` (Lemma 23 / Corollary 8: Markov over the random stopping time)
    h_r, r uniform: given the rows, E_r[risk(h_r)] is the ensemble's average risk, so with
    probability >= 1 - delta/2 over r, risk(h_r) <= (ensemble bound at delta/2) / (delta/2).
    0-1 loss.  The dependence in 1/delta is the thesis's (Corollary 8); for the 0-1 loss the
    bound is > 1 (vacuous) unless the online error is well below delta / 2.
``'validation'`` (Theorem 12 and its validation step)
    s blocks, the learner reset on each, h'_i drawn uniformly from block i's hypotheses, the
    one of least 0-1 error on a fresh validation set (m rows) returned.  With
    eps = sqrt(ln(2 s / delta_2) / (2 m)) (Hoeffding, two-sided, union over the s candidates,
    which do not depend on the validation rows -- our instance of the "standard generalization
    bound" the thesis cites, Eq. (21) of [13], whose constant C it leaves unstated)::

        risk(h_o) <= val(h_o) + eps                                   (validation alone)
        risk(h_o) <= e max_i a_i + 2 eps                              (Theorem 12's chain)

    a_i: block i's ensemble bound at delta_1 / s (Markov at confidence 1/e on each block, the
    blocks' draws independent: some h'_g has risk <= e a_g with probability >= 1 - e^{-s}).
    delta = delta_1 + e^{-s} + delta_2, delta_1 = delta_2 = (delta - e^{-s}) / 2; the bound
    is the smaller of the two.  When e^{-s} >= delta the chain is not available (+inf) and
    delta_2 = delta.  0-1 loss.

Indexing.  The conversions return hypotheses trained on t >= 1 rows (``h_2, ..., h_{T+1}`` in
the thesis's indexing, h_1 the untrained one; :func:`onlinelearn.evaluation.online_to_batch_last`).
The online losses of h_2, ..., h_T are those of rows 2..T of the pass (row 1 is conditioned on:
given it, the rest of the run is an online algorithm on i.i.d. rows); h_{T+1} has no online
loss and is bounded by the loss's range, 1::

    (1/T) sum_{t=2}^{T+1} risk(h_t) <= ((T - 1) A_{T-1} + 1) / T,

A_{T-1} Theorem 13's right-hand side over the T - 1 online losses of rows 2..T.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

CONVERSIONS = ("average", "last", "validation")


def ensemble_bound(online_loss, T, delta):
    """Theorem 13's right-hand side: M + 3 ln((T+3)/delta)/T + 2 sqrt(M ln((T+3)/delta)/T),
    M the online loss averaged over T rounds (a loss of range [0, 1])."""
    lg = math.log((T + 3) / delta)
    return online_loss + 3.0 * lg / T + 2.0 * math.sqrt(online_loss * lg / T)


def _shifted(losses, delta):
    """((T - 1) A_{T-1} + 1) / T for the online losses of rows 1..T (row 1's dropped), and
    A_{T-1} (module docstring, "Indexing")."""
    T = losses.shape[0]
    if T < 2:
        return 1.0, math.inf
    A = ensemble_bound(float(np.mean(losses[1:])), T - 1, delta)
    return ((T - 1) * A + 1.0) / T, A


def _check(estimator, X, y, delta, conversion):
    if conversion not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {CONVERSIONS}, got {conversion!r}")
    if not (isinstance(delta, (int, float, np.floating)) and 0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    for meth in ("partial_fit", "partial_fit_predict"):
        if not callable(getattr(estimator, meth, None)):
            raise TypeError(f"online_to_batch needs an online classifier with {meth}; "
                            f"{type(estimator).__name__} has none")  # fmt: skip
    if conversion == "average":
        params = estimator.get_params(deep=False)
        if "average" not in params:
            raise TypeError(f"{type(estimator).__name__} has no 'average' parameter: the "
                            "'average' conversion needs a linear learner that "
                            "averages")  # fmt: skip
    from ..evaluation import _check_Xy

    return _check_Xy(X, y)


def _rows(X):
    return X.tocsr() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def _row_norms2(X):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    X = np.asarray(X, dtype=np.float64)
    return np.einsum("ij,ij->i", X, X)


def _hinge(S, codes):
    """[1 - margin]_+ per row from the scores S (n, K) (K = 1: one weight vector, classes
    coded 0/1 as -1/+1)."""
    if S.shape[1] == 1:
        m = np.where(codes == 1, 1.0, -1.0) * S[:, 0]
    else:
        n = S.shape[0]
        sy = S[np.arange(n), codes]
        S2 = S.copy()
        S2[np.arange(n), codes] = -np.inf
        m = sy - S2.max(axis=1)
    return np.maximum(0.0, 1.0 - m)


def _linear(est):
    """(coef (K, d), intercept (K,), b): the hypothesis over x augmented by the intercept
    feature of value b (its weight intercept / b)."""
    coef = np.asarray(est.coef_, dtype=np.float64)
    icpt = np.asarray(getattr(est, "intercept_", np.zeros(coef.shape[0])), dtype=np.float64)
    b = float(est._intercept_value()) if hasattr(est, "_intercept_value") else 0.0
    return coef, icpt.reshape(-1), b


def _norm(coef, icpt, b):
    c = coef.ravel(order="K")  # no copy for a C- or F-ordered coef
    n2 = float(np.einsum("i,i->", c, c))
    if b:
        n2 += float(np.sum((icpt / b) ** 2))
    return math.sqrt(n2)


def _scores(X, coef, icpt):
    return np.asarray(X @ coef.T) + icpt[None, :]


def _row_scores(xt, coef, icpt):
    """Scores (1, K) of one row (1, d), CSR or dense, under coef (K, d) and intercept."""
    if sp.issparse(xt):
        return (coef[:, xt.indices] @ xt.data + icpt)[None, :]
    return _scores(xt, coef, icpt)


def _iterates(estimator, X, y, classes):
    """One pass row by row (a clone with ``average=False``): the hinge of h_t on row t, and
    ||W_t||_F (intercept included) after each row, i.e. of h_2, ..., h_{T+1}."""
    est = clone(estimator).set_params(average=False)
    codes = np.searchsorted(classes, y)
    n = y.shape[0]
    hinge = np.empty(n)
    norms = np.empty(n)
    hinge[0] = 1.0  # h_1 = 0: every score 0, margin 0 (dropped, see "Indexing")
    est.partial_fit(X[0:1], y[0:1], classes=classes)
    fast = callable(getattr(est, "_weights_matrix", None))
    d = X.shape[1]
    for t in range(n):  # the hypothesis after row t: h_{t+2} in the thesis's indexing
        if fast:  # (R, K) over the augmented features, read without a copy
            W = est._weights_matrix()
            b = float(est._intercept_value())
            coef, icpt = W[:d].T, (b * W[d] if W.shape[0] > d else np.zeros(W.shape[1]))
            w = W.ravel(order="K")
            norms[t] = math.sqrt(float(np.einsum("i,i->", w, w)))  # (no BLAS threads)
        else:
            coef, icpt, b = _linear(est)
            norms[t] = _norm(coef, icpt, b)
        if t + 1 < n:
            xt = X[t + 1 : t + 2]
            hinge[t + 1] = _hinge(_row_scores(xt, coef, icpt), codes[t + 1 : t + 2])[0]
            est.partial_fit(xt, y[t + 1 : t + 2])
    return hinge, norms


def online_to_batch(estimator, X, y, *, conversion="average", delta=0.05, X_test=None,
                    y_test=None, X_val=None, y_val=None, n_blocks=5, R=None, random_state=0,
                    show=True):  # fmt: skip
    """Thesis App. B.3 risk bound of an online-to-batch conversion, beside its held-out loss.

    Runs ``estimator`` (cloned, never modified) once over (X, y) in the given order, converts
    it with :mod:`onlinelearn.evaluation` (``online_to_batch_average``, ``online_to_batch_last``
    with a random stopping time, ``online_to_batch_validation`` on (X_val, y_val)), and returns
    the bound the module docstring derives from the thesis's Theorem 13 (ensemble risk from the
    online loss), Lemma 23 / Corollary 8 (``'last'``) and Theorem 12 (``'validation'``) on the
    converted hypothesis's risk, with probability >= 1 - delta, the rows i.i.d. (shuffle them).

    Parameters
    ----------
    estimator : online classifier with ``partial_fit`` and ``partial_fit_predict``
        (``'average'``: a linear one with an ``average`` parameter, e.g. Perceptron,
        PassiveAggressiveClassifier, COPA).
    X, y : the training rows, in the order of the run.
    conversion : {'average', 'last', 'validation'}
    delta : float in (0, 1)
    X_test, y_test : held-out rows for ``observed`` (NaN when not given).
    X_val, y_val : the fresh validation set of ``'validation'`` (required there).
    n_blocks : int, ``s`` of ``'validation'``.
    R : float, ``'average'`` only: the premise ||x|| <= R (intercept feature included);
        default the largest such norm in X and X_test.
    random_state : seeds the conversions' random stopping times.
    show : print the terms as a table.

    Returns
    -------
    dict with ``estimator`` (the converted, fitted hypothesis), ``conversion``, ``quantity``,
    ``loss``, ``theorem``, ``observed`` (its loss on the test rows), ``bound``,
    ``observed_zero_one``, ``bound_zero_one``, ``online_error`` (0-1, all T rows), ``T``,
    ``delta``, ``online_losses`` (the losses the bound reads, rows 2..T), ``online_loss``
    (their mean), ``ensemble_bound`` (A_{T-1}), ``ensemble_average`` (((T-1) A + 1) / T), and
    the conversion's own terms (``R``, ``U``, ``B``, ``k``, ``delta_k``; ``delta_markov``;
    ``blocks``, ``eps``, ``validation_errors``, ``bound_validation``, ``bound_chain``).
    """
    from .. import evaluation as ev

    X, y = _check(estimator, X, y, delta, conversion)
    delta = float(delta)
    X = _rows(X)
    if (X_test is None) != (y_test is None):
        raise ValueError("give X_test and y_test together")
    if conversion == "validation":
        if X_val is None or y_val is None:
            raise ValueError("conversion='validation' needs a fresh validation set X_val, y_val")
        X_val, y_val = ev._check_Xy(X_val, y_val, "X_val", "y_val")
        X_val = _rows(X_val)
    elif X_val is not None or y_val is not None:
        raise ValueError("X_val, y_val are read by conversion='validation' only")
    if X_test is not None:
        X_test, y_test = ev._check_Xy(X_test, y_test, "X_test", "y_test")
        X_test = _rows(X_test)
    extra = [Z for Z in (y_test, y_val) if Z is not None]
    classes = np.unique(np.concatenate([np.asarray(y), *extra])) if extra else np.unique(y)
    T = y.shape[0]
    pred = np.asarray(clone(estimator).partial_fit_predict(X, y, classes=classes))
    mistakes = (pred != y).astype(np.float64)
    out = {"conversion": conversion, "delta": delta, "T": T, "online_error":
           float(mistakes.mean()), "estimator_name": type(estimator).__name__}  # fmt: skip

    def err(model, Xe, ye):
        return float(np.mean(np.asarray(model.predict(Xe)) != ye))

    if conversion == "average":
        model = ev.online_to_batch_average(estimator, X, y, classes=classes)
        if not hasattr(model, "coef_"):
            raise TypeError(f"{type(estimator).__name__} has no coef_: the 'average' bound "
                            "needs a linear learner (its hinge on the ball "
                            "||W||_F <= U)")  # fmt: skip
        hinge, norms = _iterates(estimator, X, y, classes)
        coef, icpt, b = _linear(model)
        r_data = math.sqrt(max(_row_norms2(Z).max() for Z in (X, X_test) if Z is not None)
                           + b * b)  # fmt: skip
        if R is None:
            R = r_data
        elif not R >= r_data:
            raise ValueError(f"R = {R!r} is below the largest row norm of the data given "
                             f"({r_data:.6g}, intercept feature included): the premise "
                             "||x|| <= R fails")  # fmt: skip
        umax = float(norms.max())
        k = math.ceil(math.log2(umax)) if umax > 0 else 0
        U = 2.0**k
        delta_k = delta / (2.0 * (abs(k) + 1) * (abs(k) + 2))
        c = 1.0 if coef.shape[0] == 1 else math.sqrt(2.0)
        B = 1.0 + c * R * U
        losses = hinge[1:] / B
        avg, A = _shifted(hinge / B, delta_k)
        bound = avg
        out.update(R=float(R), U=U, U_run=umax, k=k, delta_k=delta_k, B=B,
                   loss="multiclass hinge at margin 1 over B = 1 + c R U (range [0, 1] on the "
                   "ball ||W||_F <= U, ||x|| <= R)", quantity="risk of h_bar under the scaled "
                   "hinge", bound_zero_one=B * bound,
                   theorem="Shalev-Shwartz 2007 (thesis), App. B.3.3, Theorem 13 (Jensen + "
                   "ensemble bound), union over U = 2^k")  # fmt: skip
        if X_test is not None:  # model.classes_ is ``classes``, which holds y_test's labels
            h = _hinge(_scores(X_test, coef, icpt), np.searchsorted(classes, y_test)) / B
            out["observed"] = float(np.mean(h))
            out["observed_zero_one"] = err(model, X_test, y_test)
    elif conversion == "last":
        model = ev.online_to_batch_last(estimator, X, y, random_state=random_state,
                                        random_stopping=True, classes=classes)  # fmt: skip
        losses = mistakes[1:]
        avg, A = _shifted(mistakes, delta / 2.0)
        bound = avg / (delta / 2.0)
        out.update(loss="0-1", quantity="0-1 risk of h_r (r uniform)", bound_zero_one=bound,
                   delta_markov=delta / 2.0,
                   theorem="Shalev-Shwartz 2007 (thesis), App. B.3.3, Lemma 23 / Corollary 8 "
                   "(Markov over r) on Theorem 13's ensemble bound, delta split in "
                   "halves")  # fmt: skip
        if X_test is not None:
            out["observed"] = out["observed_zero_one"] = err(model, X_test, y_test)
    else:
        res = ev.online_to_batch_validation(estimator, X, y, X_val, y_val, n_blocks=n_blocks,
                                            random_state=random_state, classes=classes)  # fmt: skip
        model = res.estimator
        s = len(res.candidates)
        m = y_val.shape[0]
        tail = math.exp(-s)
        chain_ok = tail < delta
        d1 = d2 = (delta - tail) / 2.0 if chain_ok else delta
        eps = math.sqrt(math.log(2.0 * s / d2) / (2.0 * m))
        sizes = [len(bl) for bl in np.array_split(np.arange(T), s)]
        starts = np.cumsum([0, *sizes])
        blocks, losses = [], []
        for i, (a, z) in enumerate(zip(starts[:-1], starts[1:], strict=True)):
            bp = np.asarray(clone(estimator).partial_fit_predict(X[a:z], y[a:z],
                                                                 classes=classes))  # fmt: skip
            bm = (bp != y[a:z]).astype(np.float64)
            ai, Ai = _shifted(bm, d1 / s) if chain_ok else (math.inf, math.inf)
            blocks.append({"rows": int(z - a), "online_loss": float(bm[1:].mean())
                           if z - a > 1 else math.nan, "ensemble_bound": Ai,
                           "ensemble_average": ai, "validation_error":
                           float(res.validation_errors[i])})  # fmt: skip
            losses.append(bm[1:])
        losses = np.concatenate(losses)
        best = float(res.validation_errors[res.best_index])
        b_val = best + eps
        b_chain = math.e * max(bl["ensemble_average"] for bl in blocks) + 2 * eps
        bound = min(b_val, b_chain)
        avg = A = math.nan
        out.update(loss="0-1", quantity="0-1 risk of the validated h'_o", blocks=blocks,
                   eps=eps, m=m, s=s, delta_1=d1 if chain_ok else 0.0, delta_2=d2,
                   validation_errors=np.asarray(res.validation_errors),
                   best_index=res.best_index, bound_validation=b_val, bound_chain=b_chain,
                   bound_zero_one=bound,
                   theorem="Shalev-Shwartz 2007 (thesis), App. B.3.3, Theorem 12 (amplification, "
                   "Markov at 1/e per block on Theorem 13's ensemble bound) + Hoeffding over the "
                   "s candidates on the validation set")  # fmt: skip
        if X_test is not None:
            out["observed"] = out["observed_zero_one"] = err(model, X_test, y_test)
    out.setdefault("observed", math.nan)
    out.setdefault("observed_zero_one", math.nan)
    out.update(estimator=model, bound=float(bound), online_losses=np.asarray(losses),
               online_loss=float(np.mean(losses)) if len(losses) else math.nan,
               ensemble_bound=A, ensemble_average=avg,
               observed_on="test" if X_test is not None else None)  # fmt: skip
    if show:
        print(format_online_to_batch([out]))
    return out


def format_online_to_batch(reports, names=None):
    """The reports of :func:`online_to_batch` as a Markdown table."""
    lines = ["| learner | conversion | T | loss | online loss | online 0-1 | bound | held-out "
             "| bound (0-1) | held-out 0-1 | theorem |", "|" + "---|" * 11]  # fmt: skip
    for i, r in enumerate(reports):
        name = names[i] if names else r["estimator_name"]
        lines.append(
            f"| {name} | {r['conversion']} | {r['T']} | {r['loss'].split(' (')[0]} "
            f"| {r['online_loss']:.4g} | {r['online_error']:.4g} | {r['bound']:.4g} "
            f"| {r['observed']:.4g} | {r['bound_zero_one']:.4g} | {r['observed_zero_one']:.4g} "
            f"| {r['theorem']} |"
        )
    return "\n".join(lines)
