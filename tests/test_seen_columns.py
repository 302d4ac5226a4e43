"""SeenColumns (storage only for the columns seen) gives the wide learner's results bit for bit,
keeps them through model files and the command line, and refuses bad input and bad files."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, Winnow
from onlinelearn import seen_columns as SC
from onlinelearn.cli import main
from onlinelearn.model_io import ModelFileError, load_model, save_model
from onlinelearn.seen_columns import SeenColumns

WIDTH = 2**16


def _rows(rng, n, n_classes, width=WIDTH, vocab=3000, dtype=np.float64):
    """Sparse rows over a wide index space: each class prefers a few columns of a vocabulary
    scattered over ``width`` (so every chunk brings new columns), duplicates left in."""
    cols = rng.choice(width, size=vocab, replace=False)
    y = rng.integers(0, n_classes, size=n)
    indptr, indices, data = [0], [], []
    for label in y:
        k = int(rng.integers(3, 12))
        pick = np.concatenate([rng.integers(0, vocab, size=k),
                               label * 7 + rng.integers(0, 7, size=3)])  # fmt: skip
        indices.extend(cols[pick % vocab].tolist())
        data.extend(rng.normal(size=len(pick)).tolist())
        indptr.append(len(indices))
    X = sp.csr_matrix((np.asarray(data, dtype=dtype), indices, indptr), shape=(n, width))
    return X, y + 1


LEARNERS = [
    lambda: Perceptron(),
    lambda: Perceptron(average=False),
    lambda: PassiveAggressiveClassifier(variant="PA"),
    lambda: PassiveAggressiveClassifier(variant="PA-I", C=0.5),
    lambda: PassiveAggressiveClassifier(variant="PA-II", average=False, class_weight="balanced"),
    lambda: PassiveAggressiveClassifier(variant="PA-I", dtype="float32", fit_intercept=False),
    lambda: COPA(C=1.0),
]


def _same(wide, seen, X):
    np.testing.assert_array_equal(seen.coef_.toarray(), wide.coef_)
    np.testing.assert_array_equal(seen.intercept_, wide.intercept_)
    np.testing.assert_array_equal(seen.classes_, wide.classes_)
    np.testing.assert_array_equal(seen.decision_function(X), wide.decision_function(X))
    np.testing.assert_array_equal(seen.predict(X), wide.predict(X))


@pytest.mark.parametrize("make", LEARNERS)
@pytest.mark.parametrize("n_classes", [2, 5])
def test_stream_equals_the_wide_learner(make, n_classes, monkeypatch):
    monkeypatch.setattr(SC, "MIN_CAPACITY", 64)  # several widenings in the stream
    rng = np.random.default_rng(n_classes)
    X, y = _rows(rng, 900, n_classes)
    Xt, _ = _rows(rng, 200, n_classes)  # mostly columns never seen in training
    wide, seen = make(), SeenColumns(make(), WIDTH)
    widths = set()
    edges = [0, 10, 40, 100, 220, 460, 900]  # growing chunks: each brings many new columns
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        chunk = slice(lo, hi)
        np.testing.assert_array_equal(
            seen.partial_fit_predict(X[chunk], y[chunk]),
            wide.partial_fit_predict(X[chunk], y[chunk]),
        )
        widths.add(seen.estimator_.n_features_in_)
    assert len(widths) > 2  # the state grew
    assert seen.n_features_in_ == WIDTH
    assert seen.estimator_.n_features_in_ < WIDTH // 8
    _same(wide, seen, Xt)
    _same(wide, seen, X)
    # the map: each wide column once, in order of first appearance
    first = np.unique(X.indices, return_index=True)
    expected = first[0][np.argsort(first[1])]
    assert set(seen.columns_.tolist()) == set(expected.tolist())


def test_probabilities_across_widenings(monkeypatch):
    monkeypatch.setattr(SC, "MIN_CAPACITY", 32)
    X, y = _rows(np.random.default_rng(1), 2000, 4)
    wide = PassiveAggressiveClassifier(variant="PA-I")
    seen = SeenColumns(PassiveAggressiveClassifier(variant="PA-I"), WIDTH)
    widths = set()
    for lo in range(0, 2000, 250):  # (probabilities read at the end: the solver warm-starts)
        wide.partial_fit(X[lo : lo + 250], y[lo : lo + 250])
        seen.partial_fit(X[lo : lo + 250], y[lo : lo + 250])
        widths.add(seen.estimator_.n_features_in_)
    assert len(widths) > 1
    np.testing.assert_array_equal(seen.predict_proba(X), wide.predict_proba(X))


def test_labels_that_arrive_later_and_fit(monkeypatch):
    """A binary model meets a third label (its columns split) and ``fit`` with epochs."""
    monkeypatch.setattr(SC, "MIN_CAPACITY", 16)
    rng = np.random.default_rng(3)
    X, y = _rows(rng, 600, 3)
    order = np.argsort(y == 3, kind="stable")  # label 3 only at the end
    X, y = X[order], y[order]
    wide = PassiveAggressiveClassifier(variant="PA-I")
    seen = SeenColumns(PassiveAggressiveClassifier(variant="PA-I"), WIDTH)
    for lo in range(0, 600, 100):
        wide.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
        seen.partial_fit(X[lo : lo + 100], y[lo : lo + 100])
    _same(wide, seen, X)
    wide = Perceptron(n_epochs=3, shuffle=True, random_state=1).fit(X, y)
    seen = SeenColumns(Perceptron(n_epochs=3, shuffle=True, random_state=1), WIDTH).fit(X, y)
    _same(wide, seen, X)


def test_one_row_calls_and_dense_input():
    rng = np.random.default_rng(4)
    X, y = _rows(rng, 40, 3, width=500, vocab=300)
    wide, seen = Perceptron(), SeenColumns(Perceptron(), 500)
    for i in range(40):  # the one-event road of partial_fit
        wide.partial_fit(X[i], y[i : i + 1])
        seen.partial_fit(X[i].toarray(), y[i : i + 1])
    _same(wide, seen, X)


def test_model_file_round_trip_and_resume(tmp_path):
    rng = np.random.default_rng(5)
    X, y = _rows(rng, 600, 4)
    wide = PassiveAggressiveClassifier(variant="PA-I")
    seen = SeenColumns(PassiveAggressiveClassifier(variant="PA-I"), WIDTH)
    wide.partial_fit(X[:300], y[:300])
    seen.partial_fit(X[:300], y[:300])
    path = tmp_path / "m.npz"
    save_model(seen, path)
    back = load_model(path)
    assert isinstance(back, SeenColumns)
    assert back.estimator_.n_features_in_ == len(seen.columns_)  # cut to the columns seen
    np.testing.assert_array_equal(back.columns_, seen.columns_)
    _same(wide, back, X)
    np.testing.assert_array_equal(back.partial_fit_predict(X[300:], y[300:]),
                                  wide.partial_fit_predict(X[300:], y[300:]))  # fmt: skip
    _same(wide, back, X)


def test_rejected_call_changes_nothing():
    rng = np.random.default_rng(6)
    X, y = _rows(rng, 300, 3)
    wide = Perceptron().partial_fit(X[:100], y[:100])
    seen = SeenColumns(Perceptron(), WIDTH).partial_fit(X[:100], y[:100])
    n_seen, coef = len(seen.columns_), seen.coef_.toarray()
    bad = X[100:200].copy()
    bad.data[-1] = np.nan  # the last row's last column: new columns come before it
    with pytest.raises(ValueError, match="NaN"):
        seen.partial_fit(bad, y[100:200])
    assert len(seen.columns_) == n_seen
    np.testing.assert_array_equal(seen.coef_.toarray(), coef)
    with pytest.raises(ValueError, match="expecting 65536 features"):
        seen.partial_fit(X[:, :100], y)
    seen.partial_fit(X[100:], y[100:])
    wide.partial_fit(X[100:], y[100:])
    _same(wide, seen, X)


def test_learners_that_read_every_weight_are_refused():
    from sklearn.exceptions import NotFittedError

    X, y = _rows(np.random.default_rng(7), 20, 2)
    with pytest.raises(NotFittedError):
        SeenColumns(Perceptron(), WIDTH).predict(X)
    assert not SeenColumns.supports(Winnow())
    with pytest.raises(ValueError, match="Euclidean online linear classifier"):
        SeenColumns(Winnow(), WIDTH).partial_fit(X, y)
    with pytest.raises(ValueError, match="n_features must be"):
        SeenColumns(Perceptron(), 0).partial_fit(X, y)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda cols: cols.__setitem__(1, cols[0]), "appears twice"),
        (lambda cols: cols.__setitem__(0, WIDTH), "outside"),
    ],
)
def test_a_corrupted_map_is_refused(tmp_path, edit, message):
    X, y = _rows(np.random.default_rng(8), 50, 3)
    seen = SeenColumns(Perceptron(), WIDTH).partial_fit(X, y)
    edit(seen._map.cols)  # saved with a valid checksum, as a writer's bug would
    path = tmp_path / "bad.npz"
    save_model(seen, path)
    with pytest.raises(ModelFileError, match=message) as info:
        load_model(path)
    assert "\n" not in str(info.value)


def test_the_table_grows_and_maps_back():
    m = SC._ColumnMap()
    keys = np.random.default_rng(9).choice(2**40, size=5000, replace=False)
    out = m.lookup(np.repeat(keys, 2), add=True)
    np.testing.assert_array_equal(out, np.repeat(np.arange(5000), 2))
    np.testing.assert_array_equal(m.columns, keys)
    np.testing.assert_array_equal(m.lookup(np.array([keys[7], 2**41]), add=False), [7, -1])
    m.truncate(10)
    np.testing.assert_array_equal(m.lookup(keys[:12], add=False), [*range(10), -1, -1])


# -- the command line ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vw_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(400):
        y = int(rng.integers(1, 5))
        words = " ".join(f"w{y}_{rng.integers(9)}" for _ in range(5))
        noise = " ".join(f"n{rng.integers(300)}:{rng.integers(1, 4)}" for _ in range(4))
        lines.append(f"{y} |t {words} |u {noise}")
    path = tmp_path_factory.mktemp("vw") / "d.vw"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("learner", ["pa1", "perceptron", "copa"])
def test_cli_train_predict_evaluate_resume(vw_file, tmp_path, capsys, learner):
    from onlinelearn.cli._learners import _make_learner
    from onlinelearn.io.vw import iter_vw_chunks, load_vw

    model = tmp_path / "m.npz"
    argv = ["train", str(vw_file), "--format", "vw", "--bits", "20", "--learner", learner,
            "--chunk-size", "60", "-m", str(model), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    est = load_model(model)
    assert isinstance(est, SeenColumns) and est.n_features_in_ == 2**20
    ref = _make_learner(learner)
    with iter_vw_chunks(vw_file, chunk_size=60, n_bits=20) as reader:
        for X, y in reader:
            ref.partial_fit_predict(X, y)
    X, y = load_vw(vw_file, n_bits=20)
    _same(ref, est, X)
    out = tmp_path / "pred.txt"
    assert main(["predict", str(vw_file), "-m", str(model), "--format", "vw", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.loadtxt(out, dtype=np.int64), ref.predict(X))
    capsys.readouterr()
    assert main(["evaluate", str(vw_file), "-m", str(model), "--format", "vw"]) == 0
    acc = float(capsys.readouterr().out.split("accuracy:")[1].split()[0])
    assert acc == pytest.approx(np.mean(ref.predict(X) == y))
    # a second pass continued from the file: the same as the Python learner's second pass
    assert main(["train", str(vw_file), "--format", "vw", "--resume", str(model),
                 "--chunk-size", "60", "--quiet"]) == 0  # fmt: skip
    with iter_vw_chunks(vw_file, chunk_size=60, n_bits=20) as reader:
        for X2, y2 in reader:
            ref.partial_fit_predict(X2, y2)
    _same(ref, load_model(model), X)


def test_cli_refuses_a_corrupted_map(vw_file, tmp_path, capsys):
    model = tmp_path / "m.npz"
    assert main(["train", str(vw_file), "--format", "vw", "--bits", "16", "-m", str(model),
                 "--learner", "pa1", "--quiet"]) == 0  # fmt: skip
    est = load_model(model)
    est._map.cols[2] = est._map.cols[3]
    save_model(est, model)
    capsys.readouterr()
    assert main(["predict", str(vw_file), "-m", str(model), "--format", "vw"]) == 2
    err = capsys.readouterr().err.strip()
    assert "appears twice" in err and "\n" not in err
