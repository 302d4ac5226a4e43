"""Drift detectors (onlinelearn.drift): the alarms against short references of the papers'
definitions and against River's detectors on random streams, a known change found within a
delay, few false alarms on stationary streams (bounds from each detector's confidence), the
per-event and compiled paths in agreement, bad input refused with the detector unchanged, and
pickling."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from onlinelearn.drift import ADWIN, DDM, EDDM, PageHinkley

river_drift = pytest.importorskip("river.drift")


# ------------------------------------------------------------------ references
def ref_adwin(xs, delta=0.002, clock=32, max_buckets=5, min_window_length=5, grace_period=10):
    """ADWIN2 (Bifet & Gavaldà 2007) on raw values: the window is a list of buckets (oldest
    first), each a list of the values it holds; a bucket of 2**i values is of row i, at most M
    per row (the two oldest of a row with M + 1 merge).  Every ``clock`` values, with more
    than ``grace_period`` in the window, every split at a bucket boundary is tested (oldest
    first) with the Bernstein cut on the window's exact variance; a passing split drops the
    oldest bucket and the test restarts.  The value after an alarm starts an empty window."""
    buckets, tick, alarms, drift = [], 0, [], False
    for i, x in enumerate(xs):
        if drift:
            buckets, tick, drift = [], 0, False
        buckets.append((0, [float(x)]))
        row = 0
        while True:
            at = [j for j, b in enumerate(buckets) if b[0] == row]
            if len(at) <= max_buckets:
                break
            a, b = at[0], at[1]  # adjacent: the two oldest of the row
            buckets[a : b + 1] = [(row + 1, buckets[a][1] + buckets[b][1])]
            row += 1
        tick += 1
        window = np.concatenate([np.array(b[1]) for b in buckets])
        if tick % clock or len(window) <= grace_period:
            continue
        while True:
            window = np.concatenate([np.array(b[1]) for b in buckets])
            W = len(window)
            sizes = np.cumsum([len(b[1]) for b in buckets])[:-1]  # n0 of every split
            sums = np.cumsum(window)[sizes - 1]
            n0, n1 = sizes.astype(float), W - sizes.astype(float)
            gap = sums / n0 - (window.sum() - sums) / n1
            dprime = math.log(2 * math.log(W) / delta)
            with np.errstate(divide="ignore", invalid="ignore"):  # splits too short: masked
                inv_m = 1 / (n0 - min_window_length + 1) + 1 / (n1 - min_window_length + 1)
                eps = np.sqrt(2 * inv_m * window.var() * dprime) + 2 / 3 * dprime * inv_m
            ok = (n0 >= min_window_length) & (n1 >= min_window_length) & (np.abs(gap) > eps)
            if not ok.any():
                break
            buckets.pop(0)
            drift = True
        if drift:
            alarms.append(i)
    return alarms


def ref_page_hinkley(xs, min_instances=30, delta=0.005, threshold=50.0, alpha=0.9999,
                     mode="both"):  # fmt: skip
    """Page's CUSUM in the Mouss et al. form: U_t, L_t on the deviations from the running
    mean, alarm when U_t - min U or max L - L_t exceeds the threshold; restart after it."""
    alarms, t = [], 0
    for i, x in enumerate(xs):
        if t == 0:
            mean, up, down, lo, hi = 0.0, 0.0, 0.0, math.inf, -math.inf
        t += 1
        mean = mean + (1.0 / t) * (x - mean)
        up = alpha * up + (x - mean) - delta
        down = alpha * down + (x - mean) + delta
        lo, hi = min(lo, up), max(hi, down)
        if t >= min_instances:
            rise, fall = up - lo > threshold, hi - down > threshold
            if {"both": rise or fall, "up": rise, "down": fall}[mode]:
                alarms.append(i)
                t = 0
    return alarms


def ref_ddm(xs, warm_start=30, warning_threshold=2.0, drift_threshold=3.0):
    """Gama et al.'s DDM: p_n and s_n = sqrt(p_n (1 - p_n) / n), the pair at the smallest
    p + s after the warm start, warning / drift above p_min + w s_min / p_min + d s_min."""
    alarms, warnings, n = [], [], 0
    for i, x in enumerate(xs):
        if n == 0:
            p, best = 0.0, (math.nan, math.nan, math.inf)
        n += 1
        p = p + (1.0 / n) * (x - p)
        s = math.sqrt(p * (1 - p) / n)
        if n > warm_start:
            if p + s <= best[2]:
                best = (p, s, p + s)
            if p + s > best[0] + drift_threshold * best[1]:
                alarms.append(i)
                n = 0
            elif p + s > best[0] + warning_threshold * best[1]:
                warnings.append(i)
    return alarms, warnings


def ref_eddm(xs, warm_start=30, alpha=0.95, beta=0.9):
    """Baena-García et al.'s EDDM: at every error, the mean and sample standard deviation of
    the distances between errors (recomputed from the list of distances), the level
    (p' + 2 s') / max(p' + 2 s'); warning below alpha, drift below beta."""
    alarms, warnings, n = [], [], 0
    for i, x in enumerate(xs):
        if n == 0:
            dists, last, best, warn = [], 0, -1.0, False
        n += 1
        if x == 1:
            dists.append(n - last)
            last = n
            if n > warm_start:
                d = np.array(dists, dtype=float)
                p2s = d.mean() + 2 * (d.std(ddof=1) if d.size > 1 else 0.0)
                if p2s > best:
                    best = p2s
                elif len(dists) > warm_start:
                    if p2s / best < beta:
                        alarms.append(i)
                        n = 0
                    else:
                        warn = p2s / best < alpha
        if warn:
            warnings.append(i)
    return alarms, warnings


def river_run(detector, xs):
    alarms, warnings = [], []
    for i, x in enumerate(xs):
        detector.update(float(x))
        if detector.drift_detected:
            alarms.append(i)
        if getattr(detector, "warning_detected", False):
            warnings.append(i)
    return alarms, warnings


# ------------------------------------------------------------------ random streams
def _stream(seed, n=3000):
    """A stream with a few random changes of mean and scale, of one of several kinds."""
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, n, rng.integers(0, 4)))
    means = rng.normal(0, 1, cuts.size + 1)
    scales = rng.uniform(0.2, 2, cuts.size + 1)
    seg = np.searchsorted(cuts, np.arange(n), side="right")
    kind = seed % 3
    if kind == 0:
        return means[seg] + scales[seg] * rng.normal(size=n)
    if kind == 1:  # bits
        return (rng.random(n) < 1 / (1 + np.exp(-2 * means[seg]))).astype(float)
    return np.round(5 * means[seg] + 3 * scales[seg] * rng.normal(size=n))  # integers


def _errors(seed, n=3000):
    rng = np.random.default_rng(seed)
    cut = rng.integers(0, n)
    p = np.where(np.arange(n) < cut, rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.8))
    return (rng.random(n) < p).astype(float)


ADWIN_PARAMS = [
    {},
    {"delta": 0.05, "clock": 1},
    {"delta": 0.2, "clock": 4, "max_buckets": 2, "min_window_length": 1, "grace_period": 0},
    {"delta": 1e-5, "clock": 7, "max_buckets": 9, "min_window_length": 20, "grace_period": 50},
]
PH_PARAMS = [
    {},
    {"min_instances": 1, "delta": 0.0, "threshold": 5.0, "alpha": 1.0},
    {"min_instances": 10, "delta": 0.1, "threshold": 20.0, "alpha": 0.99, "mode": "up"},
    {"threshold": 10.0, "mode": "down"},
]
EDDM_PARAMS = [
    {},
    {"warm_start": 5, "alpha": 0.99, "beta": 0.97},
    {"warm_start": 100, "alpha": 0.9, "beta": 0.8},
]
DDM_PARAMS = [
    {},
    {"warm_start": 0, "warning_threshold": 1.0, "drift_threshold": 1.5},
    {"warm_start": 100, "warning_threshold": 2.5, "drift_threshold": 4.0},
]


@pytest.mark.parametrize("params", ADWIN_PARAMS)
def test_adwin_alarms_are_the_references_and_rivers(params):
    for seed in range(12):
        xs = _stream(seed, 2000 if params.get("clock", 32) < 8 else 4000)
        ours = ADWIN(**params).update_many(xs).tolist()
        assert ours == ref_adwin(xs, **params), (seed, params)
        assert ours == river_run(river_drift.ADWIN(**params), xs)[0], (seed, params)


@pytest.mark.parametrize("params", PH_PARAMS)
def test_page_hinkley_alarms_are_the_references_and_rivers(params):
    for seed in range(20):
        xs = _stream(seed)
        ours = PageHinkley(**params).update_many(xs).tolist()
        assert ours == ref_page_hinkley(xs, **params), (seed, params)
        assert ours == river_run(river_drift.PageHinkley(**params), xs)[0], (seed, params)


@pytest.mark.parametrize("params", DDM_PARAMS)
def test_ddm_alarms_and_warnings_are_the_references_and_rivers(params):
    for seed in range(20):
        xs = _errors(seed)
        det, alarms, warnings = DDM(**params), [], []
        for i, x in enumerate(xs):
            det.update(x)
            alarms += [i] if det.drift_detected else []
            warnings += [i] if det.warning_detected else []
        assert alarms == DDM(**params).update_many(xs).tolist()
        assert (alarms, warnings) == ref_ddm(xs, **params), (seed, params)
        assert (alarms, warnings) == river_run(river_drift.binary.DDM(**params), xs)


@pytest.mark.parametrize("params", EDDM_PARAMS)
def test_eddm_alarms_and_warnings_are_the_references_and_rivers(params):
    """The reference's statistics are numpy's over the list of distances, ours Welford's: the
    same alarms (the levels differ by rounding only)."""
    for seed in range(12):
        xs = _errors(seed)
        det, alarms, warnings = EDDM(**params), [], []
        for i, x in enumerate(xs):
            det.update(x)
            alarms += [i] if det.drift_detected else []
            warnings += [i] if det.warning_detected else []
        assert alarms == EDDM(**params).update_many(xs).tolist()
        assert (alarms, warnings) == ref_eddm(xs, **params), (seed, params)
        assert (alarms, warnings) == river_run(river_drift.binary.EDDM(**params), xs)


def test_eddm_detects_a_rise_of_the_error_rate():
    """Errors 5% then 50% from row 3000: an alarm within 200 rows after the change."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        xs = np.r_[rng.random(3000) < 0.05, rng.random(1000) < 0.5].astype(float)
        alarms = EDDM().update_many(xs)
        after = alarms[alarms >= 3000]
        assert after.size and after[0] < 3200, (seed, alarms)


