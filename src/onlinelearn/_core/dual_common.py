"""Codes, state slots and the store layout shared by the two dual-ascent kernels
(:mod:`.dual_window` and :mod:`.dual_tuned`; the math is in :mod:`.dual_ascent`).

Store of past examples (both kernels): ``Sd``/``Sx`` (values, feature indices) and ``Sp``
(row pointers) hold the rows; ``Sf[n, (SGN, TAU, Q, CAP, DELTA)]`` and ``Si[n, (Y, R, ID)]`` the
per-example numbers (R = -1 for one weight vector; ID the round, index into ``tau_all``).
"""

from __future__ import annotations

from .config import njit
from .margins import argmax_rival

# ---- step codes
LASTK = 0
ROWACTION = 1
FTRL = 2
SELFTUNED = 3
STRONGLY = 4
FIXEDC = 5  # tuned kernel at a fixed c = 1/C: row action on the entropy and p-norm links
LIPSCHITZ = 6  # tuned kernel: c_t = sqrt(t L_t / U) (thesis Corollaries 2 and 3)
LOSSTUNED = 7  # tuned kernel: c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)) (Theorem 2, Cor. 4)

# ---- variants (window kernel)
PA = 0
PA1 = 1
PA2 = 2

# ---- alpha rule (tuned kernel)
OPTIMAL = 0
SUBGRADIENT = 1

# ---- st slots
T = 0  # rounds seen
N_UPDATES = 1
N_MISTAKES = 2
DUAL = 3  # the dual objective D of the run so far
N_STORED = 4  # window kernel: examples in the store
STORE_NNZ = 5
N_UNCONVERGED = 6  # rounds whose inner solver stopped at max_sweeps
C_T = 7  # tuned kernel: c of the last round
X_T = 8  # tuned kernel: largest dual norm of a row so far
SUM_ALPHA = 9  # tuned kernel: sum_i alpha_i
VSQ = 10  # tuned kernel, Euclidean link: ||v||^2
CUM_LOSS = 11  # tuned kernel, squared hinge: sum_i s_i [gamma - z_i(w_i)]_+^2, the online losses
QUAD = 12  # tuned kernel, squared hinge: sum_i alpha_i^2 / (4 s_i), the conjugates' quadratic part
N_ST = 13

# ---- store columns
SGN = 0
TAU = 1
Q = 2
CAP = 3
DELTA = 4
N_SF = 5
YC = 0
RC = 1
ID = 2
N_SI = 3


@njit
def scores_and_rival(scores, yi, binary, gamma):
    """(prediction, rival, sign, margin, loss) from the scores of one row."""
    if binary:
        sgn = 1.0 if yi == 1 else -1.0
        pred = 1 if scores[0] > 0.0 else 0
        mg = sgn * scores[0]
        return pred, -1, sgn, mg, max(gamma - mg, 0.0)
    pred, r = argmax_rival(scores, scores.shape[0], yi)
    mg = scores[yi] - scores[r]
    return pred, r, 1.0, mg, max(gamma - mg, 0.0)
