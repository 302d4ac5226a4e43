"""Prediction, margin and hinge loss of one round from its scores (shared by the passes)."""

from __future__ import annotations

from .config import njit


@njit
def predict_margin_loss(scores, yi, binary, gamma):
    """(prediction, max-loss rival, y sign, margin, hinge loss [gamma - margin]_+).

    One vector (``binary``): prediction 1 if s_0 > 0, margin y s_0 with y in {-1, +1}, rival -1.
    K columns: prediction argmax_k s_k (the first maximum), rival r = argmax_{k != y} s_k,
    margin s_y - s_r."""
    rival = -1
    if binary:
        ysign = 1.0 if yi == 1 else -1.0
        pred = 1 if scores[0] > 0.0 else 0
        margin = ysign * scores[0]
    else:
        ysign = 1.0
        # one loop, the running maxima in registers (the two conditions compile to selects)
        pred = 0
        best = scores[0]
        rbest = 0.0
        for k in range(scores.shape[0]):
            s = scores[k]
            if s > best:
                best = s
                pred = k
            if k != yi and (rival < 0 or s > rbest):
                rbest = s
                rival = k
        margin = scores[yi] - rbest
    loss = gamma - margin
    if loss < 0.0:
        loss = 0.0
    return pred, rival, ysign, margin, loss


@njit
def argmax_rival(f, K, y):
    """(first argmax of f, argmax of f over the classes other than y)."""
    pred = 0
    for k in range(1, K):
        if f[k] > f[pred]:
            pred = k
    r = -1
    for k in range(K):
        if k != y and (r < 0 or f[k] > f[r]):
            r = k
    return pred, r
