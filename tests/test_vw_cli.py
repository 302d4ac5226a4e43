"""The CLI on Vowpal Wabbit text (--format vw, --bits, -q AB): the model it trains is the one
the Python path trains on the reader's chunks, importance weights included."""

from __future__ import annotations

import numpy as np
import pytest

from onlinelearn import PassiveAggressiveClassifier
from onlinelearn.cli import main
from onlinelearn.io.vw import iter_vw_chunks, load_vw
from onlinelearn.model_io import load_model


@pytest.fixture(scope="module")
def vw_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(300):
        y = int(rng.integers(1, 4))
        words = " ".join(f"w{y}_{rng.integers(6)}" for _ in range(4))
        noise = " ".join(f"n{rng.integers(30)}:{rng.integers(1, 4)}" for _ in range(3))
        weight = " 2" if i % 7 == 0 else ""
        lines.append(f"{y}{weight} 'ex{i}|t {words} |u {noise}")
    path = tmp_path_factory.mktemp("vw") / "d.vw"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_train_vw_equals_python_path(vw_file, tmp_path, capsys):
    model = tmp_path / "m.npz"
    argv = ["train", str(vw_file), "--format", "vw", "--bits", "12", "-q", "tu",
            "--learner", "pa1", "--chunk-size", "50", "-m", str(model), "-q"]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().out == ""  # the last -q is --quiet
    est = load_model(model)
    ref = PassiveAggressiveClassifier(variant="PA-I")
    with iter_vw_chunks(vw_file, chunk_size=50, n_bits=12, interactions=["tu"],
                        return_weights=True) as reader:  # fmt: skip
        for X, y, w in reader:
            ref.partial_fit_predict(X, y, sample_weight=w)
    assert est.n_features_in_ == 2**12
    np.testing.assert_array_equal(est.coef_.toarray(), ref.coef_)  # (weights of the columns seen)
    X, y = load_vw(vw_file, n_bits=12, interactions="tu")
    out = tmp_path / "pred.txt"
    assert main(["predict", str(vw_file), "-m", str(model), "--format", "vw", "-q", "tu",
                 "-o", str(out)]) == 0  # fmt: skip
    np.testing.assert_array_equal(np.loadtxt(out, dtype=np.int64), ref.predict(X))
    assert main(["evaluate", str(vw_file), "-m", str(model), "--format", "vw",
                 "--quadratic", "tu"]) == 0  # fmt: skip
    acc = float(capsys.readouterr().out.split("accuracy:")[1].split()[0])
    assert acc == pytest.approx(np.mean(ref.predict(X) == y))


def test_vw_options_are_checked(vw_file, tmp_path, capsys):
    model = tmp_path / "m.npz"
    assert main(["train", str(vw_file), "--format", "vw", "--bits", "10", "-m", str(model),
                 "--quiet"]) == 0  # fmt: skip
    assert main(["predict", str(vw_file), "-m", str(model), "--format", "vw", "--bits", "12"]) == 2
    assert "the model has 1024" in capsys.readouterr().err
    assert main(["train", str(vw_file), "--format", "vw", "--n-features", "5", "-m",
                 str(model)]) == 2  # fmt: skip
    assert "--bits" in capsys.readouterr().err
    assert main(["train", str(vw_file), "--bits", "10", "-m", str(model)]) == 2  # svmlight
    assert "apply to --format vw only" in capsys.readouterr().err
    bad = tmp_path / "bad.vw"
    bad.write_text("1 |a x\n1 a b\n")
    assert main(["train", str(bad), "--format", "vw", "-m", str(tmp_path / "b.npz")]) == 2
    assert "line 2: no '|'" in capsys.readouterr().err
