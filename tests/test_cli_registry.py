"""The command line for every learner of the registry (onlinelearn.registry): train, predict,
evaluate and --resume on a small file of the learner's task; --param; standard input; the
shuffle buffer and the sorted-labels warning; lazy imports."""

from __future__ import annotations

import gzip
import inspect
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import onlinelearn
from onlinelearn import registry
from onlinelearn.cli import main
from onlinelearn.cli._learners import _parse_param
from onlinelearn.cli._loop import _announce_compilation, _LabelRuns, _ShuffleBuffer
from onlinelearn.cli._options import _format_label
from onlinelearn.model_io import load_model

N_ROWS, N_FEATURES = 120, 6


def _row(x) -> str:
    return " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(x) if v != 0)


def _write(path, labels, X):
    path.write_text("".join(f"{lab} {_row(x)}\n" for lab, x in zip(labels, X, strict=True)))
    return path


def _labels_of(task, binary, X, W):
    S = X @ W
    if task == "regression":
        return [f"{v:.6g}" for v in S[:, 0]]
    if task == "ranking":  # every label whose score is positive, else the best one
        return [
            ",".join(str(j + 1) for j in np.flatnonzero(s > 0)) or str(int(np.argmax(s)) + 1)
            for s in S
        ]
    if binary:
        return [str(int(v)) for v in np.where(S[:, 0] > 0, 1, -1)]
    return [str(int(v)) for v in np.argmax(S, axis=1)]


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    """Two consecutive parts of one stream per task (a, b) and their concatenation."""
    d = tmp_path_factory.mktemp("tasks")
    rng = np.random.default_rng(7)
    W = rng.normal(size=(N_FEATURES, 3))
    files = {}
    for key, task, binary in (
        ("classification", "classification", False),
        ("binary", "classification", True),
        ("regression", "regression", False),
        ("ranking", "ranking", False),
    ):
        X = rng.normal(size=(N_ROWS, N_FEATURES))
        X[rng.random(X.shape) < 0.2] = 0.0
        labels = _labels_of(task, binary, X, W)
        half = N_ROWS // 2
        files[key] = {
            "all": _write(d / f"{key}.svm", labels, X),
            "a": _write(d / f"{key}_a.svm", labels[:half], X[:half]),
            "b": _write(d / f"{key}_b.svm", labels[half:], X[half:]),
            "labels": labels,
        }
    return files


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _key(spec) -> str:
    return "binary" if spec.binary_only else spec.task


def _same_model(a, b) -> None:
    meta_a, arrays_a = a._get_state()
    meta_b, arrays_b = b._get_state()
    assert sorted(arrays_a) == sorted(arrays_b)
    for name in arrays_a:
        np.testing.assert_array_equal(arrays_a[name], arrays_b[name], err_msg=name)


@pytest.mark.parametrize("name", registry.names())
def test_every_learner_trains_predicts_evaluates_and_resumes(name, task_files, capsys, tmp_path):
    spec = registry.get(name)
    files = task_files[_key(spec)]
    model = tmp_path / "m.npz"
    code, out, err = _run(["train", files["all"], "-m", model, "--learner", name], capsys)
    assert code == 0, err
    assert "finished:" in out and f"{N_ROWS} examples" in out
    est = load_model(model)
    assert type(est).__name__ == spec.class_name
    for key, value in spec.params.items():
        assert est.get_params()[key] == value

    pred_file = tmp_path / "pred.txt"
    code, _, err = _run(["predict", files["all"], "-m", model, "-o", pred_file, "-q"], capsys)
    assert code == 0, err
    lines = pred_file.read_text().splitlines()
    assert len(lines) == N_ROWS
    if spec.task == "regression":
        np.testing.assert_allclose(
            [float(v) for v in lines], est.predict(_load(files["all"], spec.task)[0])
        )
    elif spec.task == "classification":
        assert set(lines) <= set(files["labels"])
    else:  # ranking: each line a set of known labels
        known = {str(int(v)) for v in est.classes_}
        assert all(set(line.split(",")) <= known for line in lines)

    code, out, err = _run(["evaluate", files["all"], "-m", model, "-q"], capsys)
    assert code == 0, err
    measure = {"classification": "accuracy:", "regression": "mean squared error:",
               "ranking": "ranking loss:"}[spec.task]  # fmt: skip
    assert measure in out

    # --resume: training on a, then resuming on b gives the model of one run over a then b
    part = tmp_path / "part.npz"
    code, _, err = _run(["train", files["a"], "-m", part, "--learner", name, "-q"], capsys)
    assert code == 0, err
    resumed = tmp_path / "resumed.npz"
    code, _, err = _run(["train", files["b"], "--resume", part, "-m", resumed, "-q"], capsys)
    if not spec.online:
        assert code == 2 and "batch learner" in err and err.count("\n") == 1
        assert not resumed.exists()
        return
    assert code == 0, err
    whole = tmp_path / "whole.npz"
    argv = ["train", files["a"], files["b"], "-m", whole, "--learner", name, "-q"]
    assert _run(argv, capsys)[0] == 0
    _same_model(load_model(resumed), load_model(whole))


