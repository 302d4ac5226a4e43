"""The crash sweep (issue 22, item 7): every public estimator, every entry point, hostile inputs.

Matrix: 33 estimators and feature maps (``tests/_sweep_specs.py``: the linear learners, four
configurations of ``OnlineLearner`` (default, ``LastK(k=2)``, ``RankingHinge``) and
``OnlineRegressor``, the second-order, regression, dual ascent, ranking, SVM, boosting and
kernel learners, ``SequenceTagger``, ``OnlineStructuredLearner``, ``Aligner``,
``GraphPerceptron``, two kernel feature maps and a Gram matrix) x their entry points (``fit``,
``partial_fit`` on a fitted and on a fresh model, ``partial_fit_predict``,
``partial_fit_mistakes``, ``predict``, ``decision_function``, ``feature_map``, ``transform``,
the Gram matrix: 157 pairs; no estimator has ``predict_proba``) x the cases of
``tests/_sweep_inputs.py`` (32 X cases everywhere; on the training entries also 14 y cases and
4 sample_weight cases; "unfitted model" on the others; 33 alignment cases for the Aligner, 13
node cases for the graph Perceptron) = 6650 calls, 100 distinct cases.

Each estimator's cases run in one child process (``tests/_sweep.py``), so that a segmentation
fault fails the test that names the case instead of killing pytest; the child reports one JSON
line per case.  A case passes when the call ends in a clear error (ValueError, TypeError or
FloatingPointError with a message) after which the model's state is bit-identical (every array
of ``vars(est)``, recursively), or in a sound result (labels among ``classes_``, finite scores,
a model that still predicts clean rows; equal to the result of the reference input when the
case has one: unsorted or duplicate CSR indices give the canonical matrix's result, duplicates
summed, as in scikit-learn).  The children run ``ONLINELEARN_SWEEP_JOBS`` at a time (default 2);
the whole sweep takes about 2 minutes on 2 cores with numba's cache warm.

Below the sweep: one test for each defect it found, each failing on the code before the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import onlinelearn

HERE = Path(__file__).resolve().parent
SRC = str(Path(onlinelearn.__file__).resolve().parents[1])
sys.path.insert(0, str(HERE))

from _sweep_inputs import state_of  # noqa: E402
from _sweep_specs import SPECS  # noqa: E402

#: seconds one estimator's child may take (compiles included) before it counts as a hang
TIMEOUT = 600


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, str(HERE), env.get("PYTHONPATH", "")])
    return env


def run_child(name, report):
    """(exit code or None for a hang, stderr, the JSON records) of one estimator's sweep."""
    try:
        proc = subprocess.run(
            [sys.executable, str(HERE / "_sweep.py"), name, str(report)],
            env=_env(), capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
        code, stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, stderr = None, str(exc.stderr or "")
    lines = report.read_text(encoding="utf-8").splitlines() if report.exists() else []
    return code, stderr, [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def sweep(request, tmp_path_factory):
    """The children of the selected estimators, started together (a few at a time)."""
    names = [item.callspec.params["name"] for item in request.session.items
             if getattr(item, "originalname", None) == "test_crash_sweep"
             and hasattr(item, "callspec")]  # fmt: skip
    folder = tmp_path_factory.mktemp("sweep")
    pool = ThreadPoolExecutor(int(os.environ.get("ONLINELEARN_SWEEP_JOBS", "2")))
    futures = {n: pool.submit(run_child, n, folder / f"{i}.jsonl") for i, n in enumerate(names)}
    yield futures
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_crash_sweep(name, sweep):
    code, stderr, records = sweep[name].result()
    started = [r["start"] for r in records if "start" in r]
    done = [r for r in records if "case" in r]
    if code != 0:
        last = started[-1] if len(started) > len(done) else "(outside any case)"
        what = "hung" if code is None else f"died with exit code {code} (negative: a signal)"
        pytest.fail(f"{name}: the child {what} at {last}\n{stderr[-3000:]}")
    problems = [f"{r['entry']} / {r['case']}: {r['problem']}" for r in done if r["problem"]]
    assert not problems, f"{name}: {len(problems)} of {len(done)} cases\n" + "\n".join(problems)
    assert len(done) == len(started) > 0


# -- the defects the sweep found, one test each ------------------------------------------------


def _csr_with_index(X, pos, index, dtype=np.int32):
    C = sp.csr_matrix(X)
    out = sp.csr_matrix((C.data, C.indices, C.indptr), shape=C.shape)
    out.indices = C.indices.astype(dtype)
    out.indptr = C.indptr.astype(dtype)
    out.indices[pos] = index
    return out


def _in_child(code):
    """Run ``code`` in a child process (old code died there with a signal): its exit code and
    output."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_env(),
                          capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("index", [-1, 2**40])
@pytest.mark.parametrize("kernel", ["Polynomial(2).feature_map()", "RBF()"])
def test_kernels_refuse_broken_csr(kernel, index):
    """Out-of-range CSR indices reached the Gram program and the feature maps unchecked
    (accepted in silence; index = n_features aborted the process in a feature map)."""
    from onlinelearn import kernels as kn

    fn = eval(kernel, vars(kn))  # noqa: S307 - one of the two expressions above
    X = _csr_with_index(np.ones((3, 2)), 1, index, np.int64 if index > 2**31 else np.int32)
    with pytest.raises(ValueError, match="broken CSR"):
        fn.transform(X) if hasattr(fn, "transform") else fn(X)


def test_feature_map_refuses_an_overflow():
    from onlinelearn.kernels import Polynomial

    with pytest.raises(ValueError, match="overflows float64 on row 1"):
        Polynomial(2).feature_map().transform(np.array([[1.0, 2.0], [1e300, 1.0]]))


def test_duplicate_csr_entries_are_summed_by_boosting():
    """Stumps read the stored values: a value split over two entries of one column was two
    values (scikit-learn sums duplicates; so does every learner now, in check_X)."""
    from onlinelearn import PrimalDualBoost

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    clf = PrimalDualBoost(n_estimators=5).fit(X, y)
    C = sp.csr_matrix(X[:6])
    dup = sp.csr_matrix((np.repeat(C.data / 2, 2), np.repeat(C.indices, 2), 2 * C.indptr), C.shape)
    assert not dup.has_canonical_format
    np.testing.assert_array_equal(clf.decision_function(dup), clf.decision_function(X[:6]))
    refit = PrimalDualBoost(n_estimators=5).fit(dup, y[:6])
    np.testing.assert_array_equal(refit.decision_function(X), PrimalDualBoost(
        n_estimators=5).fit(X[:6], y[:6]).decision_function(X))  # fmt: skip


@pytest.mark.parametrize("make", ["LabelRanker", "OnlineLearner(RankingHinge)"])
def test_a_refused_fit_leaves_a_ranker_fitted(make):
    """The ranking family's fit dropped classes_ before checking X."""
    est = SPECS[make]().fitted
    before = state_of(est)
    with pytest.raises(ValueError):
        est.fit(np.full((4, 4), np.nan), [0, 1, 2, 0])
    assert state_of(est) == before


@pytest.mark.parametrize("name", ["OnlineRegressor", "PassiveAggressiveRegressor",
                                  "OnlineLeastSquares"])  # fmt: skip
def test_regressors_refuse_complex_targets(name):
    """numpy cast a complex y to its real part, with only a warning."""
    est = getattr(onlinelearn, name)()
    with pytest.raises(ValueError, match="complex"):
        est.fit(np.ones((3, 2)), np.array([1 + 1j, 2, 3]))


def test_perceptron_intercept_scale_is_not_set_by_one_huge_row():
    """'fit' takes b = the median row norm; when one row's squared norm overflowed, every row
    was divided by 1e300, the ordinary rows underflowed to zero and b became 2e300 (and the
    model could not predict clean rows)."""
    from onlinelearn import Perceptron

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), np.arange(30) % 3
    X[0] = 1e300
    clf = Perceptron(random_state=0).fit(X, y)
    assert clf.intercept_scaling_ == pytest.approx(np.median(np.linalg.norm(X[1:], axis=1)), 0.1)
    assert np.isfinite(clf.decision_function(rng.normal(size=(5, 4)))).all()


def test_an_intercept_that_overflows_is_refused():
    """Rows of -1e300: b = 2e300 and the intercept b w[d] overflowed; fit returned a model
    whose every prediction raised."""
    from onlinelearn import Perceptron

    rng = np.random.default_rng(0)
    clf = Perceptron(random_state=0).fit(rng.normal(size=(30, 4)), np.arange(30) % 3)
    before = state_of(clf)
    with pytest.raises(FloatingPointError, match="overflow"):
        clf.fit(np.full((30, 4), -1e300), np.arange(30) % 3)
    assert state_of(clf) == before


def test_aligner_feature_map_validates_timings_and_codes():
    """The issue's crash: invalid timings or type codes killed the process (exit -11)."""
    code, out = _in_child("""
        import numpy as np
        from onlinelearn.structured import Aligner, make_alignment
        X, Y = make_alignment(8, random_state=0)
        al = Aligner(random_state=0).fit(X, Y)
        (frames, events, G), y = X[0], Y[0]
        bad_events = events.copy(); bad_events[0] = 2**40
        for x, t in [((frames, events, G), y + 10**6), ((frames, events, G), y[::-1]),
                     ((frames, bad_events, G), y), ((frames, events, G[:-1]), y)]:
            try:
                al.feature_map(x, t)
                print("accepted")
            except ValueError as exc:
                print("refused:", exc)
    """)
    assert code == 0, out
    assert out.count("refused:") == 4, out
    assert "outside [0, " in out and "must increase" in out


@pytest.mark.parametrize("edit", ["events 1.5", "timing 1.5", "frames complex"])
def test_aligner_fit_refuses_what_it_used_to_cut(edit):
    """np.asarray(..., dtype=int64) cut 1.5 to 1; complex frames lost their imaginary part."""
    from onlinelearn.structured import Aligner, make_alignment

    X, Y = make_alignment(6, random_state=0)
    (frames, events, G), y = X[0], Y[0]
    if edit == "events 1.5":
        events = np.r_[events[:-1], 1.5]
    elif edit == "timing 1.5":
        y = np.r_[y[:-1], y[-1] + 0.5]
    else:
        frames = frames + 1j
    with pytest.raises(ValueError):
        Aligner(random_state=0).fit([(frames, events, G), *X[1:]], [y, *Y[1:]])


@pytest.mark.parametrize("nodes", [[0, -1], [0, 1.5], [0, np.nan], [[0, 1]]])
def test_graph_perceptron_checks_node_ids(nodes):
    """-1 was read as the last node, 1.5 as node 1, a NaN id as -2**63 (an IndexError)."""
    gp = SPECS["GraphPerceptron"]().fitted
    for method in (gp.predict, gp.decision_function):
        with pytest.raises(ValueError, match="node ids"):
            method(np.asarray(nodes))


def test_graph_perceptron_unfitted_and_bad_labels():
    from sklearn.exceptions import NotFittedError

    spec = SPECS["GraphPerceptron"]()
    with pytest.raises(NotFittedError):
        spec.make().predict([0, 1])
    gp = spec.fitted
    with pytest.raises(ValueError):
        gp.partial_fit_predict([0, 1], [0.0, np.nan])
    with pytest.raises(ValueError):
        gp.partial_fit_predict([0, 1], ["a", "b"])  # the model's labels are numbers


@pytest.mark.parametrize("case", ["index -1", "index = n_features", "tags 0.5", "mixed tags",
                                  "complex"])  # fmt: skip
def test_sequence_tagger_checks_its_sequences(case):
    """The token matrices' structure was not checked (index -1 accepted, an index past the
    features read out of bounds by predict), nor the tags (0.5 and [0, 'a'] became labels),
    and complex tokens lost their imaginary part."""
    spec = SPECS["SequenceTagger"]()
    seqs, tags = list(spec.seqs), list(spec.tags)
    d = seqs[0].shape[1]
    if case.startswith("index"):
        seqs[0] = _csr_with_index(seqs[0].toarray() + 1.0, 1, -1 if case == "index -1" else d)
    elif case == "tags 0.5":
        tags[0] = tags[0] + 0.5
    elif case == "mixed tags":
        tags[0] = [0, "a", 1, 2]
    else:
        seqs[0] = seqs[0].toarray() + 1j
    est = spec.fitted
    before = state_of(est)
    with pytest.raises(ValueError):
        est.partial_fit(seqs, tags)
    if case.startswith("index") or case == "complex":
        with pytest.raises(ValueError):
            est.predict(seqs[:1])
    assert state_of(est) == before


def test_structured_learner_restores_a_refused_fit():
    """fit on a fitted model failed mid-way (an oracle refused) and kept the half-done state."""
    spec = SPECS["OnlineStructuredLearner"]()
    est = spec.fitted
    before = state_of(est)
    X = list(spec.X0)
    X[5] = np.full(3, -np.inf)
    with pytest.raises(ValueError, match="feature_map returned NaN"), np.errstate(all="ignore"):
        est.fit(X, list(spec.y0))
    assert state_of(est) == before