def test_adwin_window_statistics_are_rivers():
    """Between alarms the window (width, sum, mean) is River's after every value."""
    xs = _stream(4, 1500)
    ours, theirs = ADWIN(delta=0.05, clock=3), river_drift.ADWIN(delta=0.05, clock=3)
    for x in xs:
        ours.update(x)
        theirs.update(x)
        assert ours.width == theirs.width and ours.drift_detected == theirs.drift_detected
        assert ours.total == pytest.approx(theirs.total, rel=1e-12, abs=1e-9)
        assert ours.estimation == pytest.approx(theirs.estimation, rel=1e-12, abs=1e-9)


def test_where_adwin_differs_from_rivers_on_purpose():
    """``variance`` is the window's variance (River's: the sum of squared deviations);
    ``n_detections`` counts every alarm (River's restarts with the window); max_buckets=1 and
    min_window_length=0, which River takes, are refused (test_bad_parameters_are_refused)."""
    xs = _shift_stream(0)
    ours, theirs = ADWIN(), river_drift.ADWIN()
    n_alarms = 0
    for x in xs[:1500]:
        ours.update(x)
        theirs.update(x)
        n_alarms += ours.drift_detected
        if theirs.width > 1 and not ours.drift_detected:
            assert ours.variance == pytest.approx(theirs.variance / theirs.width, rel=1e-12)
    assert n_alarms >= 1 and ours.n_detections == n_alarms and theirs.n_detections == 0
    window = xs[1500 - ours.width : 1500]  # no alarm since: the window is the last values
    assert ours.variance == pytest.approx(window.var(), rel=1e-9)


