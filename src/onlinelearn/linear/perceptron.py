"""The Perceptron: Euclidean link x hinge loss x conservative step."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._core.config import njit
from .._core.fp import finite
from ..framework.links import Euclidean
from ..framework.losses import Hinge
from ..framework.steps import Conservative
from ..shell.base import LINEAR, OnlineLinearClassifier
from ..shell.intercept import _nonzero_sumsq
from ..shell.params import CONSTRAINT, POSITIVE, Param, parameters
from ..shell.stop import STOP, ConvergenceStopMixin
from ._average import AVERAGE_POWER
from ._constraint import ProjectedUpdatesMixin


@parameters(
    "* n_epochs tol n_iter_no_change shuffle average average_power random_state fit_intercept "
    "intercept_scaling class_weight dtype constraint radius",
    LINEAR, STOP, CONSTRAINT, n_epochs=100, average=True, average_power=AVERAGE_POWER,
    intercept_scaling=Param("fit", POSITIVE, StrOptions({"auto", "fit"})),
)  # fmt: skip
class Perceptron(ConvergenceStopMixin, ProjectedUpdatesMixin, OnlineLinearClassifier):
    """Perceptron (Rosenblatt 1958), binary and true multiclass (max-score update).

    What
        The conservative dual ascent step on the hinge loss with the Euclidean complexity
        function: the quasi-additive algorithm of Fig. 5.1 (thesis, Sec. 5.1.1) with
        Link(theta) = theta.

    Problem solved by a round (thesis eq. 5.12-5.13)::

        max_{alpha_t in [0,1]}  D(alpha) = -c f*(-(1/c) sum_i lambda_i) - sum_i g_i*(lambda_i),
        f(w) = 1/2 ||w||^2,   g_t(w) = [gamma - margin_t(w)]_+   on mistake rounds only,

        answered by alpha_t = 1 on a mistake (margin_t(w_t) <= 0), alpha_t = 0 otherwise.

    Where
        binary (one vector):  margin_t(w) = y_t <w, x_t>,  y_t in {-1, +1}
                              update  w <- w + y_t x_t
        K classes:            margin_t(W) = <w_{y_t}, x_t> - max_{r != y_t} <w_r, x_t>
                              update  w_{y_t} <- w_{y_t} + x_t,  w_r <- w_r - x_t  (r the rival)
        The learning rate 1/c does not change any prediction (thesis Sec. 5.1.1) and is 1.

    Mistake bound (Corollary 5): for every u,
    |M| <= sum_{t in M} [1 - y_t<u,x_t>]_+ + X ||u|| sqrt(sum_{t in M} [1 - y_t<u,x_t>]_+)
    + X^2 ||u||^2, with X = max_{t in M} ||x_t||.

    Parameters
    ----------
    n_epochs : int, default=100
        The most passes over the data :meth:`fit` makes (``partial_fit`` always makes one);
        with ``tol=None``, exactly that many.  100 since the defaults review (was a fixed 5):
        a cap above every stop measured on the shared sets (6-75 epochs, docs/defaults.md).
    tol : float >= 0 or None, default=1e-3
        The convergence stop of :meth:`fit` (scikit-learn's rule): stop after
        ``n_iter_no_change`` epochs in a row whose summed online loss (each row's loss made by
        the weights before its update: [-margin]_+ here) fails to fall below the best sum so
        far minus ``tol`` times the number of rows.  It cannot stop before
        ``n_iter_no_change + 1`` epochs; None: no stop.
    n_iter_no_change : int >= 1, default=5
        Epochs without improvement that stop :meth:`fit`.
    shuffle : bool, default=True
        Visit the rows of each epoch of :meth:`fit` in a random order drawn from
        ``random_state``; ``False`` keeps the given order.
    average : bool, default=True
        Predict with the average of the hypotheses after every round (the "average"
        online-to-batch conversion, thesis App. B.3) instead of the last one; kept lazily, at
        O(1) cost per changed weight.  True by default since the defaults review
        (docs/defaults.md: measured against scikit-learn's defaults on the shared data sets);
        model files keep the value they were saved with.  :meth:`partial_fit_predict`
        predicts each row with the current iterate (the hypothesis being learned) unless
        asked otherwise.
    average_power : float in [0, 10], default=2.0
        eta of the weighted average (with ``average=True``; ignored otherwise): round t (t
        counts every round of every epoch and call) weighs t^eta, so the model predicts with
        sum_t t^eta w_t / sum_t t^eta, w_t the hypothesis after round t.  0.0 is the uniform
        average; eta > 0 the polynomial-decay averaging of Shamir & Zhang (ICML 2013), eta = 1
        that of Lacoste-Julien, Schmidt & Bach (2012), which lean on the later, better
        iterates (:mod:`onlinelearn.linear._average`).  Same cost as the uniform average.
    random_state : int, RandomState or None, default=None
        Seed of the shuffling; the same seed gives the same weights, bit for bit.
    fit_intercept : bool, default=True
        Learn a bias, as the weight of an extra feature of constant value ``intercept_scaling``.
    intercept_scaling : float > 0, 'fit' or 'auto', default='fit'
        Value b of that feature (LIBLINEAR's convention): the intercept is b times its weight,
        and b^2 enters ||x||^2 in the aggressive steps.  ``'auto'`` takes b = the median norm
        ||x|| of the nonzero rows of the first training batch (``fit``: X; ``partial_fit``: the
        first call's X), stored as ``intercept_scaling_`` (1 if there is none).  The
        Perceptron's predictions do not change when the features are all multiplied by a
        constant c > 0 (its weights scale by c); with b tied to the scale of the rows this
        holds for the bias too, so the bias learns at the pace of a typical row whatever the
        units of the features: with b = 1 and features in the thousands the averaged
        Perceptron reaches 0.47 on spambase, with the median row norm 0.71-0.73
        (docs/defaults.md).  ``'fit'`` (the default since the defaults review; was 1.0): the
        median row norm when :meth:`fit` starts the model (it sees its whole training set,
        so b does not depend on any batching); when ``partial_fit`` starts it, b =
        10^floor(log10 r), at least 1, with r the root mean square of the nonzero values of
        the first call's X (:func:`stream_intercept_scaling`; it was 1).  A typical value
        rather than a row norm, rounded down: one pass loses more when b is too large than
        when it is too small (the row norm cost texture, vowel and mushroom 1-2.5 points), so
        binary, standardised and unit-norm rows (r <= 1: b = 1, as before) give the same model
        as before, and spambase's raw counts (r = 195: b = 100) go from 0.42 to 0.69 in one
        pass (scikit-learn 0.55).  A power of ten: chunkings of a stream whose first chunks
        have r in the same decade give the same b and the same model, and X -> 10^j X (j >= 0,
        r >= 1) leaves the predictions unchanged.  Either way b is stored as
        ``intercept_scaling_``, kept by later ``partial_fit`` calls and by model files
        (files keep the b they stored, whichever rule chose it); files written with a
        number keep it.
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the step of examples of each class: a dict {label: weight}, or
        'balanced' = n / (n_classes * n_class) with exact counts in :meth:`fit` and running
        counts (all rows seen so far, this one included) in :meth:`partial_fit`.
    dtype : None, 'float32' or 'float64', default=None
        dtype of the weights.  None: that of the first batch's X (float32 X gives float32
        weights, which halves the memory traffic of a pass on wide sparse data).  Scores,
        norms, step sizes and the averaging sums are always accumulated in float64; the model
        keeps its dtype for later batches and in model files.
    constraint : {None, 'l1', 'simplex'}, default=None
        Projected updates (thesis Sec. 7.1): after every update, each weight vector it changed
        (a whole column, the intercept weight included) is projected back onto the l1 ball
        {||w||_1 <= ``radius``} (Fig. 7.2) or the simplex {w >= 0, sum w = ``radius``}
        (Fig. 7.1); a fresh model starts at the projection of 0.  O(R log R) per update for
        R weights per column.  None: the plain learner, unchanged.
    radius : float > 0, default=1.0
        z of the constraint set.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Labels seen so far, sorted.
    coef_ : ndarray of shape (1, n_features) (binary) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_updates_, n_mistakes_, t_ : int
        Updates made, online mistakes (prediction before the update was wrong), rows seen.
    n_iter_ : int
        Passes the last call made: :meth:`fit` at most ``n_epochs`` (fewer when ``tol``
        stopped it), :meth:`partial_fit` 1 (as scikit-learn); kept by model files.
    intercept_scaling_ : float
        The value b of the intercept feature, when ``intercept_scaling`` is 'fit' or 'auto'.
    dual_objective_ : float
        The dual of the thesis's Perceptron problem at gamma = 1 and c = 1 (Sec. 5.1.1):
        D = n_updates_ - 1/2 ||sum_{t in M} u_t||^2 <= 1/2 ||w||^2 + sum_t [1 - margin_t(w)]_+
        for every w (unit example weights; a weight s_t makes tau_t = C_t = s_t), kept as
        the sum of the mistake rounds' increments (docs/bounds.md).

    Examples
    --------
    Progressive validation on the DNA splice-junction data shipped with the package:

    >>> from onlinelearn import Perceptron
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = Perceptron(average=True)
    >>> online = clf.partial_fit_predict(X, y)
    >>> print(f"online mistake rate {(online != y).mean():.3f}")
    online mistake rate 0.172
    >>> X_test, y_test = load_dna("test")
    >>> print(f"test accuracy {clf.score(X_test, y_test):.3f}")
    test accuracy 0.929

    ``fit`` with the defaults: epochs until the training loss stops improving, b from the rows:

    >>> fitted = Perceptron(random_state=0).fit(X, y)
    >>> print(fitted.n_iter_, f"b = {fitted.intercept_scaling_:.2f}")
    29 b = 6.78
    >>> print(f"test accuracy {fitted.score(X_test, y_test):.3f}")
    test accuracy 0.936
    """

    def _configuration(self):
        return Euclidean(), Hinge(0.0), Conservative()

    def _auto_intercept_scaling(self, batch, fit_mode=True):
        """b of ``intercept_scaling='auto'``: the median norm of the nonzero rows of ``batch``
        (1 when every row is zero); of ``'fit'``: the same in ``fit`` (``batch`` is then the
        whole training set), :func:`stream_intercept_scaling` of the first batch in a stream
        begun by ``partial_fit``; see the class docstring."""
        if self.intercept_scaling == "fit" and not fit_mode:
            return stream_intercept_scaling(batch)
        return median_row_norm(batch)


@njit
def _row_sqnorms(data, indptr, out):
    """out[i] = sum_q data_q^2 over the entries of row i; True if all are finite."""
    ok = True
    for i in range(indptr.shape[0] - 1):
        acc = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[q])
            acc += v * v
        out[i] = acc
        if not finite(acc):
            ok = False
    return ok


@njit
def _scaled_norms(data, indptr, sq):
    """sq[i] <- ||x_i|| for every row: sqrt(sq[i]) where the sum of squares is finite, else the
    sum again on the row scaled by its own largest |value| (the other rows keep their scale:
    scaling them all by the batch's largest value underflowed ordinary rows to zero)."""
    for i in range(indptr.shape[0] - 1):
        if finite(sq[i]):
            sq[i] = np.sqrt(sq[i])
            continue
        big = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            big = max(big, abs(np.float64(data[q])))
        if not (big > 0.0 and finite(big)):
            continue  # a NaN or an infinity in the row, which the pass then refuses
        acc = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[q]) / big
            acc += v * v
        sq[i] = big * np.sqrt(acc)


def median_row_norm(batch):
    """Median of ||x_i|| over the nonzero rows of a :class:`~onlinelearn.shell.validation.CSRBatch`
    (dense or CSR: only ``data`` and ``indptr`` are read; one compiled pass; where a row's
    sum of squares overflows, the norms are computed row by row, each row scaled by its own
    largest |value|); 1.0 when there is no nonzero row or the median is not a finite positive
    number."""
    n = batch.n_rows
    if n == 0 or batch.data.size == 0:
        return 1.0
    sq = np.empty(n)
    if _row_sqnorms(batch.data, batch.indptr, sq):
        sq = sq[sq > 0.0]
        b = float(np.sqrt(np.median(sq))) if sq.size else 1.0
    else:
        _scaled_norms(batch.data, batch.indptr, sq)
        sq = sq[sq > 0.0]
        b = float(np.median(sq)) if sq.size else 1.0
    return b if np.isfinite(b) and b > 0.0 else 1.0


def stream_intercept_scaling(batch):
    """b of ``intercept_scaling='fit'`` when ``partial_fit`` starts the model: 10^floor(log10 r),
    at least 1, where r is the root mean square of the nonzero values of ``batch`` (dense or
    CSR, read in row-major order, as :func:`~onlinelearn.shell.intercept.typical_value_scaling`);
    1.0 when there is no nonzero value, a value is NaN, or the sum of squares overflows.

    Why (docs/defaults.md, "One pass over a stream"): the bias is the weight of one more
    feature of value b, and a mistake moves it by b as it moves weight j by x_j.  With b = 1 and
    features in the hundreds (spambase: r = 195, values up to 15,841) the bias cannot keep up
    and one pass reaches 0.42 (majority class 0.61); with b of the size of a typical value
    0.69.  Rounded down: one pass loses fast when b is above a typical value (optdigits, r =
    11: b = 10 0.956, 300 0.919, 1000 0.682) and little when it is below; and b = the median
    row norm (``'auto'``), several typical values, lost 1-2.5 points on texture, vowel and
    mushroom.  At least 1: binary, standardised and unit-norm rows (r <= 1) keep b = 1, the
    former stream default, and their models are bit-identical to it.  A power of ten: b is
    the same for any chunk of the same data whose r stays in the same decade, and X -> 10^j X
    (j >= 0, r >= 1) gives b -> 10^j b, so the Perceptron's predictions do not change."""
    sumsq, count = _nonzero_sumsq(batch.data)
    if count == 0 or not (0.0 < sumsq < np.inf):
        return 1.0  # no nonzero value, a NaN (refused by the pass), squares out of range
    exponent = np.floor(0.5 * np.log10(sumsq / count))
    b = float(10.0 ** max(exponent, 0.0))
    return b if np.isfinite(b) and b > 0.0 else 1.0
