"""The right-hand sides of the mistake bounds along the stream, and the search over the
comparator's scale (module docstring of :mod:`onlinelearn.bounds`)."""

from __future__ import annotations

import numpy as np

_SCALES = np.geomspace(1e-3, 1e3, 121)


def _perceptron_curve(mis, hinge, xn, unorm):
    L = np.cumsum(hinge)
    X = np.maximum.accumulate(xn)
    return L + X * unorm * np.sqrt(L) + X * X * unorm * unorm


def _pa1_curve(hinge, rn, unorm, Ceff):
    R2 = np.maximum.accumulate(rn * rn)
    return np.maximum(R2, 1.0 / Ceff) * (unorm * unorm + 2.0 * Ceff * np.cumsum(hinge))


def _pnorm_curve(hinge, xp, unorm_q, p):
    """Cor. 7: L + X ||u||_q sqrt((p-1) L) + (p-1) X^2 ||u||_q^2 along the stream."""
    L = np.cumsum(hinge)
    X = np.maximum.accumulate(xp)
    return L + X * unorm_q * np.sqrt((p - 1.0) * L) + (p - 1.0) * X * X * unorm_q * unorm_q


def _pa2_curve(hinge, rn, unorm, C):
    """Crammer et al. 2006 Thm. 5: (R^2 + 1/(2C)) (||u||^2 + 2 C sum [1 - margin(u)]_+^2)."""
    R2 = np.maximum.accumulate(rn * rn)
    return (R2 + 0.5 / C) * (unorm * unorm + 2.0 * C * np.cumsum(hinge * hinge))


def _winnow_curve(hinge, xinf, eta, gamma, log_n):
    X = np.maximum.accumulate(xinf)
    den = gamma - eta * X * X / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (log_n / eta + np.cumsum(hinge)) / den
    return np.where(den > 0, out, np.inf)


def _best_scale(curve_of):
    """(s, curve) for the scale s of the comparator in ``_SCALES`` whose bound ends lowest: the
    bounds hold for every u, so their minimum over scales is a bound."""
    best = None
    for s in _SCALES:
        curve = curve_of(s)
        if best is None or curve[-1] < best[1][-1]:
            best = (s, curve)
    return best
