"""The HTML report: its numbers (read back from the page) against an independent computation,
self-containment, and the ``onlinelearn report`` command (including --progressive and errors)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file
from sklearn.metrics import balanced_accuracy_score, confusion_matrix

from onlinelearn import PassiveAggressiveClassifier, Perceptron
from onlinelearn.cli import main
from onlinelearn.model_io import load_model, save_model
from onlinelearn.report import html_report, report_data


def _page_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert m, "the page embeds its numbers"
    return json.loads(m.group(1).replace("<\\/", "</"))


def _blobs(seed=0, n=300, d=5, k=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centers[y] + rng.normal(size=(n, d))
    return X, y + 1


@pytest.mark.filterwarnings("ignore:y_pred contains classes")
@pytest.mark.parametrize("seed", range(5))
def test_numbers_match_an_independent_computation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 700))
    y = rng.integers(0, 4, size=n)
    pred = np.where(rng.random(n) < 0.7, y, rng.integers(0, 5, size=n))  # 4: predicted only
    est = Perceptron()
    d = _page_data(html_report(est, y, pred))
    labels = np.union1d(y, pred)
    assert d["labels"] == labels.tolist()
    np.testing.assert_array_equal(d["confusion"], confusion_matrix(y, pred, labels=labels))
    assert d["accuracy"] == pytest.approx(np.mean(y == pred))
    assert d["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, pred))
    for t, e in d["curve"]:
        assert e == pytest.approx(np.mean(y[:t] != pred[:t]))
    assert d["curve"][-1][0] == n
    rates = confusion_matrix(y, pred, labels=labels, normalize="true")
    present = np.isin(labels, y)
    for i in range(len(labels)):
        if present[i]:
            assert d["recall"][i] == pytest.approx(rates[i, i])
        else:
            assert np.isnan(d["recall"][i])
    C = np.where(present[:, None], rates, 0.0)
    np.fill_diagonal(C, 0.0)
    assert d["operator_norm"] == pytest.approx(np.linalg.svd(C, compute_uv=False)[0])


def test_page_is_self_contained_and_escapes_labels():
    y = np.array(["<b>a</b>", "x&y", "x&y"], dtype=object)
    pred = np.array(["x&y", "x&y", "<b>a</b>"], dtype=object)
    page = html_report(Perceptron(), y, pred, title="t <script>")
    assert "<b>a</b>" not in page.split('id="data">')[0]  # escaped in the drawing
    assert "<script>" not in page.replace('<script type="application/json" id="data">', "")
    for attr in re.findall(r'(?:src|href)="([^"]*)"', page):
        assert not attr.startswith(("http", "//")), attr
    assert _page_data(page)["labels"] == ["<b>a</b>", "x&y"]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="no examples"):
        report_data(Perceptron(), np.array([]), np.array([]))
    with pytest.raises(ValueError, match="one length"):
        report_data(Perceptron(), np.array([1, 2]), np.array([1]))


def test_cli_report_predicts_without_changing_the_model(tmp_path):
    X, y = _blobs()
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight_file(X[:200], y[:200], str(train), zero_based=False)
    dump_svmlight_file(X[200:], y[200:], str(test), zero_based=False)
    est = PassiveAggressiveClassifier(random_state=0).fit(X[:200], y[:200])
    model = tmp_path / "m.npz"
    save_model(est, model)
    before = model.read_bytes()
    out = tmp_path / "r.html"
    assert main(["report", str(model), str(test), "-o", str(out)]) == 0
    d = _page_data(out.read_text(encoding="utf-8"))
    pred = load_model(model).predict(X[200:])
    np.testing.assert_array_equal(
        d["confusion"], confusion_matrix(y[200:], pred, labels=d["labels"])
    )
    assert d["estimator"] == "PassiveAggressiveClassifier"
    assert d["counters"]["t_"] == est.t_
    assert model.read_bytes() == before

    # progressive: the predictions of a copy that learns chunk after chunk
    out2 = tmp_path / "p.html"
    assert main(["report", str(model), str(test), "-o", str(out2), "--progressive",
                 "--chunk-size", "25"]) == 0  # fmt: skip
    d2 = _page_data(out2.read_text(encoding="utf-8"))
    copy = load_model(model)
    want = []
    for i in range(200, 300, 25):
        want.append(copy.predict(X[i : i + 25]))
        copy.partial_fit(X[i : i + 25], y[i : i + 25])
    np.testing.assert_array_equal(
        d2["confusion"], confusion_matrix(y[200:], np.concatenate(want), labels=d2["labels"])
    )
    assert model.read_bytes() == before


def test_cli_report_errors(tmp_path, capsys):
    X, y = _blobs(n=50)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    model = tmp_path / "m.npz"
    save_model(Perceptron().fit(X, y), model)
    assert main(["report", str(model), str(data), "-o", str(model)]) == 2
    assert "is the model file" in capsys.readouterr().err
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    assert main(["report", str(model), str(empty), "-o", str(tmp_path / "r.html")]) == 2
    assert "no examples" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n2 x:y\n")
    assert main(["report", str(model), str(bad), "-o", str(tmp_path / "r.html")]) == 2
    assert "bad.svm" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_cli_report_refuses_a_regressor(tmp_path, capsys):
    from onlinelearn.regression import PassiveAggressiveRegressor

    X, y = _blobs(n=40)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y.astype(float), str(data), zero_based=False)
    model = tmp_path / "r.npz"
    save_model(PassiveAggressiveRegressor().fit(X, y.astype(float)), model)
    assert main(["report", str(model), str(data), "-o", str(tmp_path / "r.html")]) == 2
    assert "regression model" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_cli_report_bounds_section(tmp_path):
    """--bounds: the page carries onlinelearn.bounds.report's figures for the model's learner
    run from scratch over the file; its observed mistakes are those of an independent
    progressive run, and the bound and weak duality hold."""
    from onlinelearn.bounds import report as bound_report

    X, y = _blobs(seed=3, n=240)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    est = PassiveAggressiveClassifier(variant="PA-I", C=0.5, random_state=0).fit(X, y)
    model = tmp_path / "m.npz"
    save_model(est, model)
    out = tmp_path / "b.html"
    assert main(["report", str(model), str(data), "-o", str(out), "--bounds"]) == 0
    d = _page_data(out.read_text(encoding="utf-8"))["bounds"]
    fresh = PassiveAggressiveClassifier(variant="PA-I", C=0.5, random_state=0)
    progressive = fresh.partial_fit_predict(X, y, classes=np.unique(y))
    assert d["observed"] == int(np.sum(progressive != y))
    assert d["observed"] <= d["bound"]
    assert d["gap"] >= 0 and d["rounds"] == len(y)
    want = bound_report(load_model(model), X, y, show=False)
    assert d["bound"] == pytest.approx(want["bound"])
    assert d["dual_objective"] == pytest.approx(want["dual_objective"])
    page = out.read_text(encoding="utf-8")
    assert "Crammer" in page and "<h2>Bound</h2>" in page


def test_cli_report_bounds_of_copa_follow_its_checkpoints(tmp_path):
    """COPA's bound (Theorem 2) comes at checkpoints along the stream: the page draws them at
    their rounds, and its figures are bounds.report's."""
    from onlinelearn import COPA
    from onlinelearn.bounds import report as bound_report

    X, y = _blobs(seed=4, n=300)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    model = tmp_path / "c.npz"
    save_model(COPA(random_state=0).fit(X, y), model)
    out = tmp_path / "c.html"
    assert main(["report", str(model), str(data), "-o", str(out), "--bounds"]) == 0
    page = out.read_text(encoding="utf-8")
    d = _page_data(page)["bounds"]
    want = bound_report(load_model(model), X, y, show=False)
    assert d["bound"] == pytest.approx(want["bound"]) and d["observed"] <= d["bound"]
    svg = page.split("<h2>Bound</h2>")[1]
    xs = [float(p.split(",")[0]) for p in re.search(r'points="([^"]*)"', svg).group(1).split()]
    assert len(xs) == len(want["curve_rounds"]) and xs == sorted(xs)
    assert xs[-1] == pytest.approx(56 + (860 - 56 - 130))  # the last checkpoint at the right
    assert "nan" not in svg.split("</svg>")[0]
