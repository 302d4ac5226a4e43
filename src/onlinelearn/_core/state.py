"""Names of the slots of the learner's parameter and scalar arrays (one table, read everywhere).

A compiled pass receives three small arrays besides the weights; their slots are named here so
that a kernel reads ``st[N_MISTAKES]``, not ``st[3]``.  The parameter arrays ``ip`` and ``fp``
are filled and read only here: :func:`pass_codes` builds them, :func:`set_call_flags` sets the
per-call flags, :func:`params_of` reads them by name in Python and :func:`pass_params` in the
compiled passes (a tuple of scalars unpacked at the top of a pass).

``st`` float64[N_ST] -- the scalars of the learner state (saved in model files):
    N_ROUNDS    rounds seen (all epochs and calls)
    S_SUM       S = sum of the scales s_r of the hypotheses (lazy averaging; T for the
                Euclidean link; sum_{t<=T} t^eta with the weighted average of the Euclidean
                passes, ``fp[FP_AVG_POWER]`` = eta > 0)
    N_UPDATES   rounds on which the weights changed
    N_MISTAKES  online mistakes (prediction before the update wrong)
    EXP_SHIFT   m, the shift of exp in the entropy link (weights are exp(theta - m) / Z')
    AGGREGATE   Z (entropy) or sum |theta|^p (p-norm): the normaliser of the link
    X_MAX       X_t, the largest |x_i| seen (self-tuned Winnow)
    M_COUNT     M_t, the number of updates of self-tuned Winnow
    THETA_MAX   max |theta_jk| seen
    DUAL        the dual objective D kept as the sum of the rounds' dual increments (see
                :func:`dual_increment`); NaN when the configuration keeps none
    DUAL_QUAD   Q = sum_t tau_t^2 / (4 C_t), the PA-II terms of D (0 for the other steps):
                when a binary model meets a third label its variables halve and D becomes
                D / 2 + Q / 4

``ip`` int64[N_IP] -- integer parameters:
    IP_LINK, IP_STEP, IP_AVERAGE (0/1), IP_BALANCED (0/1), IP_PREDICT_AVERAGE (0/1: the
    progressive predictions of the Euclidean pass use the averaged weights), IP_DUAL (0/1:
    the pass accumulates st[DUAL])

``fp`` float64[N_FP] -- float parameters:
    FP_C, FP_GAMMA (margin), FP_ETA (= 1/c, conservative steps), FP_P (p-norm), FP_B
    (intercept value, 0 = no intercept), FP_LOG_N (log n, self-tuned Winnow), FP_DUAL_GAMMA
    (the margin gamma of the hinge whose dual st[DUAL] keeps), FP_DUAL_QUAD (1/4 for PA-II,
    whose dual has the term -tau^2 / (4 C_t); 0 otherwise), FP_AVG_POWER (eta of the
    polynomially weighted average of the Euclidean passes: round t weighs t^eta; 0 = the
    uniform average; see :func:`.euclid_pass.round_weight`)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

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
DUAL = 9
DUAL_QUAD = 10
N_ST = 11

# ip
IP_LINK = 0
IP_STEP = 1
IP_AVERAGE = 2
IP_BALANCED = 3
IP_PREDICT_AVERAGE = 4
IP_DUAL = 5
N_IP = 6

# fp
FP_C = 0
FP_GAMMA = 1
FP_ETA = 2
FP_P = 3
FP_B = 4
FP_LOG_N = 5
FP_DUAL_GAMMA = 6
FP_DUAL_QUAD = 7
FP_AVG_POWER = 8
N_FP = 9


def pass_codes(link, step, average, balanced, C, gamma, eta, p, b, log_n, dual_gamma, dual_quad,
               avg_power):  # fmt: skip
    """(ip, fp): the parameter arrays the linear passes read (module docstring), from their
    values; IP_PREDICT_AVERAGE and IP_DUAL start at 0 (set per call by :func:`set_call_flags`).
    ``avg_power`` counts only with ``average``."""
    ip = np.zeros(N_IP, dtype=np.int64)
    ip[IP_LINK] = link
    ip[IP_STEP] = step
    ip[IP_AVERAGE] = int(bool(average))
    ip[IP_BALANCED] = int(bool(balanced))
    fp = np.zeros(N_FP, dtype=np.float64)
    fp[FP_C] = C
    fp[FP_GAMMA] = gamma
    fp[FP_ETA] = eta
    fp[FP_P] = p
    fp[FP_B] = b
    fp[FP_LOG_N] = log_n
    fp[FP_DUAL_GAMMA] = dual_gamma
    fp[FP_DUAL_QUAD] = dual_quad
    fp[FP_AVG_POWER] = float(avg_power) if average else 0.0
    return ip, fp


def set_call_flags(ip, predict_average=None, dual=None):
    """Set the per-call flags of ``ip`` (None: leave as is): ``predict_average``, the
    progressive predictions of the Euclidean pass use the averaged weights; ``dual``, the pass
    accumulates ``st[DUAL]``."""
    if predict_average is not None:
        ip[IP_PREDICT_AVERAGE] = int(bool(predict_average))
    if dual is not None:
        ip[IP_DUAL] = int(bool(dual))


class PassParams(NamedTuple):
    """The parameters held by ``ip`` and ``fp``, by name, as Python scalars
    (:func:`params_of`); the fields are those of the module docstring, with
    ``predict_average`` true only with ``average``."""

    link: int
    step: int
    average: bool
    balanced: bool
    predict_average: bool
    dual: bool
    C: float
    gamma: float
    eta: float
    p: float
    b: float
    log_n: float
    dual_gamma: float
    dual_quad: float
    avg_power: float


def params_of(ip, fp):
    """:class:`PassParams` of the arrays ``ip``, ``fp`` (the shell's reader; the compiled
    passes read them through :func:`pass_params`)."""
    average = bool(ip[IP_AVERAGE])
    return PassParams(
        link=int(ip[IP_LINK]),
        step=int(ip[IP_STEP]),
        average=average,
        balanced=bool(ip[IP_BALANCED]),
        predict_average=average and bool(ip[IP_PREDICT_AVERAGE]),
        dual=bool(ip[IP_DUAL]),
        C=float(fp[FP_C]),
        gamma=float(fp[FP_GAMMA]),
        eta=float(fp[FP_ETA]),
        p=float(fp[FP_P]),
        b=float(fp[FP_B]),
        log_n=float(fp[FP_LOG_N]),
        dual_gamma=float(fp[FP_DUAL_GAMMA]),
        dual_quad=float(fp[FP_DUAL_QUAD]),
        avg_power=float(fp[FP_AVG_POWER]),
    )


def link_of(ip):
    """The link code held by ``ip``."""
    return int(ip[IP_LINK])


@njit(inline="always")
def pass_params(ip, fp):
    """(link, step, average, balanced, predict_average, dual, C, gamma, eta, p, b, log_n,
    dual_gamma, dual_quad, avg_power): every parameter of a pass read from ``ip`` and ``fp``
    (module docstring; averaged predictions only with averaging), unpacked by each compiled
    pass at its top into local variables (inlined: the slots a pass does not use are never
    read)."""
    average = ip[IP_AVERAGE] != 0
    return (
        ip[IP_LINK],
        ip[IP_STEP],
        average,
        ip[IP_BALANCED] != 0,
        average and ip[IP_PREDICT_AVERAGE] != 0,
        ip[IP_DUAL] != 0,
        fp[FP_C],
        fp[FP_GAMMA],
        fp[FP_ETA],
        fp[FP_P],
        fp[FP_B],
        fp[FP_LOG_N],
        fp[FP_DUAL_GAMMA],
        fp[FP_DUAL_QUAD],
        fp[FP_AVG_POWER],
    )


@njit(inline="always")
def dual_increment(tau, gamma, margin, ksq, quad, cw):
    """The rise of the dual objective kept in ``st[DUAL]`` when a round adds tau u to theta on
    the Euclidean link (thesis eq. 5.12 in the units of tau = alpha / c)::

        D(tau) = sum_t (gamma tau_t - [PA-II] tau_t^2 / (4 C_t)) - f*(sum_t tau_t u_t),
        f*(theta) = 1/2 ||theta||^2,
        D(.., tau_t) - D(.., 0) = tau (gamma - <theta, u>) - 1/2 tau^2 ||u||^2 [- tau^2/(4 C_t)]

    with <theta, u> = ``margin`` (y <w, x>, or s_y - s_r) and ||u||^2 = ``ksq`` (kappa ||x||^2,
    the intercept feature included); ``quad`` = ``fp[FP_DUAL_QUAD]`` (1/4 for PA-II, else 0)
    and ``cw`` = C_t = C times the example's weight.  The other links pass margin = ksq = 0
    and subtract the change of f* themselves."""
    inc = tau * (gamma - margin) - 0.5 * tau * tau * ksq
    if quad != 0.0:
        inc -= quad * tau * tau / cw
    return inc
