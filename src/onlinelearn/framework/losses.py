"""The losses of the framework: the second of a learner's three choices.

A *margin loss* l(z) is a function of the margin z = y <w, x> (binary, y in {-1, +1}) or
z = <w_y, x> - max_{r != y} <w_r, x> (K classes: the max-loss rival form, Crammer et al. 2006,
Sec. 7; the update then moves the two columns y and r).  A *residual loss* l(r) is a function of
the residual r = <w, x> - y (regression).  Every loss here is convex.

Each loss object carries two numba-compiled scalar functions, ``value(z)`` and
``derivative(z)`` (a subgradient where l has a kink); the generic steps of
:mod:`onlinelearn.framework.steps` need nothing else, on every link of a classifier (the
Euclidean link's generic pass, or the entropy and p-norm links' own pass with the loss's
functions).  Some losses also have a closed-form step in the library's own passes (the hinge
loss with the conservative and aggressive steps, on every link; the eps-insensitive and squared
losses of the regressors; COPA's confusion loss): a learner built from them runs that pass, and
the tests check that the generic solve of the same problem gives the same step.

==========================  ============================================  ====================
object                      l                                             closed-form pass
==========================  ============================================  ====================
Hinge(margin=1)             [gamma - z]_+                                 yes (all links)
SquaredHinge(margin=1)      [gamma - z]_+^2                               no (all links)
Logistic()                  log(1 + exp(-z))                              no (all links)
Squared()                   r^2 / 2                     (residual)        yes (regressor)
EpsInsensitive(eps=0.1)     [|r| - eps]_+               (residual)        yes (regressor)
Confusion()                 COPA's squared confusion hinge (Thm. 3)       yes (COPA)
RankingHinge(margin=1)      max_{r in Y, s not in Y} [gamma - (s_r - s_s)]_+  yes (ranking)
CustomLoss(value, deriv)    the user's                                    no (all links)
==========================  ============================================  ====================
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from .._core.config import njit
from ._axis import AxisObject, from_name

__all__ = [
    "Confusion",
    "CustomLoss",
    "EpsInsensitive",
    "Hinge",
    "Logistic",
    "Loss",
    "RankingHinge",
    "Squared",
    "SquaredHinge",
    "as_loss",
]

MARGIN = "margin"
RESIDUAL = "residual"
RANKING = "ranking"


class Loss(AxisObject):
    """Base of the loss objects (immutable).

    ``kind``: ``'margin'`` (classification) or ``'residual'`` (regression).
    :meth:`functions` gives the compiled ``(value, derivative)`` pair of scalar functions."""

    kind: ClassVar[str] = MARGIN
    #: the closed-form pass of the library for this loss (module table): ``'hinge'`` (the
    #: Euclidean, entropy and p-norm passes), ``'copa'``, ``'regression'``, or None (generic)
    closed_form_step: ClassVar[str | None] = None

    def functions(self) -> tuple[Any, Any]:
        raise NotImplementedError

    def first_class(self):
        """(value, derivative) as first-class compiled functions, the generic passes'
        arguments (:func:`loss_cfuncs`)."""
        return loss_cfuncs(self)

    def pass_params(self) -> dict:
        """The loss's parameters as the closed-form passes read them (the hinge's margin)."""
        return {}

    def value(self, z: float) -> float:
        """l(z), evaluated in Python (for tests and reports)."""
        return float(self.functions()[0](float(z)))

    def derivative(self, z: float) -> float:
        """l'(z) (a subgradient at a kink), evaluated in Python."""
        return float(self.functions()[1](float(z)))


# ---------------------------------------------------------------- compiled scalar functions
@njit
def _hinge(z, gamma):
    return gamma - z if z < gamma else 0.0


@njit
def _hinge_d(z, gamma):
    return -1.0 if z < gamma else 0.0


@njit
def _sqhinge(z, gamma):
    return (gamma - z) * (gamma - z) if z < gamma else 0.0


@njit
def _sqhinge_d(z, gamma):
    return -2.0 * (gamma - z) if z < gamma else 0.0


@njit
def _logistic(z):
    # log(1 + exp(-z)) without overflow
    if z > 0.0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))


@njit
def _logistic_d(z):
    # -1 / (1 + exp(z)), stable for both signs
    if z > 0.0:
        e = math.exp(-z)
        return -e / (1.0 + e)
    return -1.0 / (1.0 + math.exp(z))


