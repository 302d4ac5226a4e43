"""Status codes of the one-row transactions (:mod:`.one_row`, :mod:`.second_order_row`,
:mod:`.kernel.one_row`): one table for the three event roads.  Every code but :data:`OK` and
:data:`DUE` means that the state is bit for bit what it was before the call."""

from __future__ import annotations

from .euclid_pass import NONFINITE_X, OK

__all__ = [
    "BAD_INDEX", "DUE", "DUPLICATE", "GENERAL", "NEED_ROOM", "NONFINITE_SCORE", "NONFINITE_X",
    "OK", "REFUSED", "UNSORTED",
]  # fmt: skip

# OK (0): learned.  NONFINITE_X (2, the Euclidean pass's code): a value of the row is NaN or
# infinite, nothing was changed.
#: a feature index outside [0, n_features): nothing was changed
BAD_INDEX = 3
#: the update was refused by a check after the pass (an overflow): the state was put back
REFUSED = 4
#: the step needs more room (a buffer or the state's arrays enlarged first): nothing was changed
NEED_ROOM = 5
#: the row's columns are not in increasing order, or one is repeated: nothing was changed
#: (``partial_fit`` learns a CSR row in its canonical form: the caller sorts and adds up)
UNSORTED = 6
#: a case the general path decides (the min-max bound ||x||^2 < b within rounding, or
#: crossed): nothing was changed
GENERAL = 7
#: a sparse row repeats an index (the general path sums the entries): nothing was changed
DUPLICATE = 8
#: (the scores of a row for prediction) a score is not finite
NONFINITE_SCORE = 9
#: learned, and the probability calibration's next fit is due
DUE = 10