# ------------------------------------------------------------------ the two paths
@pytest.mark.parametrize("make", [lambda: ADWIN(clock=5), lambda: PageHinkley(threshold=8.0),
                                  lambda: DDM()])  # fmt: skip
def test_update_and_update_many_in_pieces_leave_the_same_state(make):
    xs = _errors(3) if isinstance(make(), DDM) else _stream(3)
    one, many = make(), make()
    alarms = [i for i, x in enumerate(xs) if one.update(x).drift_detected]
    pieces = np.split(xs, [1, 7, 500, 501, 2200])
    starts = np.cumsum([0] + [len(p) for p in pieces[:-1]])
    got = np.concatenate(
        [many.update_many(p) + s for p, s in zip(pieces, starts, strict=True)]
    ).tolist()
    assert got == alarms and len(alarms) >= 1
    assert pickle.dumps(one.__dict__) == pickle.dumps(many.__dict__)


# ------------------------------------------------------------------ known change points
def _shift_stream(seed, n0=1000, n1=1000, gap=1.0):
    rng = np.random.default_rng(seed)
    return np.r_[rng.normal(0, 1, n0), rng.normal(gap, 1, n1)]


@pytest.mark.parametrize("make, delay", [(ADWIN, 300), (PageHinkley, 150)])
def test_a_mean_shift_is_detected_after_it_within_a_delay(make, delay):
    """N(0,1) then N(1,1) from row 1000: the first alarm after the change comes within
    ``delay`` rows, on every seed."""
    for seed in range(10):
        alarms = make().update_many(_shift_stream(seed))
        after = alarms[alarms >= 1000]
        assert after.size and after[0] < 1000 + delay, (seed, alarms)


