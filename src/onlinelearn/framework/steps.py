"""The dual ascent steps of the framework: the third of a learner's three choices.

At round t the learner adds one dual variable for the new example (thesis Sec. 5.2).  A step
says how far it moves:

=======================  ======================================================================
object                   the step
=======================  ======================================================================
Conservative(eta=1)      on a mistake only, the subgradient of the loss (thesis eq. 5.13: the
                         Perceptron, Winnow); ``eta`` is 1/c.  Any margin loss, any link.
Aggressive(C, variant)   the new dual variable set to the maximiser of the dual (eq. 5.14), i.e.
                         w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C l(z_t(w))  ('PA-I'),
                         + C l(z_t(w))^2  ('PA-II'), or  s.t. l(z_t(w)) = 0  ('PA', hinge only);
                         on the entropy and p-norm links, the same 1-D maximisation with the
                         Bregman divergence of f in place of the squared norm (eq. 7.9), for
                         every margin loss (the root of tau + C l'(z(tau)), z(tau) the margin
                         after the step); not on Entropy(self_tuned=True).
LastK(k, C, variant)     the last k dual variables jointly, exactly (eq. 5.18; k = 1 is PA)
RowAction(k, C)          k single-variable steps, on t first, then t-1, ..., t-k+1 (Sec. 5.2.2)
FTRL(C)                  every dual variable so far (regularised follow-the-leader, Sec. 5.2.2)
SelfTuned(U, update)     a growing c_t = X_t sqrt((|M| + 1) / U) (Fig. 3.2, eq. 5.15-5.17)
LipschitzTuned(U, L)     c_t = sqrt(t L_t / U): Cor. 2 (L given) or Cor. 3 (L=None: L_t =
                         max_{i<=t} ||u_i||_*^2 / 2 from the rows seen; eq. 5.16), no horizon T
LossTuned(beta1, beta2)  c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)) from the observed losses
                         (Theorem 2; ``LossTuned.corollary_4(L, U, beta1)``: Cor. 4's beta2),
                         with the self-bounded ``SquaredHinge`` loss
StronglyConvex(sigma)    c_t = sigma t (Fig. 4.1: logarithmic regret)
RoundOptimal(C)          every dual variable of the round's pairs at once (label ranking,
                         update III, Sec. 7.3: the exact maximiser of the round's dual)
=======================  ======================================================================

``sample_weight`` x class weight multiplies the step of the conservative step and PA, and the
cap C of PA-I and PA-II (the cost of that example in the problem the step solves).

The multi-variable and growing-c steps (``multi_variable = True``) keep the dual variables of
past rounds: :class:`onlinelearn.OnlineLearner` runs them on the dual ascent family's pass
(:class:`onlinelearn.DualAscentClassifier` is their preset), with the hinge loss
(``LossTuned``: the squared hinge).
``RoundOptimal`` is the label-ranking loss's (:class:`onlinelearn.LabelRanker`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields
from typing import ClassVar

from .._core import steps as S
from ._axis import AxisObject, from_name

__all__ = [
    "FTRL",
    "Aggressive",
    "Conservative",
    "LastK",
    "LipschitzTuned",
    "LossTuned",
    "RoundOptimal",
    "RowAction",
    "SelfTuned",
    "Step",
    "StronglyConvex",
    "as_step",
]

_VARIANTS = {"PA": S.PA, "PA-I": S.PA1, "PA-II": S.PA2}


class Step(AxisObject):
    """Base of the step objects (immutable)."""

    code: ClassVar[int] = S.CONSERVATIVE
    #: True for the steps that keep past rounds' dual variables (the dual ascent family)
    multi_variable: ClassVar[bool] = False

    def params(self) -> dict:
        return {}


def _positive(owner, name, value, *, finite=False, integer=False):
    ok = isinstance(value, numbers.Integral if integer else numbers.Real) and not isinstance(
        value, bool
    )
    ok = ok and value > 0 and not math.isnan(value) and (not finite or math.isfinite(value))
    if not ok:
        kind = "a finite number > 0" if finite else "a number > 0"
        kind = "an integer >= 1" if integer else kind
        raise ValueError(f"{owner}({name}): {name} must be {kind}, got {value!r}")


def _at_least_one(owner, name, value):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (ok and math.isfinite(value) and value >= 1):
        raise ValueError(f"{owner}({name}): {name} must be a finite number >= 1, got {value!r}")


def _variant(owner, variant):
    if variant not in _VARIANTS:
        raise ValueError(
            f"{owner}(variant=...) must be one of {sorted(_VARIANTS)}, got {variant!r}"
        )


def _update(owner, update):
    if update not in ("optimal", "subgradient"):
        raise ValueError(f"{owner}(update=...) must be 'optimal' or 'subgradient', got {update!r}")


#: how a field of a step is checked, by its name
_FIELD_CHECKS = {
    "k": lambda o, v: _positive(o, "k", v, integer=True),
    "max_sweeps": lambda o, v: _positive(o, "max_sweeps", v, integer=True),
    "C": lambda o, v: _positive(o, "C", v),
    "U": lambda o, v: _positive(o, "U", v),
    "L": lambda o, v: None if v is None else _positive(o, "L", v, finite=True),
    "sigma": lambda o, v: _positive(o, "sigma", v),
    "beta1": lambda o, v: _at_least_one(o, "beta1", v),
    "beta2": lambda o, v: _positive(o, "beta2", v, finite=True),
    "tol": lambda o, v: _positive(o, "tol", v, finite=True),
    "variant": _variant,
    "update": _update,
}


class _CheckedStep(Step):
    """A step whose fields are checked by name (:data:`_FIELD_CHECKS`) when it is made."""

    def __post_init__(self):
        for field in fields(self):
            _FIELD_CHECKS[field.name](type(self).__name__, getattr(self, field.name))


class _MultiVariable(_CheckedStep):
    """A step that keeps past rounds' dual variables (the dual ascent family)."""

    multi_variable: ClassVar[bool] = True