def _load(path, task):
    from onlinelearn.io import load_svmlight

    return load_svmlight(path, n_features=N_FEATURES, label_dtype=np.float64)


def test_every_public_estimator_is_in_the_registry():
    import onlinelearn.graph
    import onlinelearn.structured

    classes = set()
    for module in (onlinelearn, onlinelearn.graph, onlinelearn.structured):
        for n in module.__all__:
            obj = getattr(module, n)
            if inspect.isclass(obj) and hasattr(obj, "predict"):
                classes.add(obj.__name__)
    on_cli = {s.class_name for s in registry.LEARNERS.values()}
    assert classes - on_cli == set(registry.PYTHON_ONLY)
    for spec in registry.LEARNERS.values():
        assert spec.task in registry.TASKS
        cls = registry.learner_class(spec)
        assert getattr(onlinelearn, spec.class_name) is cls
        assert spec.online == hasattr(cls, "partial_fit")
    for alias in registry.ALIASES:  # the first command line's names still work
        assert alias in registry.LEARNERS


def test_help_and_registry_import_no_numerical_library():
    code = (
        "import sys, onlinelearn, onlinelearn.registry, onlinelearn.cli\n"
        "onlinelearn.cli.build_parser()\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('scipy', 'sklearn', 'numba'))\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    out = subprocess.run(
        [sys.executable, "-m", "onlinelearn", "train", "--help"],
        check=True, capture_output=True, text=True, env=_env(),
    ).stdout  # fmt: skip
    for name in registry.names():
        assert f"  {name} " in out


def test_every_public_name_still_imports():
    names = [n for n in onlinelearn.__all__ if n != "__version__"]
    code = (
        "import onlinelearn, onlinelearn.framework as fw, onlinelearn.engine as en\n"
        f"for n in {names!r}:\n"
        "    exec(f'from onlinelearn import {n}')\n"
        "    assert getattr(onlinelearn, n) is not None\n"
        "from onlinelearn import *\n"
        "from onlinelearn.framework import OnlineLearner, OnlineRegressor\n"
        "assert OnlineLearner is en.OnlineLearner and fw.OnlineRegressor is en.OnlineRegressor\n"
        "assert onlinelearn.__version__\n"
        "import onlinelearn as ol2\n"
        "assert ol2.datasets.load_dna and ol2.io.load_svmlight  # subpackages as attributes\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        onlinelearn.nope  # noqa: B018


def _env():
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(onlinelearn.__file__))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


# -- --param ---------------------------------------------------------------------------------


def test_parse_param_values():
    assert _parse_param("C=0.5") == ("C", 0.5)
    assert _parse_param("n_epochs=3") == ("n_epochs", 3)
    assert _parse_param("variant=PA-II") == ("variant", "PA-II")
    assert _parse_param("kernel='rbf'") == ("kernel", "rbf")
    assert _parse_param("average=false") == ("average", False)
    assert _parse_param("class_weight={1: 2.0}") == ("class_weight", {1: 2.0})
    assert _parse_param("x=None") == ("x", None)
    for bad in ("C", "=1", "1x=2"):
        with pytest.raises(Exception, match="NAME=VALUE"):
            _parse_param(bad)


