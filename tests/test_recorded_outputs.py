"""Today's learners against the outputs recorded in ``tests/recorded/outputs.npz``.

The learners are being turned into presets of one engine; each preset must reproduce what the
named learner computed when the file was recorded.  Every configuration x data variant of
``tests/recorded/_configs.py`` is run again here with the same code and compared:

* on the CPU the file was recorded on (same llvmlite host CPU name and feature string): bit
  for bit (``np.array_equal``) with the same dtype and shape;
* on another CPU: with rtol=1e-10, atol=1e-12 (dtype and shape still equal), because the core
  is compiled with fastmath reassoc/contract for the host, so vectorised sums may round
  differently there; float32 runs and Pegasos' average, where such a difference grows, with
  the wider tolerances ``RTOL32`` and ``RTOL_PEGASOS_AVG`` of each output's scale.  A long
  online run can still take another branch on such a difference;
  the assertion message says which comparison was made.

LabelRanker's entropic update III is compared at rtol=1e-8, atol=1e-10: its step is the interior
point method's when a dual bound certifies it within 1e-9 of the round's optimum, else the exact
method's, and a last-bit difference can move a round across that line (the two steps differ by
up to about 1e-9 of the objective): measured on the floor-constrained configuration, the
outputs of a fresh compile and of the on-disk cache differ by up to 1e-10.

One exception, measured: the aggressive steps of the entropy and p-norm links (Winnow,
PNormPerceptron and DualAscentClassifier off the Euclidean link), LabelRanker's entropic
update III and the projected updates (``constraint``) are compiled with fastmath ('afn',
'contract') into functions whose last bit depends on the order in which numba compiled them in
the process (or in the process that wrote the on-disk cache): the code as recorded gives other
last bits when ``tests/test_aggressive_links.py`` runs first, or with the cache off
(``ONLINELEARN_NUMBA_CACHE=0``), with gaps of 1e-16 to 8e-16.  Those configurations are
compared at rtol=1e-10, atol=1e-12 on every CPU (:func:`_compile_order_dependent`).

Re-record (``PYTHONPATH=src python tests/recorded/record.py``) only when a change of outputs
is intended, and say so in the commit.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from recorded._configs import CONFIGS, OUTPUTS, STATS, data_digest, host, key, load, run

RTOL, ATOL = 1e-10, 1e-12
#: float32 weights on another CPU: a last-bit difference of a float32 sum (2^-24 relative)
#: is a weight's rounding, carried through every later round of the run; measured gaps on
#: another CPU (znver5 -> emeraldrapids) reach 3e-6 relative to the largest value, so
#: rtol 1e-4 with atol 1e-4 of the output's scale leaves a margin of 30x and still sees a
#: changed step (whose effect is the size of the values)
RTOL32 = 1e-4
#: Pegasos with averaging on another CPU: its early steps 1/(lam t) are huge (lam = 1e-4) and
#: the average sums iterates that cancel, so a last-bit difference of a vectorised sum grows
#: to 2e-7 of the values (measured znver5 -> emeraldrapids); rtol 1e-5 keeps a margin of 50x
RTOL_PEGASOS_AVG = 1e-5
#: LabelRanker's entropic update III (module docstring)
RTOL_CERTIFIED, ATOL_CERTIFIED = 1e-8, 1e-10

CASES = [
    pytest.param(cfg, variant, id=key(cfg, *variant)) for cfg in CONFIGS
    for variant in cfg.variants()
]  # fmt: skip


@functools.cache
def _recorded():
    """({run key: {output: array}}, meta) from the file."""
    outputs, meta = load(OUTPUTS)
    runs = {}
    for k, a in outputs.items():
        run_key, name = k.rsplit("/", 1)
        runs.setdefault(run_key, {})[name] = a
    return runs, meta


def _compile_order_dependent(cfg):
    """The configurations whose last bit depends on numba's compile order (module docstring)."""
    p = dict(cfg.params)
    if p.get("constraint") is not None:
        return True  # the projections of the projected updates (measured on PA-I, l1 ball)
    if cfg.estimator in ("Winnow", "PNormPerceptron"):
        return p.get("step", "conservative") != "conservative"
    if cfg.estimator == "DualAscentClassifier":
        return p.get("link", "euclidean") != "euclidean"
    if cfg.estimator == "LabelRanker":
        return p.get("update") == "III" and p.get("complexity") == "entropy"
    return False