@dataclass(frozen=True, eq=True)
class Conservative(Step):
    """Update on mistakes only, along the loss's subgradient (thesis eq. 5.13)."""

    eta: float = 1.0

    def __post_init__(self):
        if not (isinstance(self.eta, numbers.Real) and math.isfinite(self.eta) and self.eta > 0):
            raise ValueError(f"Conservative(eta): eta must be finite and > 0, got {self.eta!r}")

    def params(self):
        return {"eta": float(self.eta)}


@dataclass(frozen=True, eq=True)
class Aggressive(Step):
    """The best single dual variable (Passive-Aggressive; thesis eq. 5.14, 7.11)."""

    C: float = 1.0
    variant: str = "PA-I"

    def __post_init__(self):
        if self.variant not in _VARIANTS:
            raise ValueError(
                f"Aggressive(variant=...) must be one of {sorted(_VARIANTS)}, got {self.variant!r}"
            )
        if not (isinstance(self.C, numbers.Real) and self.C > 0 and not math.isnan(self.C)):
            raise ValueError(f"Aggressive(C): C must be a number > 0, got {self.C!r}")

    @property
    def code(self) -> int:  # type: ignore[override]
        return _VARIANTS[self.variant]

    def params(self):
        return {"C": float(self.C)}


@dataclass(frozen=True, eq=True)
class LastK(_MultiVariable):
    """The last k dual variables, jointly and exactly (thesis eq. 5.18; k = 1: eq. 7.11, PA).

    k = 2 has the closed form of the 2-variable box QP; k > 2 runs coordinate ascent to the
    projected-gradient tolerance ``tol`` (at most ``max_sweeps`` sweeps).  Euclidean link."""

    k: int = 1
    C: float = 1.0
    variant: str = "PA-I"
    tol: float = 1e-7
    max_sweeps: int = 200


@dataclass(frozen=True, eq=True)
class RowAction(_MultiVariable):
    """k single-variable steps per round, on the new dual variable first, then on the k - 1
    before it (thesis Sec. 5.2.2, row action); on every link (the entropy and p-norm links take
    the PA-I box)."""

    k: int = 1
    C: float = 1.0
    variant: str = "PA-I"


@dataclass(frozen=True, eq=True)
class FTRL(_MultiVariable):
    """Every dual variable so far (regularised follow-the-leader, Sec. 5.2.2), by coordinate
    ascent warm-started from the previous round; stores every example (O(t nnz) a sweep)."""

    C: float = 1.0
    variant: str = "PA-I"
    tol: float = 1e-7
    max_sweeps: int = 200


@dataclass(frozen=True, eq=True)
class SelfTuned(_MultiVariable):
    """A growing c_t = X_t sqrt((|M_{t-1}| + 1) / U) (Fig. 3.2 with eq. 5.15-5.17: no horizon
    T, no prior bound on the loss): ``U`` bounds f(u) of the comparator; X_t = max_{i<=t}
    ||x_i||_*, |M_{t-1}| the prediction mistakes before round t.  This is the rule of Fig. 5.3
    and Theorem 6 (mistake bound |M| <= G/gamma + 2 X sqrt(U) sqrt(G) / gamma^(3/2)
    + 4 X^2 U / gamma^2, G = sum_t g_t(u), any u with f(u) <= U), not those of Corollaries 2-3
    (:class:`LipschitzTuned`) or Theorem 2 (c_t from the observed losses: :class:`LossTuned`);
    ``update='optimal'`` takes the maximising alpha_t, ``'subgradient'`` alpha_t = 1 when the
    loss is positive; k > 1 adds k - 1 row-action steps on the previous rounds at the same
    c_t.  Any link."""

    U: float = 1.0
    update: str = "optimal"
    k: int = 1


