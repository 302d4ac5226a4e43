"""Dual ascent steps for the hinge loss g_t(w) = [gamma - margin_t(w)]_+ (thesis Sec. 5.2, 7.2).

With the Euclidean complexity f = 1/2||w||^2 the aggressive step, eq. (3.12) / (5.14), has the
closed form of eq. (7.11)::

    alpha_t = min{ 1, c [gamma - margin_t(w_t)]_+ / ||x_t||^2 },
    w_{t+1} = w_t + (alpha_t / c) y_t x_t

i.e. with C = 1/c the step size tau = alpha_t / c = min{C, loss / ||x||^2}: PA-I of
Crammer et al. (2006).  PA is C = inf, PA-II adds 1/(2C) to the denominator (Crammer et al.
2006, eq. 7-8 -- the squared-slack problem).  For K classes with the max-loss rival r the example
enters the two columns y (+x) and r (-x), so ||x||^2 is counted twice: kappa = 2 (kappa = 1 for the
binary learner with one weight vector).

The conservative step (eq. 5.13, the Perceptron) sets alpha_t = 1 on a mistake only.
``weight`` (sample weight x class weight) multiplies the step of the Perceptron and PA, and the
cap C of PA-I and PA-II (the cost of that example in the problem the step solves).
"""

from __future__ import annotations

from .._config import njit

CONSERVATIVE = 0
PA = 1
PA1 = 2
PA2 = 3
COPA = 4


@njit
def hinge_step(step, loss, margin, kappa_sqnorm, C, weight):
    """Step size tau >= 0 for one round (0 means no update).

    Parameters: ``step`` code; ``loss`` = [gamma - margin]_+; ``margin`` = y <w, x> (binary)
    or s_y - s_r (multiclass); ``kappa_sqnorm`` = kappa ||x||^2; ``C`` cap; ``weight`` >= 0.
    """
    if weight <= 0.0:
        return 0.0
    if step == CONSERVATIVE:
        return weight if margin <= 0.0 else 0.0
    if loss <= 0.0 or kappa_sqnorm <= 0.0:
        return 0.0
    if step == PA:
        return weight * loss / kappa_sqnorm
    if step == PA1:
        t = loss / kappa_sqnorm
        cw = C * weight
        return t if t < cw else cw
    # PA2
    return loss / (kappa_sqnorm + 0.5 / (C * weight))
