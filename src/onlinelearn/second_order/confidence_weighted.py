"""AROW and SCW (SCW-I, SCW-II): Gaussian confidence-weighted learners, binary and multiclass."""

from __future__ import annotations

import numbers

import numpy as np
from scipy.stats import norm
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import second_order as SO
from ..shell.params import POSITIVE, Param, parameters
from ._base import SECOND_ORDER, SecondOrderClassifier, SecondOrderState


class _ConfidenceWeighted(SecondOrderClassifier):
    """Shared state and pass of AROW and SCW: a mean W and a covariance Sigma."""

    _binary_single_column = True
    _variant = SO.AROW

    def _new_state(self, R, n_cols):
        s0 = float(self.a)
        S = np.eye(R) * s0 if self.covariance == "full" else np.full(R, s0)
        return SecondOrderState({"W": np.zeros((R, n_cols)), "S": S}, ("W",))

    def _step_params(self):
        """(r, C, phi) for the compiled step."""
        raise NotImplementedError

    def _before_pass(self, batch, first):
        if not first and self.covariance != (
            "full" if self._state.arrays["S"].ndim == 2 else "diagonal"
        ):
            raise ValueError(
                "covariance changed since the model was fitted; call fit to start afresh"
            )

    def _pass(self, batch, y_codes, pred):
        S = self._state
        W, Sig = S.arrays["W"], S.arrays["S"]
        jj, xx = self._row_buffers(batch)
        r, C, phi = self._step_params()
        common = (batch.data, batch.indices, batch.indptr, y_codes, self._bias)
        d = self.n_features_in_
        f = np.empty(W.shape[1])
        if self.covariance == "full":
            SO.cw_pass_full(
                *common, d, W, Sig, self._variant, r, C, phi, S.st, pred, jj, xx,
                np.empty(Sig.shape[0]), f,
            )  # fmt: skip
        else:
            SO.cw_pass_diag(*common, d, W, Sig, self._variant, r, C, phi, S.st, pred, jj, xx, f)

    def _weights(self):
        return self._state.arrays["W"]

    @property
    def covariance_(self):
        """Sigma (full) or its diagonal: a copy."""
        check_is_fitted(self, "classes_")
        return self._state.arrays["S"].copy()


_MULTICLASS_NOTE = """
    Multiclass (K >= 3 classes): W has one column per class and Sigma is shared by the classes
    (the joint covariance is I_K (x) Sigma).  A round uses the difference feature
    z = phi(x, y) - phi(x, r) with r the highest-scoring wrong class, so m = f_y - f_r and
    v = z' (I_K (x) Sigma) z = 2 x' Sigma x; the binary step (alpha, beta) of that (m, v)
    gives w_y += alpha Sigma x, w_r -= alpha Sigma x, and Sigma keeps the diagonal blocks of
    the joint update, Sigma <- Sigma - beta Sigma x x' Sigma.  With two classes one weight
    vector is kept and the round is exactly the published binary one (y in {-1, +1});
    a third label turns w into the columns (-w/2, w/2) (same decisions).

    ``covariance='diagonal'`` keeps diag(Sigma) and applies the diagonal of the update,
    Sigma_jj <- Sigma_jj - beta (Sigma_jj x_j)^2: O(nnz K) per round.  A row whose v is 0
    (zero features, no intercept) does not update.  Sample weights are not supported.
"""

#: the end of both docstrings: the parameters they share, the attributes, the example's data
_SHARED_DOC = """    a : float, default=1.0
        Initial variance, Sigma_0 = a I.
    covariance : {'full', 'diagonal'}, default='full'
    fit_intercept : bool, default=True
    n_epochs, shuffle, random_state
        Passes of :meth:`fit`, their shuffling and its seed.

    Attributes
    ----------
    classes_, n_features_in_, coef_, intercept_, covariance_, t_, n_updates_, n_mistakes_.

    Examples
    --------
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> Xt, yt = load_dna("test")
"""