def test_ddm_detects_a_rise_of_the_error_rate_within_a_delay():
    for seed in range(10):
        rng = np.random.default_rng(seed)
        xs = np.r_[rng.random(2000) < 0.1, rng.random(1000) < 0.4].astype(float)
        alarms = DDM().update_many(xs)
        after = alarms[alarms >= 2000]
        assert after.size and after[0] < 2300, (seed, alarms)


def test_adwin_false_alarms_on_stationary_streams_are_within_its_confidence():
    """A check tests at most M log2(W) + M splits; each passes by chance with probability at
    most 2 exp(-delta') = delta / ln W (the Bernstein cut), so a check alarms with
    probability at most (M log2 W + M) delta / ln W.  Uniform values, 20 streams."""
    n, delta, clock, M = 4000, 0.01, 4, 5
    bound = sum((M * math.log2(w) + M) * delta / math.log(w)
                for w in range(clock, n + 1, clock))  # fmt: skip
    total = sum(
        ADWIN(delta=delta, clock=clock).update_many(np.random.default_rng(s).random(n)).size
        for s in range(20)
    )
    assert total <= 20 * bound
    # and a delta a thousand times larger does raise false alarms (the test can fail)
    loose = sum(ADWIN(delta=0.99, clock=1, min_window_length=1).update_many(
        np.random.default_rng(s).random(n)).size for s in range(3))  # fmt: skip
    assert loose > 0


def test_page_hinkley_false_alarms_within_the_hoeffding_bound():
    """Values in [0, 1], alpha = 1: each start crosses lambda by chance with probability at
    most exp(-8 delta lambda), so at most n exp(-8 delta lambda) alarms per stream."""
    n, delta, lam = 4000, 0.05, 10.0
    bound = n * math.exp(-8 * delta * lam)
    counts = [PageHinkley(delta=delta, threshold=lam, alpha=1.0).update_many(
        np.random.default_rng(s).random(n)).size for s in range(20)]  # fmt: skip
    assert sum(counts) <= 20 * bound
    assert sum(counts) <= 20  # in fact few: at most one a stream on average


def test_ddm_false_alarms_on_a_stationary_error_rate():
    """The drift level is d = 3 standard deviations above the best level; by the normal
    approximation a stationary stream passes it at a given step with probability at most
    1 - Phi(d - 1) (p_n + s_n > p_min + d s_min needs p_n - p_min > (d - 1) s_min)."""
    n, d = 3000, 3.0
    phi = 0.5 * math.erfc((d - 1) / math.sqrt(2))
    total = sum(
        DDM(drift_threshold=d).update_many(
            (np.random.default_rng(s).random(n) < 0.3).astype(float)).size
        for s in range(20)
    )  # fmt: skip
    assert total <= 20 * n * phi / 10  # far below the per-step bound summed over the stream


