"""OnlineLearner: a learner as a point of the framework, link x loss x step.

The estimator shell (:class:`onlinelearn.base.OnlineLinearClassifier`: validation, label growth,
class and sample weights, averaging, the transaction around every call, model files) runs one
compiled pass chosen by the three objects:

* the hinge loss (conservative or aggressive step, any link) and COPA's confusion loss run the
  library's closed-form passes (:mod:`onlinelearn._core.euclid_pass`,
  :mod:`onlinelearn._core.online_loop`), the very passes of the named learners, which are
  presets of these objects (``Perceptron() == OnlineLearner('euclidean', Hinge(0),
  Conservative())`` up to defaults; ``tests/test_framework.py`` checks them bit for bit);
* any other margin loss, the user's :class:`~onlinelearn.framework.CustomLoss` included, runs
  on every link: on the Euclidean link the generic pass of :mod:`onlinelearn._core.generic`,
  on the entropy and p-norm links their own pass (:mod:`onlinelearn._core.online_loop`, with
  the loss's functions), so averaging, label growth, balanced weights and the exp shift are
  the hinge's.  The aggressive step solves the round's 1-D dual to machine precision: the root
  of tau + C l'(z(tau)), z(tau) the margin after the step (a straight line on the Euclidean
  link, the link's margin otherwise; :func:`onlinelearn._core.steps.root_tau`);
* the steps that keep past rounds' dual variables (``LastK``, ``RowAction``, ``FTRL``,
  ``SelfTuned``, ``StronglyConvex``) run the dual ascent family
  (:mod:`onlinelearn.dual_ascent.family`, whose preset is ``DualAscentClassifier``), and the
  ranking loss the label-ranking family (:mod:`onlinelearn.ranking.family`, ``LabelRanker``):
  the estimator routes to it every attribute that family defines (:mod:`._route`).

Regression (a residual loss) is :class:`OnlineRegressor`, on the regressors' shell.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._core import generic as G
from .._core.online_loop import online_pass
from ..dual_ascent.family import DualAscentFamily, check_dual_ascent_configuration
from ..framework import links, losses, steps
from ..framework._axis import AxisObject
from ..framework.links import Entropy, Euclidean, Link, as_link
from ..framework.losses import (
    MARGIN,
    RANKING,
    RESIDUAL,
    Confusion,
    CustomLoss,
    Loss,
    Squared,
    as_loss,
    loss_cfuncs,
)
from ..framework.steps import Aggressive, Conservative, Step, as_step
from ..linear._average import AVERAGE_POWER
from ..ranking.family import LabelRankingFamily, check_ranking_configuration
from ..shell.base import LINEAR, OnlineLinearClassifier
from ..shell.meta import params_from_json
from ..shell.params import CONFUSION_CLASS_WEIGHT, Param, parameters
from ..shell.regression import REGRESSION, OnlineLinearRegressor
from ..shell.stop import STOP, ConvergenceStopMixin
from ._route import routed

__all__ = ["OnlineLearner", "OnlineRegressor"]

# ------------------------------------------------------------------ model-file encoding
#: the objects a model file may name: every public link, loss and step but the user's loss
_OBJECTS = {
    name: obj
    for module in (links, losses, steps)
    for name in module.__all__
    if isinstance(obj := getattr(module, name), type)
    and issubclass(obj, AxisObject)
    and obj not in (Link, Loss, Step, CustomLoss)
}


def _encode(obj):
    if isinstance(obj, CustomLoss):
        raise TypeError(
            "a learner built on a CustomLoss cannot be saved to a model file: the loss is the "
            "user's code, which model files never hold (they are pickle-free). Save the "
            "weights (coef_, intercept_) instead, or rebuild the learner from its code."
        )
    if isinstance(obj, AxisObject):
        fields = {k: v for k, v in obj.__dict__.items() if not k.startswith("_")}
        return {"__framework__": type(obj).__name__, "fields": fields}
    return obj


#: ``step`` of both learners: an object or the name of one
_STEP = Param("aggressive", Step, StrOptions({"conservative", "aggressive"}))
_AXES = ("link", "loss", "step")


def _decode(value):
    if isinstance(value, dict) and "__framework__" in value:
        cls = _OBJECTS.get(value["__framework__"])
        if cls is None:
            raise ValueError(f"unknown framework object {value['__framework__']!r} in model file")
        return cls(**value.get("fields", {}))
    return value


def _with_axes(est, state):
    """The model file ``state`` = (meta, arrays) of a learner whose ``link``, ``loss`` and
    ``step`` may be objects: each is written as JSON (:func:`_encode`), and rebuilt when the
    file is read (:func:`_decode_params`)."""
    meta, arrays = state
    meta["params"] = {**meta["params"], **{n: _encode(getattr(est, n)) for n in _AXES}}
    return meta, arrays


@classmethod
def _decode_params(cls, params):
    """The parameters of a model file with their link, loss and step objects rebuilt."""
    return {k: _decode(v) for k, v in params.items()}


@routed(DualAscentFamily, LabelRankingFamily)
class RoutedOnlineLinearClassifier(OnlineLinearClassifier):
    """The linear family, with the attributes of the other two routed to them by ``_family()``."""


@parameters(
    "link loss step * n_epochs tol n_iter_no_change shuffle average average_power random_state "
    "fit_intercept intercept_scaling class_weight dtype",
    LINEAR, STOP, n_epochs=100, average=True, class_weight=CONFUSION_CLASS_WEIGHT, step=_STEP,
    average_power=AVERAGE_POWER(0.0),
    link=Param("euclidean", Link, StrOptions({"euclidean", "entropy", "pnorm"})),
    loss=Param("hinge", Loss, StrOptions({"hinge", "squared_hinge", "logistic", "confusion"})),
)  # fmt: skip
class OnlineLearner(ConvergenceStopMixin, RoutedOnlineLinearClassifier):
    """An online classifier given by its three choices: ``link`` x ``loss`` x ``step``.

    Problem solved by a round (thesis eq. 5.14; the Euclidean link shown, the others replace
    1/2 ||w - w_t||^2 by the Bregman divergence B_f(w, w_t) of their f, for every loss)::

        Aggressive(C, 'PA-I'):   w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C l(z_t(w))
        Aggressive(C, 'PA-II'):  w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C l(z_t(w))^2
        Aggressive(variant='PA') (hinge only): argmin 1/2 ||w - w_t||^2  s.t.  l(z_t(w)) = 0
        Conservative(eta):       on a mistake (z_t <= 0), w_{t+1} = w_t - eta l'(z_t) u_t

    Where
        z_t(w) = y_t <w, x_t> (binary, one weight vector, u_t = y_t x_t) or
        <w_y, x_t> - <w_r, x_t> with r the rival of largest score (K classes; the update
        moves column y by +x_t and column r by -x_t): the max-rival form of any margin loss.
        ``class_weight`` x ``sample_weight`` multiplies C (PA-I, PA-II) or the step (PA,
        conservative).  x_t includes the intercept feature b (``intercept_scaling``).

    Parameters
    ----------
    link : Link or {'euclidean', 'entropy', 'pnorm'}, default='euclidean'
        :class:`~onlinelearn.framework.Euclidean`, :class:`~onlinelearn.framework.Entropy`
        (``eta``, ``balanced``), :class:`~onlinelearn.framework.PNorm` (``p``).  Every
        margin loss runs on every link, but COPA's (Euclidean only); ``Entropy(self_tuned=True)``
        takes the conservative step only.
    loss : Loss or str, default='hinge'
        A margin loss: :class:`~onlinelearn.framework.Hinge` (``margin``), ``SquaredHinge``,
        ``Logistic``, ``Confusion`` (COPA: Euclidean link, aggressive step) or the user's
        :class:`~onlinelearn.framework.CustomLoss`.  Residual losses: :class:`OnlineRegressor`.
    step : Step or {'conservative', 'aggressive'}, default='aggressive'
        :class:`~onlinelearn.framework.Conservative` (``eta``) or
        :class:`~onlinelearn.framework.Aggressive` (``C``, ``variant``); or a step over
        several dual variables, :class:`~onlinelearn.framework.LastK`,
        :class:`~onlinelearn.framework.RowAction`, :class:`~onlinelearn.framework.FTRL`,
        :class:`~onlinelearn.framework.SelfTuned`,
        :class:`~onlinelearn.framework.StronglyConvex` (with ``Hinge(margin)``, ``average=False``,
        ``tol=None``, float64): the learner is then
        :class:`onlinelearn.DualAscentClassifier`'s family and has its attributes
        (``dual_objective_``, ``dual_coef_``, ``n_unconverged_``).
    n_epochs, tol, n_iter_no_change, shuffle, average, random_state, fit_intercept,
    intercept_scaling, class_weight, dtype
        As in :class:`onlinelearn.PassiveAggressiveClassifier`.
    average_power : float in [0, 10], default=0.0
        eta of the weighted average sum_t t^eta w_t / sum_t t^eta (with ``average=True``), as
        in :class:`onlinelearn.Perceptron`, whose default is 2.0: here 0.0, the uniform
        average (``OnlineLearner(Euclidean(), Hinge(0.0), Conservative(),
        average_power=2.0)`` is ``Perceptron(intercept_scaling=1.0)``).  Kept on the
        Euclidean link only (every margin loss); the entropy and p-norm links refuse eta > 0.

    Examples
    --------
    >>> from onlinelearn import OnlineLearner
    >>> from onlinelearn.framework import Aggressive, Logistic
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = OnlineLearner(loss=Logistic(), step=Aggressive(C=0.05), random_state=0)
    >>> print(f"test accuracy {clf.fit(X, y).score(*load_dna('test')):.3f}")
    test accuracy 0.946
    """

    # ------------------------------------------------------------------ the configuration
    def _configuration(self):
        return as_link(self.link), as_loss(self.loss), as_step(self.step)

    def _get_state(self):
        return _with_axes(self, super()._get_state())

    _decode_params = _decode_params

    def _family(self):
        """The family the configuration belongs to: None (the linear one), DualAscentFamily
        (a step over several dual variables) or LabelRankingFamily (a ranking loss)."""
        if getattr(self.step, "multi_variable", False):
            return DualAscentFamily
        if getattr(self.loss, "kind", None) == RANKING:
            return LabelRankingFamily
        return None

    def _check_family(self, family, link, loss, step):
        """The rules of another family than the linear one, and the shell's parameters it
        cannot honour (refused, never ignored)."""
        ranking = family is LabelRankingFamily
        if ranking:
            check_ranking_configuration(link, loss, step)
        else:
            check_dual_ascent_configuration(link, loss, step)
        cw_ok = "None" if ranking else "None, a dict or 'balanced'"
        unsupported = [
            f"{name}={value!r} (use {ok})"
            for name, value, ok, bad in (
                ("average", self.average, "False", self.average),
                ("tol", self.tol, "None", self.tol is not None),
                ("class_weight", self.class_weight, cw_ok,
                 self.class_weight is not None if ranking else self.class_weight == "confusion"),
                ("dtype", self.dtype, "None", self.dtype not in (None, "float64", np.float64)),
                ("intercept_scaling", self.intercept_scaling, "a number",
                 isinstance(self.intercept_scaling, str)),
            )
            if bad
        ]  # fmt: skip
        if unsupported:
            what = (
                f"loss={loss!r} runs the label-ranking family" if ranking else
                f"step={step!r} keeps the dual variables of past rounds (the dual ascent family)"
            )  # fmt: skip
            raise ValueError(
                f"{what}: it keeps no averaged weights, runs its n_epochs in full, computes in "
                "float64 and weighs examples by its own rules; set " + ", ".join(unsupported)
            )

    @classmethod
    def _route_from_state(cls, meta, arrays):
        """A model of another family than the linear one, rebuilt by that family (None for
        the linear family, which :mod:`onlinelearn.shell.linear_state` rebuilds)."""
        params = cls._decode_params(params_from_json(meta["params"]))
        family = cls(**params)._family()
        if family is None:
            return None
        return family._from_state.__func__(cls, {**meta, "params": params}, arrays)

    def _generic(self):
        """True when the loss has no closed-form pass: the generic pass runs."""
        return as_loss(self.loss).closed_form_step is None

    @property
    def _always_multiclass(self):
        return isinstance(as_loss(self.loss), Confusion)

    @property
    def _class_weight_modes(self):
        if isinstance(as_loss(self.loss), Confusion):
            return ("balanced", "confusion")
        return ("balanced",)

    def _check_params(self):
        link, loss, step = self._configuration()
        family = self._family()
        if family is not None:
            return self._check_family(family, link, loss, step)
        if loss.kind != MARGIN:
            raise ValueError(
                f"OnlineLearner takes a margin loss (classification); {loss!r} is a residual "
                "loss: use onlinelearn.framework.OnlineRegressor for regression."
            )
        if isinstance(loss, Confusion):
            if not isinstance(step, Aggressive) or step.variant != "PA-I":
                raise ValueError("loss=Confusion() (COPA) takes step=Aggressive(C) (PA-I)")
            if not isinstance(link, Euclidean):
                raise ValueError("loss=Confusion() (COPA) runs on the Euclidean link")
        elif self.class_weight == "confusion":
            raise ValueError("class_weight='confusion' goes with loss=Confusion() (COPA)")
        if self._generic():
            if isinstance(step, Aggressive) and step.variant == "PA":
                raise ValueError(
                    "Aggressive(variant='PA') (a zero-loss constraint) is the hinge loss's; "
                    f"{loss!r} takes 'PA-I' or 'PA-II' with a finite C"
                )
            if isinstance(step, Aggressive) and not np.isfinite(step.C):
                raise ValueError("Aggressive(C) needs a finite C for a loss other than the hinge")
        power = self.average_power
        if self.average and power != 0 and not isinstance(link, Euclidean):
            raise ValueError(
                f"average_power={power!r} (the weighted average) is kept on the Euclidean link "
                f"only; {link!r} averages uniformly: use average_power=0.0 (or average=False)"
            )
        if isinstance(link, Entropy) and link.self_tuned:
            if self.average:
                raise ValueError("Entropy(self_tuned=True) cannot be averaged: use average=False")
            if not isinstance(step, Conservative):
                raise ValueError("Entropy(self_tuned=True) has only the conservative step")

    # ------------------------------------------------------------------ the pass
    def _finite_in_pass(self):
        return not self._generic() and super()._finite_in_pass()

    def _pass_kernel(self, ip):
        if not self._generic():
            return super()._pass_kernel(ip)
        value, deriv = loss_cfuncs(as_loss(self.loss))
        if not isinstance(as_link(self.link), Euclidean):

            def link_kernel(*args):  # the link's own pass, with this loss's steps
                return online_pass(*args, value, deriv)

            return link_kernel

        def kernel(data, indices, indptr, y, weight, order, theta, A, lastS, st, ip, fp,
                   pred_out, loss_out, scores, *rest):  # fmt: skip
            return G.margin_pass(
                data, indices, indptr, y, weight, order, theta, A, st, ip, fp,
                pred_out, loss_out, scores, value, deriv,
            )  # fmt: skip

        return kernel

    def _begin(self, X, y, classes, sample_weight, *, predict_with="current", **call):
        """The set-up of a call (:mod:`onlinelearn.shell.online`) by the active family, after
        the checks of ``predict_with`` (``partial_fit_predict``): the averaged weights predict
        only on the linear family's closed-form passes."""
        if self._family() is not None:
            if predict_with != "current":
                raise ValueError(
                    f"predict_with={predict_with!r}: the dual ascent and ranking families keep "
                    "no averaged weights; their progressive predictions are the current iterate's"
                )
            self._validate_params_once()
            return super()._begin(X, y, classes, sample_weight, **call)
        if predict_with == "average" and self._generic():
            raise ValueError(
                "predict_with='average' is offered by the closed-form passes (hinge, COPA); "
                f"{as_loss(self.loss)!r} predicts with the current iterate"
            )
        return super()._begin(X, y, classes, sample_weight, predict_with=predict_with, **call)

    def decision_function(self, X):
        """Scores <w_k, x> + b_k; with COPA's loss and two classes, s_1 - s_0 (as COPA)."""
        scores = super().decision_function(X)
        if self._always_multiclass and scores.ndim == 2 and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores


@parameters(
    "link loss step * average n_epochs shuffle random_state fit_intercept intercept_scaling",
    REGRESSION, step=_STEP, link=Param("euclidean", Link, StrOptions({"euclidean"})),
    loss=Param("squared", Loss, StrOptions({"squared", "epsilon_insensitive"})),
)  # fmt: skip
class OnlineRegressor(OnlineLinearRegressor):
    """An online regressor given by its three choices: Euclidean link x residual loss x step.

    Problem solved by a round, r_t(w) = <w, x_t> - y_t::

        Aggressive(C, 'PA-I'):   w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C l(r_t(w))
        Aggressive(C, 'PA-II'):  w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C l(r_t(w))^2
        Conservative(eta):       when l(r_t) > 0, w_{t+1} = w_t - eta l'(r_t) x_t

    solved by the generic 1-D dual solve of :mod:`onlinelearn._core.generic` for every
    loss (the closed forms of :class:`onlinelearn.PassiveAggressiveRegressor` are its fast
    paths for the eps-insensitive and squared losses; the tests check the two agree).

    Parameters
    ----------
    loss : Loss or {'squared', 'epsilon_insensitive'}, default='squared'
        :class:`~onlinelearn.framework.Squared`, :class:`~onlinelearn.framework.EpsInsensitive`
        or a :class:`~onlinelearn.framework.CustomLoss` with ``kind='residual'``.
    step : Step or {'conservative', 'aggressive'}, default='aggressive'
    link : 'euclidean' or Euclidean(), default='euclidean'
    average, n_epochs, shuffle, random_state, fit_intercept, intercept_scaling
        As in :class:`onlinelearn.PassiveAggressiveRegressor`.
    """

    def _check_params(self):
        link, loss, step = as_link(self.link), as_loss(self.loss), as_step(self.step)
        if not isinstance(link, Euclidean):
            raise ValueError(f"OnlineRegressor runs on the Euclidean link, got {link!r}")
        if loss.kind != RESIDUAL:
            raise ValueError(
                f"OnlineRegressor takes a residual loss; {loss!r} is a margin loss: use "
                "onlinelearn.OnlineLearner for classification."
            )
        closed = loss.closed_form_step == "regression"
        if (
            isinstance(step, Aggressive)
            and not closed
            and (step.variant == "PA" or not np.isfinite(step.C))
        ):
            raise ValueError(
                f"{loss!r} takes Aggressive(C) with a finite C, 'PA-I' or 'PA-II' (the zero-loss "
                "step 'PA' is the eps-insensitive loss's)"
            )
        if isinstance(loss, Squared) and isinstance(step, Aggressive) and step.variant != "PA-I":
            raise ValueError("Squared() takes Aggressive(C) with variant 'PA-I' (its prox step)")

    def _configuration(self):
        return as_link(self.link), as_loss(self.loss), as_step(self.step)

    def _get_state(self):
        return _with_axes(self, super()._get_state())

    _decode_params = _decode_params

    @classmethod
    def _from_state(cls, meta, arrays):
        return super()._from_state({**meta, "params": cls._decode_params(meta["params"])},
                                   arrays)  # fmt: skip
