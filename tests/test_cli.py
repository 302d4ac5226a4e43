"""End-to-end tests of the command line interface (onlinelearn.cli)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onlinelearn
from onlinelearn.cli import LEARNERS, build_parser, main
from onlinelearn.datasets import load_dna
from onlinelearn.io import dump_svmlight, iter_svmlight_chunks
from onlinelearn.model_io import load_model


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    """A small train / test pair cut from the shipped DNA data, plain and bzip2."""
    X, y = load_dna("train")
    d = tmp_path_factory.mktemp("cli")
    # label 3 first appears at row 40: the CLI must discover labels as they come
    order = np.concatenate([np.flatnonzero(y != 3)[:40], np.arange(len(y))])[:400]
    train, test = d / "train.svm", d / "test.svm.bz2"
    dump_svmlight(X[order], y[order], train)
    Xt, yt = load_dna("test")
    dump_svmlight(Xt[:150], yt[:150], test)
    return {"dir": d, "train": train, "test": test, "X": X[order], "y": y[order]}


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _table_rows(out: str) -> list[tuple[float, float, int, int, int]]:
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 5 and re.fullmatch(r"\d+\.\d{6}", parts[0]):
            rows.append(
                (float(parts[0]), float(parts[1]), int(parts[2]), int(parts[3]), int(parts[4]))
            )
    return rows


def test_train_prints_progressive_table_and_saves_model(data_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    argv = ["train", data_files["train"], "-m", model, "--chunk-size", "37", "--n-features", 180]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert model.is_file()
    assert "average" in out and "since" in out and "counter" in out
    rows = _table_rows(out)
    counts = [r[2] for r in rows]
    assert counts == [1, 2, 4, 8, 16, 32, 64, 128, 256, 400]
    # the same learner run directly with the same chunks gives the same progressive mistakes
    X, y = data_files["X"], data_files["y"]
    est = onlinelearn.Perceptron()  # the command's default (no --average): the learner's
    pred = np.concatenate(
        [est.partial_fit_predict(X[i : i + 37], y[i : i + 37]) for i in range(0, len(y), 37)]
    )
    mistakes = np.cumsum(pred != y)
    previous = 0
    for avg, since, n, label, prediction in rows:
        assert avg == pytest.approx(mistakes[n - 1] / n, abs=1e-6)
        assert since == pytest.approx(
            (mistakes[n - 1] - (mistakes[previous - 1] if previous else 0)) / (n - previous),
            abs=1e-6,
        )
        assert (label, prediction) == (y[n - 1], pred[n - 1])
        previous = n
    assert f"{mistakes[-1]} progressive mistakes" in out
    loaded = load_model(model)
    np.testing.assert_array_equal(loaded.classes_, [1, 2, 3])
    np.testing.assert_array_equal(loaded.coef_, est.coef_)


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_train_each_learner(data_files, capsys, tmp_path, learner):
    class_name = LEARNERS[learner][0]
    assert hasattr(onlinelearn, class_name)
    model = tmp_path / f"{learner}.npz"
    argv = ["train", data_files["train"], "-m", model, "--learner", learner, "-q"]
    if LEARNERS[learner][2]:
        argv += ["-C", "0.5"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert out == ""  # --quiet
    est = load_model(model)
    assert type(est).__name__ == class_name
    assert est.n_features_in_ == 180  # found by scanning the file
    assert est.t_ == 400
    if LEARNERS[learner][2]:
        assert est.C == 0.5


def test_train_epochs_average_seed(data_files, capsys, tmp_path):
    model = tmp_path / "avg.npz"
    argv = ["train", data_files["train"], "-m", model, "--epochs", 2, "--average", "--seed", 7]
    argv += ["--learner", "pa2", "--n-features", 180]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert _table_rows(out)[-1][2] == 800
    est = load_model(model)
    assert est.average is True and est.random_state == 7 and est.t_ == 800


def test_predict_and_evaluate(data_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    assert main(["train", str(data_files["train"]), "-m", str(model), "-q"]) == 0
    est = load_model(model)
    Xt, yt = next(iter_svmlight_chunks(data_files["test"], n_features=180, chunk_size=10**6))
    expected = est.predict(Xt)

    out_file = tmp_path / "pred.txt"
    code, out, err = _run(["predict", data_files["test"], "-m", model, "-o", out_file], capsys)
    assert code == 0, err
    lines = out_file.read_text().splitlines()
    assert lines == [str(v) for v in expected]

    code, out, err = _run(["predict", data_files["test"], "-m", model, "--chunk-size", 7], capsys)
    assert code == 0, err
    assert out.splitlines() == lines

    code, out, err = _run(["evaluate", data_files["test"], "-m", model], capsys)
    assert code == 0, err
    acc = float(re.search(r"^accuracy:\s+([\d.]+)$", out, re.M).group(1))
    assert acc == pytest.approx(np.mean(expected == yt), abs=1e-6)
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix

    bacc = float(re.search(r"^balanced accuracy:\s+([\d.]+)$", out, re.M).group(1))
    assert bacc == pytest.approx(balanced_accuracy_score(yt, expected), abs=1e-6)
    cm = confusion_matrix(yt, expected, labels=[1, 2, 3])
    block = out.split("confusion matrix (rows: true label, columns: predicted label):")[1]
    printed = [list(map(int, line.split()[1:])) for line in block.strip().splitlines()[1:4]]
    assert printed == cm.tolist()
    from onlinelearn.metrics import confusion_operator_norm

    norm = float(re.search(r"^operator norm \|\|C\|\|: ([\d.]+)$", out, re.M).group(1))
    assert norm == pytest.approx(confusion_operator_norm(yt, expected, labels=[1, 2, 3]), abs=1e-6)


def test_predict_ignores_labels_of_unlabelled_files(data_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    assert main(["train", str(data_files["train"]), "-m", str(model), "-q"]) == 0
    unlabelled = tmp_path / "u.svm"
    unlabelled.write_text("0 1:1 5:1\n0.5 2:1\n")
    code, out, err = _run(["predict", unlabelled, "-m", model], capsys)
    assert code == 0, err
    assert len(out.splitlines()) == 2
    assert set(out.split()) <= {"1", "2", "3"}


def test_demo_with_plot(capsys, tmp_path):
    png = tmp_path / "curves.png"
    code, out, err = _run(["demo", "--plot", png], capsys)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ["Perceptron", "Perceptron (averaged)", "PA-I", "PA-II", "Winnow", "p-norm"]:
        assert re.search(
            rf"^{re.escape(name)}.*\s0\.\d{{4}}\s+0\.\d{{4}}\s+\d+\.\d{{3}}$", out, re.M
        )
    rows = [line.split() for line in out.splitlines() if line.startswith("Perceptron ")]
    test_acc = float(rows[0][-2])
    assert test_acc > 0.8  # a Perceptron reaches about 0.88 on DNA after one pass
    if not hasattr(onlinelearn, "COPA"):
        assert "COPA (C=1): skipped" in out


def test_demo_without_matplotlib(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    code, out, err = _run(["demo", "--plot", tmp_path / "x.png"], capsys)
    assert code == 2
    assert "matplotlib" in err and "onlinelearn[plot]" in err


# -- errors: one line on stderr, exit status 2, no traceback ------------------------------------


def _assert_one_line_error(code, err, *needles):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


def test_error_missing_data_file(capsys, tmp_path):
    code, _, err = _run(["train", tmp_path / "absent.svm", "-m", tmp_path / "m.npz"], capsys)
    _assert_one_line_error(code, err, "absent.svm", "No such file")


def test_error_malformed_line(capsys, tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:1\n2 2:1\n1 3:1\n2 1:1\n1 2:1\n2 3:1\n1 3:x\n2 1:1\n")
    code, _, err = _run(["train", bad, "-m", tmp_path / "m.npz", "--n-features", 3], capsys)
    _assert_one_line_error(code, err, "bad.svm", "line 7", "3:x")
    assert not (tmp_path / "m.npz").exists()
    code, _, err = _run(["train", bad, "-m", tmp_path / "m.npz"], capsys)  # during the scan
    _assert_one_line_error(code, err, "line 7")


def test_error_corrupted_or_missing_model(data_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    assert main(["train", str(data_files["train"]), "-m", str(model), "-q"]) == 0
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data[: len(data) - 10]))
    for cmd in ("predict", "evaluate"):
        code, _, err = _run([cmd, data_files["test"], "-m", model], capsys)
        _assert_one_line_error(code, err, "m.npz")
    code, _, err = _run(["evaluate", data_files["test"], "-m", tmp_path / "none.npz"], capsys)
    _assert_one_line_error(code, err, "none.npz")


def test_error_too_many_features_for_model(data_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    assert main(["train", str(data_files["train"]), "-m", str(model), "-q"]) == 0
    wide = tmp_path / "wide.svm"
    wide.write_text("1 1:1\n2 181:1\n")
    code, _, err = _run(["predict", wide, "-m", model], capsys)
    _assert_one_line_error(code, err, "line 2", "181")


def test_error_C_for_learner_without_C(data_files, capsys, tmp_path):
    argv = ["train", data_files["train"], "-m", tmp_path / "m.npz", "-C", "1", "--learner", "pa"]
    code, _, err = _run(argv, capsys)
    _assert_one_line_error(code, err, "-C applies only")


@pytest.mark.parametrize(
    "argv",
    [["train"], ["train", "x.svm"], ["nonsense"], ["train", "x", "-m", "m", "--epochs", "0"], []],
)
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_help_texts_have_examples(capsys):
    parser = build_parser()
    assert "examples:" in parser.format_help()
    for cmd in ("train", "predict", "evaluate", "demo"):
        with pytest.raises(SystemExit) as info:
            main([cmd, "--help"])
        assert info.value.code == 0
        out = capsys.readouterr().out
        assert "example:" in out and f"onlinelearn {cmd}" in out


# -- as a program ------------------------------------------------------------------------------


def _env():
    env = dict(os.environ)
    env.pop("ONLINELEARN_DEBUG", None)
    return env


def test_python_dash_m(data_files, tmp_path):
    model = tmp_path / "m.npz"
    run = subprocess.run(
        [sys.executable, "-m", "onlinelearn", "train", str(data_files["train"]), "-m", str(model)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert model.is_file()
    assert "progressive mistakes" in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "onlinelearn", "predict", str(tmp_path / "x.svm"), "-m", str(model)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_console_script():
    # the script of the environment running the tests first (a PATH may hold another
    # interpreter's script, e.g. a pyenv shim without this package)
    beside = Path(sys.executable).with_name("onlinelearn")
    exe = str(beside) if beside.exists() else shutil.which("onlinelearn")
    if exe is None:
        reason = "the onlinelearn console script is not installed (pip install -e .)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    run = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0
    assert "train" in run.stdout and "demo" in run.stdout
    run = subprocess.run(
        [exe, "evaluate", "missing.svm", "-m", "missing.npz"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert run.returncode == 2 and "missing" in run.stderr


# -- reproduce --------------------------------------------------------------------------------


_BOUND_LINE = re.compile(
    r"T=(\d+) \(T_p = ([\d ]+)\): \|\|C_hat\|\| = ([\d.]+), bound ([\d.]+) \+ ([\d.]+) = "
    r"([\d.]+) with probability >= ([\d.]+) \(delta = ([\d.]+), (\w+) form\)"
)


@pytest.mark.parametrize("delta, form", [(0.05, "stated"), (0.2, "derived")])
def test_reproduce_copa_toy_small(capsys, delta, form):
    argv = ["reproduce", "copa-toy", "--samples", "1", "--n", "600", "--epochs", "1"]
    argv += ["--seed", "3", "--delta", str(delta), "--bound-form", form]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert re.search(r"^paper: COPA\s+0\.85\s+0\.10$", out, re.M)
    assert re.search(r"^paper: Perceptron\s+0\.86\s+0\.18$", out, re.M)
    for name in ("COPA (averaged, C) ", "COPA (averaged, C/T_y^2)", "Perceptron (averaged)"):
        assert re.search(rf"^{re.escape(name)}.*\d\.\d{{3}} \+- \d\.\d{{3}}", out, re.M)
    bounds = _BOUND_LINE.findall(out)
    assert len(bounds) == 2  # one per cost normalisation
    for T, counts, norm, norm2, dev, bound, prob, d, f in bounds:
        T_p = np.array(counts.split(), dtype=float)
        assert int(T) == 300 == T_p.sum()
        assert float(d) == delta and f == form and float(prob) == pytest.approx(1 - delta)
        Q = len(T_p)
        log_term = np.log((2 * Q if form == "derived" else Q) / delta)
        expected_dev = np.sqrt(2 * Q * np.sum(1 / T_p[T_p > 0]) * log_term)
        assert float(dev) == pytest.approx(expected_dev, abs=1e-3)
        assert float(norm) == float(norm2)
        assert float(bound) == pytest.approx(float(norm) + float(dev), abs=2e-3)


def test_reproduce_copa_toy_one_normalisation_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "toy.png"
    argv = ["reproduce", "copa-toy", "--samples", "1", "--n", "400", "--epochs", "1"]
    code, out, err = _run([*argv, "--class-weight", "confusion", "--plot", png], capsys)
    assert code == 0, err
    assert "COPA (averaged, C/T_y^2)" in out and "COPA (averaged, C) " not in out
    assert len(_BOUND_LINE.findall(out)) == 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reproduce_copa_toy_errors(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    code, _, err = _run(["reproduce", "copa-toy", "--plot", tmp_path / "x.png"], capsys)
    _assert_one_line_error(code, err, "matplotlib", "onlinelearn[plot]")
    code, _, err = _run(["reproduce", "copa-toy", "--delta", "1.5"], capsys)
    _assert_one_line_error(code, err, "--delta")
    with pytest.raises(SystemExit) as info:
        main(["reproduce"])
    assert info.value.code == 2


def test_reproduce_imbalance_small(capsys):
    from _data import require_shared_data

    require_shared_data("pmlb/krkopt")
    argv = ["reproduce", "imbalance", "--datasets", "krkopt", "--max-rows", "1500", "--quiet"]
    code, out, err = _run([*argv, "--epochs", "1"], capsys)
    assert code == 0, err
    assert "1 epochs" in out and "about 1500 rows" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 5  # header and the five learners
    assert rows[1].startswith("| krkopt (")
    for row in rows[1:]:
        cells = [c.strip().strip("*") for c in row.strip("|").split("|")]
        acc, bacc, norm = (float(c) for c in cells[3:6])
        assert 0 <= acc <= 1 and 0 <= bacc <= 1 and 0 <= norm


def test_train_copa_prints_confusion_risk_bound(data_files, capsys, tmp_path):
    from onlinelearn.metrics import confusion_matrix_conditional, confusion_risk_bound

    argv = ["train", data_files["train"], "-m", tmp_path / "m.npz", "--learner", "copa"]
    argv += ["--chunk-size", "53", "--n-features", "180", "--epochs", "2", "--delta", "0.1"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    m = re.search(
        r"first pass, T = (\d+)\): \|\|C_hat\|\| = ([\d.]+); with probability >= 0.9 .* <= "
        r"([\d.]+) \+ ([\d.]+) = ([\d.]+) \(delta = 0.1\)",
        out,
    )
    assert m, out
    # the same learner on the same chunks: progressive predictions of the first pass
    X, y = data_files["X"], data_files["y"]
    est = onlinelearn.COPA()
    pred = np.concatenate(
        [est.partial_fit_predict(X[i : i + 53], y[i : i + 53]) for i in range(0, len(y), 53)]
    )
    labels = np.union1d(y, pred)
    C_hat = confusion_matrix_conditional(y, pred, labels=labels)
    counts = np.array([np.count_nonzero(y == c) for c in labels])
    ref = confusion_risk_bound(C_hat, counts, M=1.0, delta=0.1)
    assert int(m[1]) == len(y)
    assert float(m[2]) == pytest.approx(ref.empirical_norm, abs=1e-4)
    assert float(m[4]) == pytest.approx(ref.deviation, abs=1e-4)
    assert float(m[5]) == pytest.approx(ref.bound, abs=1e-4)
    # other learners print no bound
    argv = ["train", data_files["train"], "-m", tmp_path / "p.npz", "--n-features", "180"]
    code, out, _ = _run(argv, capsys)
    assert code == 0 and "confusion risk bound" not in out


@pytest.mark.parametrize(
    "options",
    [
        ["--learner", "pa1", "--average"],
        ["--learner", "winnow", "--average"],
        ["--learner", "copa"],
    ],
    ids=["pa1-average", "winnow-average", "copa"],
)
def test_resume_equals_an_uninterrupted_run(data_files, capsys, tmp_path, options):
    """train on A, then --resume on B == train on A followed by B: the same state, bit for bit
    (weights, averaging sums and timestamps, counters, class counts)."""
    from onlinelearn.model_io import read_model_file

    X, y = data_files["X"], data_files["y"]
    a, b, both = tmp_path / "a.svm", tmp_path / "b.svm", tmp_path / "ab.svm"
    dump_svmlight(X[:120], y[:120], a)
    dump_svmlight(X[120:200], y[120:200], b)
    dump_svmlight(X[:200], y[:200], both)
    common = ["--chunk-size", 40, "-q", "--n-features", 180]
    assert _run(["train", a, "-m", tmp_path / "part.npz", *options, *common], capsys)[0] == 0
    # the same chunk boundaries: Winnow and p-norm recompute their normaliser exactly at the
    # end of every chunk, so their state depends on where chunks end, resumed or not
    resume = ["train", b, "--resume", tmp_path / "part.npz", "--chunk-size", 40, "-q"]
    code, out, err = _run([*resume, "-m", tmp_path / "resumed.npz"], capsys)
    assert code == 0, err
    assert _run(["train", both, "-m", tmp_path / "full.npz", *options, *common], capsys)[0] == 0
    meta_r, arrays_r, _ = read_model_file(tmp_path / "resumed.npz")
    meta_f, arrays_f, _ = read_model_file(tmp_path / "full.npz")
    assert meta_r == meta_f
    assert sorted(arrays_r) == sorted(arrays_f)
    for name in arrays_f:
        assert arrays_r[name].dtype == arrays_f[name].dtype
        assert arrays_r[name].tobytes() == arrays_f[name].tobytes(), name
    # without -m the resumed file itself is continued and replaced
    code, out, err = _run(["train", b, "--resume", tmp_path / "part.npz", "-q"], capsys)
    assert code == 0, err
    assert load_model(tmp_path / "part.npz").t_ == 200


def test_resume_refuses_contradicting_options(data_files, capsys, tmp_path):
    model = tmp_path / "m.npz"
    assert main(["train", str(data_files["train"]), "-m", str(model), "-q"]) == 0
    before = model.read_bytes()
    for extra in (["--learner", "pa1"], ["-C", "0.5"], ["--average"], ["--n-features", 7]):
        code, out, err = _run(["train", data_files["train"], "--resume", model, *extra], capsys)
        assert code == 2 and ("--resume" in err or "differs" in err), err
    assert model.read_bytes() == before