@functools.cache
def _same_cpu():
    _, meta = _recorded()
    now = host()
    return (meta["cpu_name"], meta["cpu_features"]) == (now["cpu_name"], now["cpu_features"])


def _mode():
    if _same_cpu():
        return "bit for bit (recorded on this CPU)"
    _, meta = _recorded()
    return (
        f"rtol={RTOL}, atol={ATOL}, not bit for bit: recorded on CPU {meta['cpu_name']!r} "
        f"with other features than this host's {host()['cpu_name']!r} (fastmath "
        "reassoc/contract may round vectorised sums differently)"
    )


def _certified_step(cfg):
    """LabelRanker's entropic update III: its own tolerance (module docstring)."""
    p = dict(cfg.params)
    return cfg.estimator == "LabelRanker" and (p.get("update"), p.get("complexity")) == (
        "III", "entropy")  # fmt: skip


def _differs(got, want, exact=True, tol=(RTOL, ATOL)):
    """None when ``got`` matches ``want`` under this host's rule, else a description;
    ``exact=False``: the tolerance ``tol`` (rtol, atol) even on the recording CPU."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"dtype/shape {got.dtype}{got.shape}, recorded {want.dtype}{want.shape}"
    if _same_cpu() and exact:
        if np.array_equal(got, want, equal_nan=True):
            return None
    else:
        try:
            np.testing.assert_allclose(got, want, rtol=tol[0], atol=tol[1])
            return None
        except AssertionError:
            pass
    if got.dtype.kind in "fc":
        bad = ~np.isclose(got, want, rtol=0.0, atol=0.0, equal_nan=True)
        gap = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return (
            f"{int(bad.sum())} of {got.size} values differ, largest gap "
            f"{np.nanmax(np.where(bad, gap, 0.0)):.3g}"
        )
    return f"{int((got != want).sum())} of {got.size} values differ"


def test_recorded_file_matches_the_configurations():
    """Every run of the configurations is in the file and the file holds nothing else, on the
    same data (the outputs mean nothing on other rows)."""
    runs, meta = _recorded()
    expected = {key(cfg, *v) for cfg in CONFIGS for v in cfg.variants()}
    assert not expected - set(runs), f"not recorded: {sorted(expected - set(runs))[:5]}"
    assert not set(runs) - expected, f"recorded, no longer run: {sorted(set(runs) - expected)[:5]}"
    assert meta["data_sha256"] == data_digest(), "the data of the recorded runs changed"
    for name in ("cpu_name", "cpu_features", "numba_version"):
        assert meta[name]


def _tolerance(cfg, variant, want, tol):
    """(rtol, atol) of an output: ``tol``, or on another CPU for a float32 run RTOL32 of the
    output's scale, for Pegasos' average RTOL_PEGASOS_AVG of it (see their comments)."""
    if _same_cpu():
        return tol
    if variant[1] == "float32":
        r = RTOL32
    elif cfg.estimator == "Pegasos" and dict(cfg.params).get("average"):
        r = RTOL_PEGASOS_AVG
    else:
        return tol
    w = np.asarray(want, dtype=np.float64)
    scale = float(np.nanmax(np.abs(w))) if w.size and np.isfinite(w).any() else 1.0
    return max(tol[0], r), max(tol[1], r * scale)


@pytest.mark.parametrize(("cfg", "variant"), CASES)
def test_recorded_outputs(cfg, variant):
    runs, _ = _recorded()
    want = runs[key(cfg, *variant)]
    got = run(cfg, *variant)
    assert sorted(got) == sorted(want), "the run gives other outputs than were recorded"
    if "stats" in got:
        # dual_objective_ of the linear learners (Perceptron, PA, Winnow, ...) is newer than
        # the file, which holds NaN for it (no such attribute then): an addition, not a change
        i = STATS.index("dual_objective_")
        if np.isnan(want["stats"][i]) and not np.isnan(got["stats"][i]):
            got["stats"] = got["stats"].copy()
            got["stats"][i] = np.nan
    exact = not _compile_order_dependent(cfg)
    tol = (RTOL_CERTIFIED, ATOL_CERTIFIED) if _certified_step(cfg) else (RTOL, ATOL)
    failures = [
        f"{name}: {msg}"
        for name in sorted(got)
        if (msg := _differs(got[name], want[name], exact,
                            _tolerance(cfg, variant, want[name], tol)))  # fmt: skip
    ]
    mode = _mode() if exact else f"rtol={tol[0]}, atol={tol[1]} (compile-order dependent)"
    assert not failures, f"compared {mode}:\n" + "\n".join(failures)
