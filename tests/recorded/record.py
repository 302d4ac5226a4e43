"""Record the outputs of today's online learners: ``tests/recorded/outputs.npz``.

Run from the repository root, on the code to record::

    PYTHONPATH=src python tests/recorded/record.py

Why: the learners are about to become presets of one engine, and every preset must reproduce
the outputs recorded here bit for bit (``tests/test_recorded_outputs.py`` compares them).  The
configurations, the data and the runs are defined once, in ``_configs.py``.  Every run is made
twice in this process and the file is not written if the two disagree (an estimator whose
outputs change from run to run cannot be recorded).
"""

from __future__ import annotations

import sys
import time

import numpy as np
from _configs import CONFIGS, OUTPUTS, data_digest, host, run_all, save


def main():
    t0 = time.perf_counter()
    outputs = run_all()
    again = run_all()
    unstable = sorted(
        k for k, a in outputs.items()
        if a.dtype != again[k].dtype or not np.array_equal(a, again[k], equal_nan=True)
    )  # fmt: skip
    if unstable:
        print("outputs differ between two runs; nothing written:", *unstable, sep="\n  ")
        return 1
    meta = {**host(), "data_sha256": data_digest()}
    save(OUTPUTS, outputs, meta)
    runs = sum(len(cfg.variants()) for cfg in CONFIGS)
    print(
        f"{len(CONFIGS)} configurations, {runs} runs, {len(outputs)} arrays -> {OUTPUTS.name} "
        f"({OUTPUTS.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - t0:.0f} s; "
        f"CPU {meta['cpu_name']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
