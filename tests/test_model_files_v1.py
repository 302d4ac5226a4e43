"""Model files written by an earlier version still load and predict as they did.

``tests/data/model_files_v1/`` holds files of format version 1 written before the private modules
moved into ``onlinelearn.shell`` and ``onlinelearn.io``, one per way an estimator is rebuilt
(linear learners through ``estimator_from_state``, with the one-array average U and with A and
lastS; the other families through their ``_from_state``), and ``expected.npz``: the rows they were
asked about and their answers then.  A file records the class name only, never a module path, so
moving modules must not change what an old file loads into.

To write the files again (only when the format version changes)::

    python tests/test_model_files_v1.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onlinelearn
from onlinelearn.kernels import RBF
from onlinelearn.model_io import load_model, read_model_file, save_model

DATA = Path(__file__).resolve().parent / "data" / "model_files_v1"


def _data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 6))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(120, 3)), axis=1)
    return X, y, rng.normal(size=(15, 6))


def _learners():
    return {
        "perceptron_average": onlinelearn.Perceptron(average=True, random_state=0),
        "winnow_average": onlinelearn.Winnow(eta=0.2, average=True, random_state=0),
        "pa_auto_intercept": onlinelearn.PassiveAggressiveClassifier(
            intercept_scaling="auto", class_weight={0: 2.0, 1: 1.0}, random_state=0
        ),
        "kernel_perceptron": onlinelearn.KernelPerceptron(kernel=RBF(gamma=0.5)),
        "arow": onlinelearn.AROW(),
        "dual_cd_svc": onlinelearn.DualCoordinateSVC(random_state=0),
    }


NAMES = sorted(_learners())


def _write():  # pragma: no cover - run by hand
    X, y, probe = _data()
    DATA.mkdir(parents=True, exist_ok=True)
    expected = {"probe": probe}
    for name, est in _learners().items():
        est.fit(X, y)
        save_model(est, DATA / f"{name}.npz")
        expected[f"{name}.predict"] = est.predict(probe)
        expected[f"{name}.decision_function"] = est.decision_function(probe)
    np.savez(DATA / "expected.npz", **expected)


@pytest.mark.parametrize("name", NAMES)
def test_an_old_model_file_loads_and_predicts_as_it_did(name):
    path = DATA / f"{name}.npz"
    meta, _, header = read_model_file(path)
    assert header["format_version"] == 1
    est = load_model(path)
    assert type(est).__name__ == meta["class"]
    assert type(est) is getattr(onlinelearn, meta["class"])
    with np.load(DATA / "expected.npz") as expected:
        probe = expected["probe"]
        np.testing.assert_array_equal(est.predict(probe), expected[f"{name}.predict"])
        np.testing.assert_array_equal(
            est.decision_function(probe), expected[f"{name}.decision_function"]
        )


if __name__ == "__main__":  # pragma: no cover
    _write()