@njit
def _squared(r):
    return 0.5 * r * r


@njit
def _squared_d(r):
    return r


@njit
def _eps_ins(r, eps):
    a = abs(r) - eps
    return a if a > 0.0 else 0.0


@njit
def _eps_ins_d(r, eps):
    if r > eps:
        return 1.0
    if r < -eps:
        return -1.0
    return 0.0


def _bind(fn, *params):
    """A one-argument compiled function z -> fn(z, *params) (the parameters as constants)."""
    if not params:
        return fn
    if len(params) == 1:
        (a,) = params

        @njit(cache=False)
        def bound(z):
            return fn(z, a)

        return bound
    raise TypeError("at most one loss parameter")


# ---------------------------------------------------------------- the loss objects
@dataclass(frozen=True, eq=True)
class Hinge(Loss):
    """l(z) = [gamma - z]_+, gamma = ``margin`` (the loss of the Perceptron and PA)."""

    margin: float = 1.0
    closed_form_step: ClassVar[str | None] = "hinge"

    def functions(self):
        return _compiled("hinge", float(self.margin))

    def pass_params(self):
        return {"gamma": float(self.margin)}


@dataclass(frozen=True, eq=True)
class SquaredHinge(Loss):
    """l(z) = [gamma - z]_+^2.  Its aggressive step with cap C solves PA-II's problem with the
    same C (Crammer et al. 2006, eq. 7): min 1/2 ||w - w_t||^2 + C xi^2, xi >= [gamma - z]_+."""

    margin: float = 1.0

    def functions(self):
        return _compiled("sqhinge", float(self.margin))


@dataclass(frozen=True, eq=True)
class Logistic(Loss):
    """l(z) = log(1 + exp(-z)) (natural log)."""

    def functions(self):
        return _compiled("logistic")


@dataclass(frozen=True, eq=True)
class Squared(Loss):
    """l(r) = r^2 / 2 of the residual r = <w, x> - y (thesis Sec. 5.3.1)."""

    kind: ClassVar[str] = RESIDUAL
    closed_form_step: ClassVar[str | None] = "regression"

    def functions(self):
        return _compiled("squared")


@dataclass(frozen=True, eq=True)
class EpsInsensitive(Loss):
    """l(r) = [|r| - eps]_+ of the residual r = <w, x> - y (Crammer et al. 2006, Sec. 5)."""

    eps: float = 0.1
    kind: ClassVar[str] = RESIDUAL
    closed_form_step: ClassVar[str | None] = "regression"

    def functions(self):
        return _compiled("eps", float(self.eps))


@dataclass(frozen=True, eq=True)
class Confusion(Loss):
    """COPA's loss (Ralaivola 2012, eq. 11): the squared hinge of each rival class, weighted
    by the cost of the example's class (``class_weight='confusion'``: 1 / T_y^2), whose
    passive-aggressive step has the closed form of Thm. 3 and moves every column at once.
    Only with the Euclidean link and the aggressive step."""

    closed_form_step: ClassVar[str | None] = "copa"

    def functions(self):
        raise TypeError("Confusion() has no scalar margin form: its step is COPA's closed form")


@dataclass(frozen=True, eq=True)
class RankingHinge(Loss):
    """Label ranking's loss (thesis eq. 8.1): the hinge of the worst pair of a relevant label r
    and an irrelevant one s, max_{r in Y, s not in Y} [gamma - (<w_r, x> - <w_s, x>)]_+,
    gamma = ``margin``.  Its steps are :class:`onlinelearn.LabelRanker`'s (updates I, II, III:
    ``Conservative``, ``Aggressive``, ``RoundOptimal``)."""

    margin: float = 1.0
    kind: ClassVar[str] = RANKING
    closed_form_step: ClassVar[str | None] = "ranking"

    def functions(self):
        raise TypeError("RankingHinge() has no scalar margin form: its steps are label ranking's")

    def pass_params(self):
        return {"gamma": float(self.margin)}


_TABLE = {
    "hinge": (_hinge, _hinge_d),
    "sqhinge": (_sqhinge, _sqhinge_d),
    "logistic": (_logistic, _logistic_d),
    "squared": (_squared, _squared_d),
    "eps": (_eps_ins, _eps_ins_d),
}


@functools.cache
def _compiled(name, *params):
    f, d = _TABLE[name]
    return _bind(f, *params), _bind(d, *params)


