"""Model files are read in one format version only (``model_io.FORMAT_VERSION``).

Files of format version 1 were written by development versions of onlinelearn, whose layouts
changed under that one number; nothing converts them on load.  They are refused with one line
that names the version and says to train the model again, before any estimator is rebuilt, and
the command line leaves the file as it was.  A file of the current version whose ``st`` has
another length than the estimator's state (the length of an older layout), or averaging
arrays of another layout, is refused with a :class:`ModelFileError` that names the array, not
an ``IndexError`` later.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import onlinelearn
from onlinelearn import model_io
from onlinelearn.cli import main
from onlinelearn.kernels import RBF
from onlinelearn.model_io import FORMAT_VERSION, ModelFileError, load_model, save_model


def _data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 6))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(80, 3)), axis=1)
    return X, y


def _fitted(name):
    X, y = _data()
    make = {
        "perceptron_average": lambda: onlinelearn.Perceptron(average=True, random_state=0),
        "pa_auto_intercept": lambda: onlinelearn.PassiveAggressiveClassifier(random_state=0),
        "winnow_average": lambda: onlinelearn.Winnow(eta=0.2, average=True, random_state=0),
        "kernel_perceptron": lambda: onlinelearn.KernelPerceptron(kernel=RBF(gamma=0.5)),
        "arow": lambda: onlinelearn.AROW(),
        "dual_ascent": lambda: onlinelearn.DualAscentClassifier(step="last-k", k=2, n_epochs=1),
        "label_ranker": lambda: onlinelearn.LabelRanker(n_epochs=1),
        "class_dependent": lambda: onlinelearn.ClassDependentPA(n_epochs=1),
        "pa_regressor": lambda: onlinelearn.PassiveAggressiveRegressor(shuffle=False),
        "rls": lambda: onlinelearn.OnlineLeastSquares(alpha=0.5),
    }[name]
    est = make()
    target = X @ np.arange(6.0) if name in ("pa_regressor", "rls") else y
    return est.fit(X, target)


class _State:
    """Something ``save_model`` writes: a given (meta, arrays)."""

    def __init__(self, meta, arrays):
        self.meta, self.arrays = meta, arrays

    def _get_state(self):
        return self.meta, self.arrays


def _save_as_version(est, path, version, monkeypatch):
    """``est`` saved as a development version wrote it: the same file but for its version."""
    with monkeypatch.context() as m:
        m.setattr(model_io, "FORMAT_VERSION", version)
        save_model(est, path)


# ------------------------------------------------------------------ another format version
@pytest.mark.parametrize("name", ["perceptron_average", "kernel_perceptron", "label_ranker"])
def test_a_file_of_version_1_is_refused_in_one_line_before_anything_is_rebuilt(
    name, tmp_path, monkeypatch
):
    path = tmp_path / "model.olm"
    _save_as_version(_fitted(name), path, 1, monkeypatch)
    rebuilt = []
    from onlinelearn.shell import linear_state

    monkeypatch.setattr(linear_state, "estimator_from_state", lambda *a: rebuilt.append(a))
    with pytest.raises(ModelFileError) as info:
        load_model(path)
    assert str(info.value) == (
        f"{path}: model file format_version 1 was written by a development version of "
        f"onlinelearn ({model_io._library_version()}) and is not read by this one; train the "
        "model again and save it"
    )
    assert rebuilt == []  # refused before any estimator was made
    assert FORMAT_VERSION == 2


def test_the_command_line_refuses_a_version_1_file_and_leaves_it_as_it_was(
    tmp_path, monkeypatch, capsys
):
    X, y = _data()
    data = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    path = tmp_path / "model.olm"
    _save_as_version(_fitted("pa_auto_intercept"), path, 1, monkeypatch)
    before = path.read_bytes()
    for argv in (
        ["train", data, "--resume", path, "-m", path, "-q"],
        ["predict", data, "-m", path],
        ["evaluate", data, "-m", path],
    ):
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert "format_version 1" in err and "train the model again" in err
        assert path.read_bytes() == before


# ------------------------------------------------------------------ arrays of another shape
#: (learner, array of the file, its length in the files of a development version)
OLD_ST = [
    ("perceptron_average", "st", 9),  # before the kept dual objective
    ("pa_auto_intercept", "st", 10),  # before the kept PA-II terms
    ("label_ranker", "st", 7),  # before the inexact-step counters
    ("class_dependent", "st", 7),
    ("dual_ascent", "s_st", 11),  # before the squared hinge
    ("kernel_perceptron", "st", 8),  # before the kept dual objective
    ("pa_regressor", "st", 2),  # before the kept dual objective
    ("rls", "st", 2),
    ("arow", "st", 1),
]


@pytest.mark.parametrize("name,array,length", OLD_ST)
def test_a_current_file_with_st_of_another_length_is_refused(name, array, length, tmp_path):
    est = _fitted(name)
    meta, arrays = est._get_state()
    assert arrays[array].shape[0] > length
    arrays = {**arrays, array: np.asarray(arrays[array])[:length]}
    save_model(_State(meta, arrays), tmp_path / "m.olm")
    with pytest.raises(ModelFileError, match=r"cannot rebuild .*: st has shape \(\d+,\)"):
        load_model(tmp_path / "m.olm")


@pytest.mark.parametrize("name", ["perceptron_average", "pa_auto_intercept"])
def test_a_euclidean_average_stored_as_A_and_lastS_is_refused(name, tmp_path):
    """The Euclidean learners keep their average in one array U; the A and lastS of the generic
    pass in their place is another layout, not converted."""
    est = _fitted(name)
    meta, arrays = est._get_state()
    arrays = dict(arrays)
    U = arrays.pop("U")
    arrays["A"], arrays["lastS"] = -U, np.zeros_like(U)
    save_model(_State(meta, arrays), tmp_path / "m.olm")
    with pytest.raises(ModelFileError, match="cannot rebuild .*averag"):
        load_model(tmp_path / "m.olm")


def test_other_links_keep_A_and_lastS(tmp_path):
    """Winnow's average is the generic pass's A and lastS, written and read as such."""
    est = _fitted("winnow_average")
    meta, arrays = est._get_state()
    assert {"A", "lastS"} <= set(arrays) and "U" not in arrays
    save_model(est, tmp_path / "m.olm")
    back = load_model(tmp_path / "m.olm")
    X, _ = _data()
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    arrays = {k: v for k, v in arrays.items() if k not in ("A", "lastS")}
    save_model(_State(meta, {**arrays, "U": est._A}), tmp_path / "u.olm")
    with pytest.raises(ModelFileError, match="cannot rebuild .*averag"):
        load_model(tmp_path / "u.olm")
