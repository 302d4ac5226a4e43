"""Codes and state slots of the label-ranking kernels (one table, read by every module)."""

from __future__ import annotations

from .status import NONFINITE, OK  # noqa: F401 (the status codes of a pass, read from here)

EUCLID = 0
ENTROPY = 1

UPD_I = 0
UPD_II = 1
UPD_III = 2

#: slots of the statistics vector ``st``
T_SEEN = 0
N_UPDATES = 1
N_MISTAKES = 2
GAIN = 3  # gamma * sum of tau over the relevant labels, all rounds: D = GAIN - sum_r f*(theta_r)
# the step's solver (the interior point method of update III, the max-hinge dual's): the most
# iterations of one call, their sum over the calls, the calls
SOLVER_ITER_MAX = 4
SOLVER_ITER_SUM = 5
SOLVER_CALLS = 6
N_INEXACT = 7  # rounds of update III (entropy) whose step misses its certified tolerance
N_EXACT = 8  # rounds of update III (entropy) whose interior point step was not certified
N_ST = 9

#: constraints on every weight vector, applied after each update (a projected update)
NO_CONSTRAINT = 0
L1_BALL = 1  # Euclidean: w_r <- the Euclidean projection onto {||w||_1 <= z}   (Fig. 7.2)
FLOOR = 2  # entropy: w_r <- the entropic projection onto {w in simplex, w >= eps} (Fig. 7.3)
