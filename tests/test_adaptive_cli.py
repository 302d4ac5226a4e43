"""The scale-free learners on the command line: train, save, load, the same model as Python."""

from __future__ import annotations

import numpy as np
import pytest

from onlinelearn import AdaGradClassifier, AdaGradRegressor, NormalizedClassifier
from onlinelearn.cli import main
from onlinelearn.datasets import load_dna
from onlinelearn.io import dump_svmlight
from onlinelearn.model_io import load_model


@pytest.mark.parametrize(
    "name,cls,params",
    [
        ("adagrad", AdaGradClassifier, []),
        ("adagrad", AdaGradClassifier, ["--param", "loss=logistic", "--param", "l1=0.01"]),
        ("normalized", NormalizedClassifier, []),
    ],
)
def test_train_classifier_on_svmlight(tmp_path, capsys, name, cls, params):
    X, y = load_dna("train")
    X, y = X[:300], y[:300]
    path, model = tmp_path / "train.svm", tmp_path / "m.npz"
    dump_svmlight(X, y, path)
    code = main(["train", "--learner", name, "-m", str(model), *params, str(path)])
    assert code in (0, None)
    assert "finished: 300 examples" in capsys.readouterr().out
    est = load_model(model)
    assert type(est) is cls
    assert est.t_ == 300 and est.score(X, y) > 0.8


def test_train_regressor_on_svmlight(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X @ [1.0, -2.0, 0.5, 3.0] + 1.0
    path, model = tmp_path / "reg.svm", tmp_path / "r.npz"
    dump_svmlight(X, y, path)
    code = main(["train", "--learner", "adagrad-regressor", "--epochs", "3", "-m", str(model),
                 str(path)])  # fmt: skip
    assert code in (0, None)
    assert "mean squared error" in capsys.readouterr().out
    est = load_model(model)
    assert type(est) is AdaGradRegressor and est.score(X, y) > 0.95
