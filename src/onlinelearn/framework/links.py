"""The complexity functions f of the framework and their links w = grad f*(theta).

A link is the first of a learner's three choices (thesis Sec. 5.1, Fig. 5.1).  The compiled
maps themselves are in :mod:`onlinelearn._core.links` (one coordinate-wise function phi times one
global scale s, which keeps lazy averaging O(nnz)); the objects here name a link and its
parameters, and give the integer code the compiled passes read.

=============  =================================================  ===========================
object         f(w)                                               update
=============  =================================================  ===========================
Euclidean()    1/2 ||w||_2^2                                      additive (Perceptron, PA)
Entropy(eta)   relative entropy on the simplex (balanced: EG+-)   multiplicative (Winnow, EG)
PNorm(p)       1/(2(q-1)) ||w||_q^2, 1/p + 1/q = 1                in between (Gentile 2003)
=============  =================================================  ===========================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from .._core import links as L
from ._axis import AxisObject, from_name

__all__ = ["Euclidean", "Entropy", "Link", "PNorm", "as_link"]


class Link(AxisObject):
    """Base of the link objects (immutable; see the module table)."""

    code: ClassVar[int] = L.EUCLID
    balanced: ClassVar[bool] = False

    def params(self, n_weights: int) -> dict:
        """The float parameters of the compiled passes (``eta``, ``p``, ``log_n``)."""
        return {}


@dataclass(frozen=True, eq=True)
class Euclidean(Link):
    """f(w) = 1/2 ||w||^2: w = theta, additive updates."""

    code: ClassVar[int] = L.EUCLID


@dataclass(frozen=True, eq=True)
class Entropy(Link):
    """Relative entropy on the simplex: w = softmax(eta theta) (eq. 5.4-5.6).

    ``eta``: the learning rate of the conservative step (1/c); ``balanced``: run on [x, -x] so
    that weights of both signs exist (EG+-, balanced Winnow); ``self_tuned``: the c_t of
    Fig. 5.2 chosen from the observed data (conservative step only, no averaging)."""

    eta: float = 0.1
    balanced: bool = True
    self_tuned: bool = False

    @property
    def code(self) -> int:  # type: ignore[override]
        return L.SELFTUNED if self.self_tuned else L.ENTROPY

    def params(self, n_weights):
        eta = 1.0 if self.self_tuned else float(self.eta)
        return {"eta": eta, "log_n": math.log(max(n_weights, 2))}


@dataclass(frozen=True, eq=True)
class PNorm(Link):
    """f(w) = 1/(2(q-1)) ||w||_q^2 (eq. 5.9); ``p=None``: p = max(2, 2 ln n), n the number of
    weights (Gentile 2003).  p = 2 is the Euclidean link."""

    p: float | None = None
    code: ClassVar[int] = L.PNORM

    def effective_p(self, n_weights: int) -> float:
        if self.p is not None:
            return float(self.p)
        return max(2.0, 2.0 * math.log(max(n_weights, 1)))

    def params(self, n_weights):
        return {"p": self.effective_p(n_weights)}


_NAMES = {"euclidean": Euclidean, "entropy": Entropy, "pnorm": PNorm}


def as_link(link) -> Link:
    """A :class:`Link` from an object or a name ('euclidean', 'entropy', 'pnorm')."""
    return from_name(link, Link, _NAMES, "link", "Euclidean(), Entropy(...), PNorm(...)")