@parameters(
    "r a covariance fit_intercept n_epochs shuffle random_state", SECOND_ORDER,
    r=Param(1.0, POSITIVE),
)  # fmt: skip
class AROW(_ConfidenceWeighted):
    __doc__ = (
        """Adaptive Regularization of Weight vectors (Crammer, Kulesza & Dredze, NIPS 2009).

    Problem solved by a round (binary, y in {-1, +1}; the paper's eq. (1) specialised to one
    example, Fig. 1)::

        (mu_t, Sigma_t) = argmin_{mu, Sigma}  KL(N(mu, Sigma) || N(mu_{t-1}, Sigma_{t-1}))
                          + 1/(2r) max(0, 1 - y mu . x)^2 + 1/(2r) x' Sigma x

    Solution (when 1 - y mu . x > 0)::

        beta = 1 / (x' Sigma x + r),  alpha = max(0, 1 - y mu . x) beta
        mu <- mu + alpha y Sigma x,   Sigma <- Sigma - beta Sigma x x' Sigma

    Where
        mu = ``coef_`` (with ``intercept_``), Sigma starts at ``a`` I, r = ``r``.
"""
        + _MULTICLASS_NOTE
        + """
    Parameters
    ----------
    r : float, default=1.0
        Regularisation r > 0 (larger: slower, more conservative updates).
"""
        + _SHARED_DOC
        + """    >>> from onlinelearn import AROW
    >>> clf = AROW(r=10.0).fit(X, y)
    >>> round(clf.score(Xt, yt), 3)
    0.948
    """
    )

    _variant = SO.AROW

    def _step_params(self):
        return float(self.r), 1.0, 0.0


@parameters(
    "variant C eta a covariance fit_intercept n_epochs shuffle random_state", SECOND_ORDER,
    variant=Param("SCW-I", StrOptions({"SCW-I", "SCW-II"})),
    eta=Param(0.9, Interval(numbers.Real, 0.5, 1, closed="neither")),
)  # fmt: skip
class SCW(_ConfidenceWeighted):
    __doc__ = (
        """Soft Confidence-Weighted learning, SCW-I and SCW-II (Wang, Zhao & Hoi, ICML 2012).

    Problem solved by a round (binary, y in {-1, +1}; the paper's SCW-I and SCW-II problems)::

        (mu_t, Sigma_t) = argmin  KL(N(mu, Sigma) || N(mu_{t-1}, Sigma_{t-1})) + C l(mu, Sigma)
                                  (SCW-I),  or  + C l(mu, Sigma)^2  (SCW-II)
        l(mu, Sigma) = max(0, phi sqrt(x' Sigma x) - y mu . x)

    Solution (when l > 0), with v = x' Sigma x, m = y mu . x, psi = 1 + phi^2/2,
    zeta = 1 + phi^2::

        SCW-I:  alpha = min(C, max(0, (-m psi + sqrt(m^2 phi^4/4 + v phi^2 zeta)) / (v zeta)))
        SCW-II: alpha = max(0, (-(2 m n + phi^2 m v) + gamma) / (2 (n^2 + n v phi^2))),
                n = v + 1/(2C),  gamma = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2))
        u = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4
        beta = alpha phi / (sqrt(u) + v alpha phi)
        mu <- mu + alpha y Sigma x,   Sigma <- Sigma - beta Sigma x x' Sigma

    Where
        phi = Phi^{-1}(eta) (the inverse normal cdf of ``eta``), C = ``C``, Sigma_0 = a I.
"""
        + _MULTICLASS_NOTE
        + """
    Parameters
    ----------
    variant : {'SCW-I', 'SCW-II'}, default='SCW-I'
    C : float, default=1.0
        Aggressiveness (cap on alpha for SCW-I; the weight of the squared loss for SCW-II).
    eta : float in (0.5, 1), default=0.9
        Confidence: the probability of a correct prediction the update aims at.
"""
        + _SHARED_DOC
        + """    >>> from onlinelearn import SCW
    >>> clf = SCW(variant="SCW-II", C=0.1).fit(X, y)
    >>> round(clf.score(Xt, yt), 3)
    0.951
    """
    )

    @property
    def _variant(self):
        return SO.SCW1 if self.variant == "SCW-I" else SO.SCW2

    def _step_params(self):
        return 1.0, float(self.C), float(norm.ppf(self.eta))