def test_param_sets_the_learner_parameter(task_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    argv = ["train", task_files["regression"]["all"], "-m", model, "--learner", "pa-regressor",
            "--param", "epsilon=0.25", "--param", "loss=squared_epsilon_insensitive",
            "-q"]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    params = load_model(model).get_params()
    assert params["epsilon"] == 0.25 and params["loss"] == "squared_epsilon_insensitive"


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--param", "C=-1"], ["'C' parameter", "pa1"]),
        (["--param", "variant=PA-II"], ["--param variant", "fixes variant='PA-I'"]),
        (["--param", "nope=1"], ["--param nope", "no parameter 'nope'"]),
        (["-C", "2", "--param", "C=3"], ["disagree"]),
        (["--param", "C"], ["NAME=VALUE"]),
    ],
)
def test_param_errors_are_one_line(task_files, capsys, tmp_path, extra, words):
    model = tmp_path / "m.npz"
    argv = ["train", task_files["classification"]["all"], "-m", model, "--learner", "pa1", "-q"]
    if "NAME=VALUE" in words:
        with pytest.raises(SystemExit) as info:
            main([str(a) for a in argv + extra])
        assert info.value.code == 2
        err = capsys.readouterr().err
    else:
        code, _, err = _run(argv + extra, capsys)
        assert code == 2 and err.count("\n") == 1
    for w in words:
        assert w in err
    assert not model.exists()


def test_typed_flags_only_where_they_apply(task_files, capsys, tmp_path):
    argv = ["train", task_files["regression"]["all"], "-m", tmp_path / "m.npz", "-q",
            "--learner", "least-squares", "--average"]  # fmt: skip
    assert _run(argv, capsys)[0] == 0
    argv = ["train", task_files["classification"]["all"], "-m", tmp_path / "m.npz", "-q",
            "--learner", "arow", "--average"]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code == 2 and "--average applies only to" in err and "arow" in err


def test_batch_learner_refuses_epochs(task_files, capsys, tmp_path):
    argv = ["train", task_files["classification"]["all"], "-m", tmp_path / "m.npz", "-q",
            "--learner", "dual-cd-svc", "--epochs", "2"]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code == 2 and "batch learner" in err


def test_list_learners(capsys):
    code, out, _ = _run(["train", "--list-learners"], capsys)
    assert code == 0
    for spec in registry.LEARNERS.values():
        assert any(line.split()[:2] == [spec.name, spec.task] for line in out.splitlines())


# -- standard input ---------------------------------------------------------------------------


def _stdin_from(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))


@pytest.mark.parametrize("how", ["stream", "spooled"])
def test_train_from_standard_input(task_files, tmp_path, capsys, monkeypatch, how):
    data = task_files["classification"]["all"]
    from_file, from_stdin = tmp_path / "file.npz", tmp_path / "stdin.npz"
    extra = ["--n-features", N_FEATURES] if how == "stream" else ["--epochs", "2"]
    argv = ["train", "--learner", "pa1", "-q"] + extra
    assert _run(argv + [data, "-m", from_file], capsys)[0] == 0
    # gzip is recognised from its first bytes, as for files
    _stdin_from(monkeypatch, gzip.compress(data.read_bytes()))
    code, _, err = _run(argv + ["-", "-m", from_stdin], capsys)
    assert code == 0, err
    _same_model(load_model(from_file), load_model(from_stdin))
    _stdin_from(monkeypatch, data.read_bytes())
    code, out, err = _run(["predict", "-", "-m", from_file], capsys)
    assert code == 0, err
    assert out.splitlines() == [str(v) for v in load_model(from_file).predict(
        _load(data, "classification")[0])]  # fmt: skip


def test_a_real_pipe(task_files, tmp_path):
    data = task_files["regression"]["all"]
    model = tmp_path / "m.npz"
    with open(data, "rb") as f:
        subprocess.run(
            [sys.executable, "-m", "onlinelearn", "train", "-", "-m", str(model), "-q",
             "--learner", "pa-regressor", "--n-features", str(N_FEATURES)],
            stdin=f, check=True, env=_env(),
        )  # fmt: skip
    assert load_model(model).n_features_in_ == N_FEATURES


# -- sorted streams ---------------------------------------------------------------------------


