"""The dual ascent steps of the framework: the third of a learner's three choices.

At round t the learner adds one dual variable for the new example (thesis Sec. 5.2).  A step
says how far it moves:

=======================  ======================================================================
object                   the step
=======================  ======================================================================
Conservative(eta=1)      on a mistake only, the subgradient of the loss (thesis eq. 5.13: the
                         Perceptron, Winnow); ``eta`` is 1/c.
Aggressive(C, variant)   the new dual variable set to the maximiser of the dual (eq. 5.14), i.e.
                         w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C l(z_t(w))  ('PA-I'),
                         + C l(z_t(w))^2  ('PA-II'), or  s.t. l(z_t(w)) = 0  ('PA', hinge only);
                         on the other links, the same 1-D maximisation with f in place of the
                         squared norm (eq. 7.9).
=======================  ======================================================================

``sample_weight`` x class weight multiplies the step of the conservative step and PA, and the
cap C of PA-I and PA-II (the cost of that example in the problem the step solves).
The steps over several dual variables at once (last-k, row action, FTRL, self-tuned c_t,
strongly convex) are :class:`onlinelearn.DualAscentClassifier`'s ``step`` options.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

from .._core import steps as S
from ._axis import AxisObject, from_name

__all__ = ["Aggressive", "Conservative", "Step", "as_step"]

_VARIANTS = {"PA": S.PA, "PA-I": S.PA1, "PA-II": S.PA2}


class Step(AxisObject):
    """Base of the step objects (immutable)."""

    code: ClassVar[int] = S.CONSERVATIVE

    def params(self) -> dict:
        return {}


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


_NAMES = {"conservative": Conservative, "aggressive": Aggressive}


def as_step(step) -> Step:
    """A :class:`Step` from an object or a name ('conservative', 'aggressive')."""
    return from_name(step, Step, _NAMES, "step", "Conservative(), Aggressive(C, variant)")
