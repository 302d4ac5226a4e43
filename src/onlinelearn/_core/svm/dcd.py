"""Dual coordinate ascent for linear SVMs, one compiled call per fit: the names the estimator
and the tests use, from the modules that implement them.

* :mod:`.dcd_binary` -- binary and one-vs-rest, hinge (L1) and squared hinge (L2) loss
  (Hsieh et al. 2008), with the screened exact evaluation of the duality gap;
* :mod:`.dcd_cs`     -- Crammer-Singer multiclass by the sequential dual method
  (Keerthi et al. 2008; LIBLINEAR ``-s 4``);
* :mod:`.dcd_common` -- the clock, the random generator, packed rows, history columns.

``hist`` receives one row per evaluation of the objectives (row 0: the starting point):
epoch, primal, dual, gap, elapsed seconds, number of active variables.
"""

from __future__ import annotations

from .dcd_binary import AVG_SPAN, binary_cd_step, ovr_dcd
from .dcd_common import (
    H_ACTIVE,
    H_DUAL,
    H_EPOCH,
    H_GAP,
    H_PRIMAL,
    H_TIME,
    N_HIST,
    STATS_FIELDS,
    pack_rows,
)
from .dcd_cs import cs_dcd, cs_objectives, cs_objectives_screened, cs_subproblem
from .dcd_objectives import binary_objectives, binary_objectives_screened

__all__ = [
    "AVG_SPAN",
    "H_ACTIVE",
    "H_DUAL",
    "H_EPOCH",
    "H_GAP",
    "H_PRIMAL",
    "H_TIME",
    "N_HIST",
    "STATS_FIELDS",
    "binary_cd_step",
    "binary_objectives",
    "binary_objectives_screened",
    "cs_dcd",
    "cs_objectives",
    "cs_objectives_screened",
    "cs_subproblem",
    "ovr_dcd",
    "pack_rows",
]
