"""Names of the slots of the learner's parameter and scalar arrays (one table, read everywhere).

A compiled pass receives three small arrays besides the weights; their slots are named here so
that a kernel reads ``st[N_MISTAKES]``, not ``st[3]``.

``st`` float64[N_ST] -- the scalars of the learner state (saved in model files):
    N_ROUNDS    rounds seen (all epochs and calls)
    S_SUM       S = sum of the scales s_r of the hypotheses (lazy averaging; T for the
                Euclidean link)
    N_UPDATES   rounds on which the weights changed
    N_MISTAKES  online mistakes (prediction before the update wrong)
    EXP_SHIFT   m, the shift of exp in the entropy link (weights are exp(theta - m) / Z')
    AGGREGATE   Z (entropy) or sum |theta|^p (p-norm): the normaliser of the link
    X_MAX       X_t, the largest |x_i| seen (self-tuned Winnow)
    M_COUNT     M_t, the number of updates of self-tuned Winnow
    THETA_MAX   max |theta_jk| seen

``ip`` int64[N_IP] -- integer parameters:
    IP_LINK, IP_STEP, IP_AVERAGE (0/1), IP_BALANCED (0/1), IP_PREDICT_AVERAGE (0/1: the
    progressive predictions of the Euclidean pass use the averaged weights)

``fp`` float64[N_FP] -- float parameters:
    FP_C, FP_GAMMA (margin), FP_ETA (= 1/c, conservative steps), FP_P (p-norm), FP_B
    (intercept value, 0 = no intercept), FP_LOG_N (log n, self-tuned Winnow)
"""

from __future__ import annotations

from .config import njit

# st
N_ROUNDS = 0
S_SUM = 1
N_UPDATES = 2
N_MISTAKES = 3
EXP_SHIFT = 4
AGGREGATE = 5
X_MAX = 6
M_COUNT = 7
THETA_MAX = 8
N_ST = 9

# ip
IP_LINK = 0
IP_STEP = 1
IP_AVERAGE = 2
IP_BALANCED = 3
IP_PREDICT_AVERAGE = 4
N_IP = 5

# fp
FP_C = 0
FP_GAMMA = 1
FP_ETA = 2
FP_P = 3
FP_B = 4
FP_LOG_N = 5
N_FP = 6


@njit(inline="always")
def euclid_params(ip, fp):
    """(step, average, predict_average, C, gamma, eta, b): the parameters of a Euclidean pass
    as read from ``ip`` and ``fp`` (averaged predictions only with averaging).  Used by
    :func:`.projected_pass.projected_pass`; :func:`.euclid_pass.euclid_pass` reads the same
    slots inline, so that its tuned machine code stays as it is (through this function the
    compiled pass came out with other stack slots and calls, at the same speed)."""
    average = ip[IP_AVERAGE] != 0
    predict_average = average and ip[IP_PREDICT_AVERAGE] != 0
    return ip[IP_STEP], average, predict_average, fp[FP_C], fp[FP_GAMMA], fp[FP_ETA], fp[FP_B]
