"""Cost of the reliability checks (issue 12) on the news20 benchmark epoch.

One epoch of multiclass PA-I (``n_epochs=1, shuffle=False, intercept_scaling=0.1``, the
benchmark's learner) on news20 TF-IDF, float64 and float32, timed with the checks on and with
them replaced by no-ops, interleaved, best of ``--repeat``.  The checks: the compiled CSR
structure sweep (``shell.validation.check_sparse_structure``), the degenerate-step test after each
pass, the read-out finiteness test, and the decision-value test in ``predict``.

    ONLINELEARN_DATA=../shared/data python benchmarks/bench_checks.py --repeat 15
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import time

import numpy as np

import onlinelearn as ol
from onlinelearn._core.state import N_UPDATES
from onlinelearn.datasets import shared_data_path
from onlinelearn.io import load_svmlight
from onlinelearn.shell import linear_pass
from onlinelearn.shell import validation as V

_CHECKS = ("check_sparse_structure", "check_aggressive_steps", "check_readout", "check_scores")


@contextlib.contextmanager
def checks_disabled():
    """The checks replaced by no-ops where the estimators look them up: the validation module
    (``check_X`` calls ``check_sparse_structure`` there; the estimators call ``V.check_*``)."""
    saved = {name: getattr(V, name) for name in _CHECKS}
    for name in _CHECKS:
        setattr(V, name, lambda *a: None)
    try:
        yield
    finally:
        for name, f in saved.items():
            setattr(V, name, f)


def epoch(X, y):
    est = ol.PassiveAggressiveClassifier(
        variant="PA-I", C=1.0, n_epochs=1, shuffle=False, intercept_scaling=0.1, average=False
    )
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0, est


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args()
    assert linear_pass.V is V  # (the pass looks the checks up there)
    X, y = load_svmlight(shared_data_path("news20", "train"), n_features=56438)
    print(f"news20 train: {X.shape[0]} x {X.shape[1]}, {X.nnz} nonzeros")
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        epoch(Xd, y)  # compile
        on, off = [], []
        for i in range(args.repeat):  # interleaved, alternating which goes first
            if i % 2:
                on.append(epoch(Xd, y)[0])
            with checks_disabled():
                off.append(epoch(Xd, y)[0])
            if not i % 2:
                on.append(epoch(Xd, y)[0])
        t_struct = min(
            _timed(lambda Xd=Xd: V.check_sparse_structure(Xd)) for _ in range(args.repeat)
        )
        _, est = epoch(Xd, y)
        batch = V.CSRBatch(Xd)
        n = X.shape[0]
        loss, w, order = np.ones(n), np.ones(n), np.arange(n, dtype=np.int64)
        est._st[N_UPDATES] = n  # every row with a loss updated: the usual case
        t_steps = min(
            _timed(functools.partial(V.check_aggressive_steps, est, batch, loss, w, order, 0))
            for _ in range(args.repeat)
        )
        b_on, b_off = min(on), min(off)
        m_on, m_off = np.median(on), np.median(off)
        print(
            f"{np.dtype(dtype).name}: epoch best {b_off * 1e3:.1f} ms without checks, "
            f"{b_on * 1e3:.1f} ms with ({(b_on / b_off - 1) * 100:+.1f}%); median "
            f"{m_off * 1e3:.1f} / {m_on * 1e3:.1f} ms ({(m_on / m_off - 1) * 100:+.1f}%); "
            f"structure sweep alone {t_struct * 1e3:.2f} ms, step test {t_steps * 1e3:.2f} ms "
            f"= {(t_struct + t_steps) / b_off * 100:.1f}% of the best epoch"
        )


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