# ------------------------------------------------------------------ bad input, pickling
DETECTORS = [ADWIN, PageHinkley, DDM, EDDM]


@pytest.mark.parametrize("cls", DETECTORS)
@pytest.mark.parametrize(
    "bad", [np.nan, np.inf, -np.inf, 1e300, -2e140, "1", None, [1.0], np.ones(2)]
)
def test_bad_values_raise_and_leave_the_detector_unchanged(cls, bad):
    det = cls()
    det.update_many(_errors(1, 200))
    before = pickle.dumps(det.__dict__)
    with pytest.raises(ValueError):
        det.update(bad)
    assert pickle.dumps(det.__dict__) == before
    arr = np.r_[_errors(2, 50), np.nan, 0.0] if not isinstance(bad, float) else np.r_[1.0, bad]
    for batch in (arr, np.zeros((3, 2)), np.zeros(0), ["a", "b"]):
        with pytest.raises(ValueError):
            det.update_many(batch)
        assert pickle.dumps(det.__dict__) == before


@pytest.mark.parametrize("cls", [ADWIN, PageHinkley])
def test_the_largest_values_taken_keep_the_sums_finite(cls):
    """Values of magnitude 1e140 (the largest taken): no sum overflows, and the jump from
    -1e140 to 1e140 raises alarms.  (ADWIN also alarms on the constant part: its cut's term
    2/3 delta' / m assumes values in [0, 1], and rounding in sums of 1e140 exceeds it.)"""
    det = cls(**({"clock": 1} if cls is ADWIN else {}))
    alarms = det.update_many(np.r_[np.full(300, -1e140), np.full(300, 1e140)])
    assert np.any(alarms >= 300), alarms
    assert np.isfinite(det._fs[:4]).all()  # (Page-Hinkley's minimum starts at inf)


def test_eddm_refuses_values_other_than_0_and_1():
    det = EDDM().update(1).update(0)
    before = pickle.dumps(det.__dict__)
    for bad in (0.5, 2.0, -1.0):
        with pytest.raises(ValueError, match="0 or 1"):
            det.update(bad)
        with pytest.raises(ValueError, match="0 or 1"):
            det.update_many([0.0, 1.0, bad])
    assert pickle.dumps(det.__dict__) == before


def test_ddm_refuses_values_outside_the_unit_interval():
    det = DDM().update(1).update(0)
    before = pickle.dumps(det.__dict__)
    for bad in (2.0, -0.5):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            det.update(bad)
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            det.update_many([0.0, 1.0, bad])
    assert pickle.dumps(det.__dict__) == before


@pytest.mark.parametrize(
    "cls, params",
    [(ADWIN, {"delta": 0.0}), (ADWIN, {"clock": 0}), (ADWIN, {"max_buckets": 1}),
     (ADWIN, {"min_window_length": 0}), (ADWIN, {"delta": float("nan")}),
     (PageHinkley, {"mode": "sideways"}), (PageHinkley, {"alpha": 0.0}),
     (PageHinkley, {"threshold": -1.0}), (DDM, {"drift_threshold": 0}),
     (DDM, {"warm_start": 1.5}), (EDDM, {"beta": 0.96}), (EDDM, {"alpha": 1.5})],
)  # fmt: skip
def test_bad_parameters_are_refused(cls, params):
    with pytest.raises(ValueError):
        cls(**params)


@pytest.mark.parametrize("cls", DETECTORS)
def test_a_detector_pickles_mid_stream(cls):
    xs = _errors(5)
    a = cls(**({"clock": 1} if cls is ADWIN else {}))
    a.update_many(xs[:1500])
    b = pickle.loads(pickle.dumps(a))
    assert repr(b) == repr(a)
    np.testing.assert_array_equal(a.update_many(xs[1500:]), b.update_many(xs[1500:]))
    assert a.n_detections == b.n_detections


def test_the_docstring_examples_run():
    import doctest

    import onlinelearn.drift.adwin
    import onlinelearn.drift.ddm
    import onlinelearn.drift.eddm
    import onlinelearn.drift.page_hinkley

    for module in (
        onlinelearn.drift.adwin,
        onlinelearn.drift.ddm,
        onlinelearn.drift.eddm,
        onlinelearn.drift.page_hinkley,
    ):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__