def test_shuffle_buffer_emits_every_row_once_in_a_seeded_order():
    import scipy.sparse as sp

    n = 1000
    X = sp.csr_matrix(np.arange(n, dtype=np.float64)[:, None] + 1.0)
    y = np.repeat(np.arange(4), n // 4)

    def run(seed, size, chunk):
        buf, rows, labels = _ShuffleBuffer(size, seed), [], []
        for a in range(0, n, chunk):
            for got in (buf.push(X[a : a + chunk], y[a : a + chunk]),):
                if got is not None:
                    rows.append(got[0].toarray().ravel())
                    labels.append(got[1])
        got = buf.drain()
        rows.append(got[0].toarray().ravel())
        labels.append(got[1])
        return np.concatenate(rows), np.concatenate(labels)

    rows, labels = run(0, 300, 64)
    np.testing.assert_array_equal(np.sort(rows), np.arange(n) + 1.0)
    np.testing.assert_array_equal(labels, y[rows.astype(int) - 1])  # rows keep their labels
    assert not np.array_equal(rows, np.arange(n) + 1.0)
    np.testing.assert_array_equal(run(0, 300, 64)[0], rows)  # seeded
    assert not np.array_equal(run(1, 300, 64)[0], rows)
    # label changes: about 3 in the input, many once shuffled with a buffer as long as a run
    assert np.count_nonzero(np.diff(labels)) > 100
    # a row cannot leave before the buffer is full (size rows, to within a chunk)
    position = np.empty(n, dtype=int)
    position[rows.astype(int) - 1] = np.arange(n)
    assert np.all(position >= np.arange(n) - 300 - 64)


def test_label_runs_warn_only_for_sorted_labels():
    rng = np.random.default_rng(0)
    shuffled = rng.choice([0, 1], size=50_000, p=[0.97, 0.03])
    watch = _LabelRuns()
    for a in range(0, len(shuffled), 10_000):
        watch.update(shuffled[a : a + 10_000])
        assert watch.verdict() is None
    sorted_ = np.sort(rng.integers(0, 20, size=20_000))
    watch = _LabelRuns()
    verdicts = []
    for a in range(0, len(sorted_), 10_000):
        watch.update(sorted_[a : a + 10_000])
        verdicts.append(watch.verdict())
    assert verdicts[0] is not None and "--shuffle-buffer" in verdicts[0]
    assert verdicts[1] is None  # once
    watch = _LabelRuns()
    watch.update(sorted_[:7000])
    watch.update(sorted_[7000:])  # a run across the chunks
    assert watch.changes == 19 and watch.longest == np.max(np.bincount(sorted_))
    sets = [(1,), (1, 3)] * 500  # label sets alternate: no warning
    watch = _LabelRuns()
    watch.update(sets)
    assert watch.verdict() is None and watch.changes == 999


def test_sorted_file_warns_and_shuffle_buffer_fixes_it(tmp_path, capsys):
    rng = np.random.default_rng(3)
    k, per = 5, 200
    centers = rng.normal(scale=3.0, size=(k, N_FEATURES))
    y = np.repeat(np.arange(k), per)  # sorted by class, as news20 is distributed
    X = centers[y] + rng.normal(size=(k * per, N_FEATURES))
    data = _write(tmp_path / "sorted.svm", y, X)
    model = tmp_path / "m.npz"
    argv = ["train", data, "-m", model, "--learner", "pa1", "--chunk-size", "100"]
    code, out, err = _run(argv, capsys)
    assert code == 0 and "warning: the labels arrive in long sorted runs" in err
    assert "--shuffle-buffer" in err
    code, out, err = _run(argv + ["--shuffle-buffer", "1000", "--seed", "0"], capsys)
    assert code == 0 and "sorted runs" not in err
    code, out, err = _run(["train", data, "-m", model, "-q"], capsys)
    assert code == 0 and out == "" and err == ""  # -q: nothing, the warning included


# -- compilation and labels ---------------------------------------------------------------------


def test_compilation_is_announced_once():
    import numba

    said = []
    with _announce_compilation(said.append):
        f = numba.njit(lambda x: x + 1)  # a new function: a compilation, not a cache hit
        assert f(1) == 2 and f(2) == 3
        g = numba.njit(lambda x: x * 2)
        assert g(2.0) == 4.0
    assert len(said) == 1 and said[0].startswith("compiling, once")
    with _announce_compilation(said.append):
        assert f(3) == 4  # already compiled: nothing
    assert len(said) == 1


def test_format_label():
    assert _format_label(3.0) == "3" and _format_label(np.float64(-1.0)) == "-1"
    assert _format_label(np.int64(4)) == "4" and _format_label(2.5) == "2.5"
    assert _format_label((1, 3)) == "1,3" and _format_label(()) == "-"
    assert _format_label(None) == "-"


# -- evaluate's measures, against scikit-learn's ----------------------------------------------


def _printed(out: str) -> dict[str, float]:
    values = {}
    for line in out.splitlines():
        key, sep, rest = line.partition(":")
        if sep and rest.split():
            try:
                values[key.strip()] = float(rest.split()[0])
            except ValueError:
                pass
    return values


def test_evaluate_regression_measures(task_files, capsys, tmp_path):
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    data, model = task_files["regression"]["all"], tmp_path / "m.npz"
    argv = ["train", data, "-m", model, "-q", "--learner", "least-squares"]
    assert _run(argv, capsys)[0] == 0
    code, out, _ = _run(["evaluate", data, "-m", model, "-q"], capsys)
    X, y = _load(data, "regression")
    pred = load_model(model).predict(X)
    got = _printed(out)
    assert code == 0 and got["examples"] == N_ROWS
    assert got["mean squared error"] == pytest.approx(mean_squared_error(y, pred), rel=1e-5)
    assert got["mean absolute error"] == pytest.approx(mean_absolute_error(y, pred), rel=1e-5)
    assert got["R^2"] == pytest.approx(r2_score(y, pred), abs=1e-6)


def test_evaluate_ranking_measures(task_files, capsys, tmp_path):
    from sklearn.metrics import (
        coverage_error,
        label_ranking_average_precision_score,
        label_ranking_loss,
    )

    from onlinelearn.io import load_svmlight

    data, model = task_files["ranking"]["all"], tmp_path / "m.npz"
    argv = ["train", data, "-m", model, "-q", "--learner", "label-ranker", "--param", "C=1"]
    assert _run(argv, capsys)[0] == 0
    code, out, _ = _run(["evaluate", data, "-m", model, "-q"], capsys)
    assert code == 0
    est = load_model(model)
    X, sets = load_svmlight(data, n_features=N_FEATURES, multilabel=True)
    Y = np.array([[float(c) in s for c in est.classes_] for s in sets], dtype=int)
    S = est.decision_function(X)
    keep = (Y.sum(1) > 0) & (Y.sum(1) < Y.shape[1])
    got = _printed(out)
    assert got["ranking loss"] == pytest.approx(label_ranking_loss(Y[keep], S[keep]), abs=2e-6)
    assert got["coverage"] == pytest.approx(coverage_error(Y[keep], S[keep]), abs=2e-6)
    assert got["average precision"] == pytest.approx(
        label_ranking_average_precision_score(Y[keep], S[keep]), abs=2e-6
    )


def test_unknown_format_is_one_line(task_files, capsys, tmp_path):
    argv = ["train", task_files["classification"]["all"], "-m", tmp_path / "m.npz",
            "--format", "nope"]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "--format nope" in err and "svmlight" in err


def test_shuffle_buffer_is_seeded_and_resumable(task_files, capsys, tmp_path):
    data = task_files["classification"]["all"]

    def train(name, *extra):
        model = tmp_path / name
        argv = ["train", data, "-m", model, "-q", "--learner", "perceptron", "--chunk-size",
                "16", "--shuffle-buffer", "50", *extra]  # fmt: skip
        code, _, err = _run(argv, capsys)
        assert code == 0, err
        return load_model(model)

    _same_model(train("a.npz", "--seed", "3"), train("b.npz", "--seed", "3"))
    _same_model(train("c.npz"), train("d.npz", "--seed", "0"))  # the default seed is 0
    with pytest.raises(AssertionError):
        _same_model(train("e.npz", "--seed", "3"), train("f.npz", "--seed", "4"))
    resumed = tmp_path / "r.npz"
    argv = ["train", data, "--resume", tmp_path / "a.npz", "-m", resumed, "-q",
            "--shuffle-buffer", "50", "--seed", "5"]  # fmt: skip
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    assert load_model(resumed).t_ == 2 * N_ROWS


@pytest.mark.parametrize(
    "key, advice", [("regression", "--learner pa-regressor"), ("ranking", "label-ranker")]
)
def test_a_file_of_another_task_gets_command_line_advice(task_files, capsys, tmp_path, key,
                                                         advice):  # fmt: skip
    model = tmp_path / "m.npz"
    code, _, err = _run(["train", task_files[key]["all"], "-m", model, "-q"], capsys)
    assert code == 2 and err.count("\n") == 1 and "line 1" in err and advice in err
    assert "pass " not in err and not model.exists()
