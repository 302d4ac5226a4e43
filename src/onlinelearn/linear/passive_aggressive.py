"""Passive-Aggressive learners: Euclidean link x hinge loss x aggressive single-variable step."""

from __future__ import annotations

from ..framework.links import Euclidean
from ..framework.losses import Hinge
from ..framework.steps import Aggressive
from ..shell.base import LINEAR, OnlineLinearClassifier
from ..shell.intercept import typical_value_scaling
from ..shell.params import CONSTRAINT, parameters
from ..shell.stop import STOP, ConvergenceStopMixin
from ._average import AVERAGE_POWER
from ._constraint import ProjectedUpdatesMixin


@parameters(
    "* variant C margin n_epochs tol n_iter_no_change shuffle average average_power "
    "random_state fit_intercept intercept_scaling class_weight dtype constraint radius",
    LINEAR, STOP, CONSTRAINT, n_epochs=100, average=True, intercept_scaling="auto",
    average_power=AVERAGE_POWER,
)  # fmt: skip
class PassiveAggressiveClassifier(
    ConvergenceStopMixin, ProjectedUpdatesMixin, OnlineLinearClassifier
):
    """Passive-Aggressive PA, PA-I and PA-II (Crammer et al. 2006), binary and multiclass.

    What
        The aggressive dual ascent step (thesis Sec. 5.2.1, eq. 5.14): the one dual variable of
        the current round is set to the maximiser of the dual, which for the Euclidean
        complexity and the hinge loss has the closed form of thesis eq. (7.11).

    Problem solved by a round (primal form; Crammer et al. 2006, eqs. 1, 5, 7)::

        PA:     w_{t+1} = argmin_w 1/2 ||w - w_t||^2                 s.t. loss_t(w) = 0
        PA-I:   w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C xi          s.t. loss_t(w) <= xi, xi >= 0
        PA-II:  w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C xi^2        s.t. loss_t(w) <= xi

        loss_t(w) = [gamma - margin_t(w)]_+   (gamma = ``margin``)

    Solution: w_{t+1} = w_t + tau_t y_t x_t (binary) or w_y += tau_t x_t, w_r -= tau_t x_t
    (K classes, r the rival of maximal score), with::

        PA:    tau = loss / (kappa ||x||^2)
        PA-I:  tau = min(C, loss / (kappa ||x||^2))         = alpha_t / c of eq. (7.11), C = 1/c
        PA-II: tau = loss / (kappa ||x||^2 + 1/(2C))

    Where
        margin_t(w) = y_t <w, x_t> and kappa = 1 for the binary learner (one vector);
        margin_t(W) = <w_y, x> - max_{r != y} <w_r, x> and kappa = 2 for K classes: the
        max-loss rival update of the multiclass PA (Crammer et al. 2006, Sec. 7), where
        moving two columns makes the squared norm count twice.
        ||x||^2 includes the intercept feature (value ``intercept_scaling``) when ``fit_intercept``.
        A zero x (no intercept) cannot change the margin: no update.
        ``class_weight`` x ``sample_weight`` multiplies C (PA-I, PA-II) or tau (PA).

    Parameters
    ----------
    variant : {'PA', 'PA-I', 'PA-II'}, default='PA-I'
        Which problem the step solves (above).
    C : float, default=1.0
        Aggressiveness: the cap on tau (PA-I) or the slack cost (PA-II); ignored by PA.
    margin : float, default=1.0
        The margin gamma of the hinge loss: examples are updated until their margin
        reaches it.  Predictions of PA do not depend on its scale.
    n_epochs : int, default=100
        The most passes over the data :meth:`fit` makes; exactly that many with ``tol=None``.
        100 since the defaults review (was a fixed 5): with the stop below, 5 shuffled epochs
        left texture below scikit-learn's default (0.977 against 0.985); the stop ends after
        6-75 epochs on the shared sets (docs/defaults.md).
    tol, n_iter_no_change : float >= 0 or None, int >= 1, default=1e-3, 5
        The convergence stop of :meth:`fit`, as in :class:`onlinelearn.Perceptron`, on the
        summed hinge loss [margin - margin_t(w_t)]_+ of each epoch.
    shuffle, average, random_state, fit_intercept, class_weight, dtype, constraint, radius
        As in :class:`onlinelearn.Perceptron`.
    average_power : float in [0, 10], default=2.0
        eta of the weighted average sum_t t^eta w_t / sum_t t^eta (with ``average=True``), as
        in :class:`onlinelearn.Perceptron`: 0.0 is the uniform average, eta > 0 the
        polynomial-decay averaging of Shamir & Zhang (ICML 2013).
    intercept_scaling : float > 0 or 'auto', default='auto'
        Value b of the intercept feature (the intercept is b times its weight; b^2 enters
        ||x||^2).  ``'auto'`` (the default since the defaults review; was 1.0): b = the power
        of ten nearest the root mean square r of the nonzero values of the first training
        batch (``fit``: X; ``partial_fit``: the first call's X), at most 1, stored as
        ``intercept_scaling_`` and kept by later calls and by model files.  It reads the values,
        not their storage (the same rows dense or CSR give the same b).  Binary, standardised
        and unscaled features (r >= 0.32) keep b = 1; unit-norm text rows (TF-IDF, hashed
        counts: r about 0.08) get b = 0.1.  There a bias feature of value 1 is as large as a
        whole row and moves as fast as all the features together: one pass over 20
        newsgroups loses 1 point averaged, 6 points as last iterate, and the raw messages
        hashed lose 4 points (docs/defaults.md); b = 0.1 makes the bias step the size of a
        typical feature's, as scikit-learn's SGD damps its intercept on sparse input
        (``SPARSE_INTERCEPT_DECAY = 0.01``).  No shared data set moves by more than 0.003
        otherwise.  A stream whose first call is a single row of text may get 0.01 or 1;
        give a number to fix b.  Before this release ``'auto'`` was 0.1 for any CSR and 1 for
        any dense first batch.  Model files keep the value they were saved with.

    Attributes
    ----------
    dual_objective_ : float
        D = sum_t (gamma tau_t - [PA-II] tau_t^2 / (4 C_t)) - 1/2 ||sum_t tau_t u_t||^2, the
        dual of 1/2 ||w||^2 + sum_t C_t [gamma - margin_t(w)]_+ (PA-II: squared; PA: C_t = inf)
        over the rounds so far, kept as the sum of the rounds' increments; the intercept is a
        regularised feature of value b.  D <= that primal at every w (docs/bounds.md).
    classes_, coef_, intercept_, n_updates_, n_mistakes_, t_, n_iter_
        As in :class:`onlinelearn.Perceptron`.
    intercept_scaling_ : float
        The value b that ``intercept_scaling='auto'`` chose (absent with a number).

    Examples
    --------
    >>> from onlinelearn import PassiveAggressiveClassifier
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = PassiveAggressiveClassifier(variant="PA-I", C=0.01, average=True)
    >>> online = clf.partial_fit_predict(X, y)
    >>> print(f"online mistake rate {(online != y).mean():.3f}")
    online mistake rate 0.110
    >>> X_test, y_test = load_dna("test")
    >>> print(f"test accuracy {clf.score(X_test, y_test):.3f}")
    test accuracy 0.945
    """

    def _configuration(self):
        return Euclidean(), Hinge(self.margin), Aggressive(self.C, self.variant)

    def _auto_intercept_scaling(self, batch, fit_mode=True):
        """b of ``intercept_scaling='auto'``: the power of ten nearest the rms of the nonzero
        values of ``batch``, at most 1 (:func:`~onlinelearn.shell.intercept.typical_value_scaling`;
        the same for dense and CSR storage of the same numbers)."""
        return typical_value_scaling(batch)
