"""Status codes returned by the compiled passes (one table; a module with more outcomes numbers
them after these, e.g. the kernel pass's FULL = 2)."""

from __future__ import annotations

#: the pass ran to its end
OK = 0
#: a weight, score or kernel value became NaN or infinite (the caller restores its snapshot)
NONFINITE = 1