class CustomLoss(Loss):
    """A user's convex loss, given by two numba-compiled scalar functions.

    Parameters
    ----------
    value : numba.njit function z -> l(z)
        The loss at the margin z = y <w, x> (``kind='margin'``) or at the residual
        r = <w, x> - y (``kind='residual'``).  Must be convex.
    derivative : numba.njit function z -> l'(z)
        Its derivative; at a kink, any subgradient (e.g. -1 below 1 and 0 from 1 on for the
        hinge).  Must be nondecreasing (l convex).
    kind : {'margin', 'residual'}, default='margin'

    The learner needs nothing else, on any link (Euclidean, entropy, p-norm): the aggressive
    step is the root of the optimality condition of its 1-D dual, tau + C l'(z(tau)) = 0 with
    z(tau) the margin after the step, found by a safeguarded bracketing solve to machine
    precision (:func:`onlinelearn._core.steps.root_tau`); the conservative step follows the
    subgradient on mistakes.  Regression (``kind='residual'``) runs on the Euclidean link.
    Plain Python functions are compiled with ``numba.njit``.

    Examples
    --------
    >>> import math, numba
    >>> from onlinelearn.framework import CustomLoss
    >>> @numba.njit
    ... def value(z):
    ...     return math.log1p(math.exp(-z)) if z > 0 else -z + math.log1p(math.exp(z))
    >>> @numba.njit
    ... def derivative(z):
    ...     return -1.0 / (1.0 + math.exp(z))
    >>> loss = CustomLoss(value, derivative)
    >>> round(loss.value(0.0), 6), round(loss.derivative(0.0), 6)
    (0.693147, -0.5)
    """

    def __init__(self, value, derivative, kind=MARGIN):
        if kind not in (MARGIN, RESIDUAL):
            raise ValueError(f"kind must be 'margin' or 'residual', got {kind!r}")
        if not (callable(value) and callable(derivative)):
            raise TypeError("CustomLoss(value, derivative): both must be functions of one float")
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_derivative", derivative)
        object.__setattr__(self, "_kind", kind)

    @property
    def kind(self):  # type: ignore[override]
        return self._kind

    def functions(self):
        return _as_njit(self._value), _as_njit(self._derivative)

    def __setattr__(self, name, value):
        raise AttributeError("CustomLoss is immutable")

    def __eq__(self, other):
        return (
            isinstance(other, CustomLoss)
            and other._value is self._value
            and other._derivative is self._derivative
            and other._kind == self._kind
        )

    def __hash__(self):
        return hash((id(self._value), id(self._derivative), self._kind))

    def __repr__(self):
        name = getattr(self._value, "__name__", "value")
        dname = getattr(self._derivative, "__name__", "derivative")
        extra = "" if self._kind == MARGIN else f", kind={self._kind!r}"
        return f"CustomLoss({name}, {dname}{extra})"


@functools.cache
def _first_class(fn):
    """The compiled scalar function ``fn`` as a first-class function of signature
    float64(float64) (a ``numba.cfunc``): the generic passes are compiled once for every loss
    and cached on disk; only this small wrapper compiles per loss and process."""
    import numba
    from numba import types

    sig = types.float64(types.float64)
    try:
        return numba.cfunc(sig, cache=True)(fn.py_func)
    except (RuntimeError, TypeError, OSError):  # no source file (a notebook), no cache dir
        return numba.cfunc(sig)(fn.py_func)


def loss_cfuncs(loss: Loss):
    """(value, derivative) of ``loss`` as first-class compiled functions (the generic passes'
    arguments)."""
    value, deriv = loss.functions()
    return _first_class(value), _first_class(deriv)


def _as_njit(fn):
    """A numba dispatcher for ``fn`` (itself when it is one)."""
    import numba
    from numba.core.registry import CPUDispatcher

    if isinstance(fn, CPUDispatcher):
        return fn
    return numba.njit(fn)


_NAMES = {
    "hinge": Hinge,
    "squared_hinge": SquaredHinge,
    "logistic": Logistic,
    "squared": Squared,
    "epsilon_insensitive": EpsInsensitive,
    "confusion": Confusion,
    "ranking_hinge": RankingHinge,
}


def as_loss(loss) -> Loss:
    """A :class:`Loss` from an object or a name (see ``_NAMES``)."""
    return from_name(
        loss, Loss, _NAMES, "loss", "Hinge(), Logistic(), CustomLoss(value, derivative), ..."
    )