@dataclass(frozen=True, eq=True)
class LipschitzTuned(_MultiVariable):
    """c_t = sqrt(t L_t / U) (thesis Fig. 3.2 with Corollaries 2 and 3; eq. 5.16): no horizon T.

    ``L`` given: Corollary 2, L_t = L for a loss known to be sqrt(2 L)-Lipschitz.  ``L=None``:
    Corollary 3, L_t = max_{i<=t} ||u_i||_*^2 / 2 read from the rows seen up to round t (the
    hinge loss of round i is ||u_i||_*-Lipschitz; u_i = y_i x_i, or x_i and -x_i in two
    columns for K classes: ||u||_* = ||x||_2 sqrt(2), ||x||_inf, ||x||_p 2^(1/p) on the
    Euclidean, entropy and p-norm links).  For every u with f(u) <= U the regret
    sum_t g_t(w_t) - g_t(u) <= 2 (f(u) / sqrt(U) + sqrt(U)) sqrt(L T), L = max_t L_t.
    ``update`` and ``k`` as in :class:`SelfTuned`.  Any link."""

    U: float = 1.0
    L: float | None = None
    update: str = "optimal"
    k: int = 1


@dataclass(frozen=True, eq=True)
class LossTuned(_MultiVariable):
    """c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)), from the losses the learner has suffered
    (thesis Fig. 3.2 with Theorem 2): no horizon T, no bound on the comparator's loss.

    The theorem needs an L-self-bounded loss (Definition 2: some subgradient lambda of g_t
    at every w has 1/2 ||lambda||_*^2 <= L g_t(w)), so this step runs with
    ``SquaredHinge(margin)``: g_t(w) = s_t [gamma - <w, u_t>]_+^2 (s_t the example's weight),
    L = 2 max_t s_t ||u_t||_*^2.  Round t maximises its dual over alpha_t >= 0::

        D_t = sum_{i<=t} (gamma alpha_i - alpha_i^2 / (4 s_i)) - c_t f*(v / c_t),
        v = sum_i alpha_i u_i,    w_t = grad f*(v / c_t)

    (``update='optimal'``: the root of gamma - alpha / (2 s) - <w(alpha), u_t>, closed form on
    the Euclidean link; ``'subgradient'``: alpha_t = 2 s_t [gamma - <w_t, u_t>]_+).  For every
    u, with G = 2 sqrt(1 + max_t g_t(w_t) / beta1) and B = beta2 f(u) + L G / beta2, the regret
    sum_t g_t(w_t) - g_t(u) <= B (sum_t g_t(u) + beta1)^(1/2) + B^2.  Corollary 4: when
    g_t <= beta1 and f <= U on the domain (the entropy link: f <= ln(2n), |<w, x>| <= ||x||_inf),
    beta2 = 8^(1/4) sqrt(L / U) (:meth:`corollary_4`) gives
    R(u, T) <= 3.4 sqrt(L U) (sum_t g_t(u) + beta1)^(1/2) + 11.4 L U.
    ``beta1`` >= 1, ``beta2`` > 0; ``update`` and ``k`` as in :class:`SelfTuned` (the
    row-action steps on earlier alpha_i keep alpha_i >= 0).  Any link."""

    beta1: float = 1.0
    beta2: float = 1.0
    update: str = "optimal"
    k: int = 1

    @classmethod
    def corollary_4(cls, L, U, beta1=1.0, update="optimal", k=1):
        """The step of Corollary 4: beta2 = 8^(1/4) sqrt(L / U), for losses that are
        L-self-bounded and at most ``beta1`` on the domain, and f at most ``U`` there."""
        _positive(cls.__name__, "L", L, finite=True)
        _positive(cls.__name__, "U", U, finite=True)
        return cls(beta1, 8.0**0.25 * math.sqrt(L / U), update, k)


@dataclass(frozen=True, eq=True)
class StronglyConvex(_MultiVariable):
    """c_t = sigma t (Fig. 4.1 for sigma f(w) + hinge: logarithmic regret); ``update`` and
    ``k`` as in :class:`SelfTuned`.  Any link."""

    sigma: float = 1.0
    update: str = "optimal"
    k: int = 1


@dataclass(frozen=True, eq=True)
class RoundOptimal(_CheckedStep):
    """Every dual variable of the round at once: the exact maximiser of the round's dual
    (label ranking's update III, thesis Sec. 7.3: O(K log K) on the Euclidean link, an
    interior-point method on the entropy link).  ``C`` caps the round's total step."""

    C: float = 1.0

    def params(self):
        return {"C": float(self.C)}


_NAMES = {"conservative": Conservative, "aggressive": Aggressive}


def as_step(step) -> Step:
    """A :class:`Step` from an object or a name ('conservative', 'aggressive')."""
    return from_name(step, Step, _NAMES, "step", "Conservative(), Aggressive(C, variant)")
