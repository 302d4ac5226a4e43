"""Iterative parameter mixing on a Dask LocalCluster (2 worker processes), against the same
mixing run in this process (onlinelearn.distributed.mix_in_process): equal bit for bit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import onlinelearn
from onlinelearn import (
    COPA,
    PassiveAggressiveClassifier,
    Perceptron,
    PNormPerceptron,
    Winnow,
    merge_models,
)
from onlinelearn.datasets import load_dna
from onlinelearn.distributed import ParameterMixing, mix_in_process, require_dask
from onlinelearn.io import dump_svmlight, load_svmlight

try:
    import dask.array as da
    import distributed
except ImportError:  # the [dist] extra is not installed: skip here, fail on CI
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        raise
    pytest.skip("dask is not installed: pip install 'onlinelearn[dist]'", allow_module_level=True)

SRC = str(Path(onlinelearn.__file__).resolve().parents[1])


@pytest.fixture(scope="module")
def client():
    """One cluster for the module: 2 worker processes of one thread each."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = SRC + (os.pathsep + old if old else "")  # workers import us
    try:
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        )
        c = distributed.Client(cluster)
        yield c
        c.close()
        cluster.close()
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def dna():
    X, y = load_dna("train")
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.ascontiguousarray(X[:600]), y[:600]


def _state(est):
    meta, arrays = est._get_state()
    return repr(meta), {k: (v.dtype.str, v.tobytes()) for k, v in arrays.items()}


def _shards(X, y, rows):
    return [(X[i : i + rows], y[i : i + rows]) for i in range(0, len(y), rows)]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Perceptron(),
        lambda: PassiveAggressiveClassifier(C=0.1, average=True),
        lambda: Winnow(average=True),
        lambda: PNormPerceptron(),
        lambda: COPA(C=0.1),
    ],
    ids=["perceptron", "pa1-avg", "winnow-avg", "pnorm", "copa"],
)
def test_cluster_equals_in_process_mixing(client, dna, make):
    X, y = dna
    pm = ParameterMixing(make(), n_epochs=3, client=client)
    pm.fit(da.from_array(X, chunks=(200, 60)), da.from_array(y, chunks=100))
    ref = mix_in_process(make(), _shards(X, y, 200), n_epochs=3)
    assert _state(pm.estimator_) == _state(ref)
    assert len(pm.history_) == 3 and len(pm.history_[0]["rows"]) == 3
    assert pm.estimator_.t_ == 3 * len(y)
    assert sum(sum(h["updates"]) for h in pm.history_) == pm.estimator_.n_updates_
    Xt, yt = load_dna("test")
    assert pm.score(Xt, yt) == ref.score(Xt, yt) > 0.5
    np.testing.assert_array_equal(pm.coef_, ref.coef_)
    np.testing.assert_array_equal(pm.predict(Xt), ref.predict(Xt))


def test_one_shot_mixture_is_merge_models_of_independent_shards(dna):
    X, y = dna
    shards = _shards(X, y, 300)
    one_shot = mix_in_process(Perceptron(), shards, n_epochs=1)
    alone = [Perceptron().partial_fit(Xs, ys) for Xs, ys in shards]
    assert _state(one_shot) == _state(merge_models(alone))


def test_mixture_weights_are_this_epochs_updates(dna):
    """mu_{i,n} = k_{i,n} / k_n: the second epoch's mixture from its own update counts."""
    X, y = dna
    shards = _shards(X, y, 300)
    first = mix_in_process(Perceptron(), shards, n_epochs=1)
    models = [Perceptron().partial_fit(Xs, ys) for Xs, ys in shards]
    models = [__import__("copy").deepcopy(first).partial_fit(Xs, ys) for Xs, ys in shards]
    k = np.array([m.n_updates_ - first.n_updates_ for m in models], dtype=float)
    expected = sum(ki / k.sum() * m.coef_ for ki, m in zip(k, models, strict=True))
    second = mix_in_process(Perceptron(), shards, n_epochs=2)
    np.testing.assert_allclose(second.coef_, expected, rtol=1e-12, atol=1e-12)
    assert second.t_ == 2 * len(y) and second.n_updates_ == first.n_updates_ + k.sum()


def test_label_sets_that_differ_between_shards(client):
    rng = np.random.default_rng(0)
    X = rng.random((120, 6))
    y = np.where(np.arange(120) < 60, rng.integers(0, 2, 120), rng.integers(1, 3, 120))
    pm = ParameterMixing(PassiveAggressiveClassifier(average=True), n_epochs=2, client=client)
    pm.fit(da.from_array(X, chunks=(60, 6)), da.from_array(y, chunks=60))
    np.testing.assert_array_equal(pm.classes_, [0, 1, 2])
    ref = mix_in_process(PassiveAggressiveClassifier(average=True), _shards(X, y, 60), 2)
    assert _state(pm.estimator_) == _state(ref)


def test_svmlight_files_as_shards(client, dna, tmp_path):
    X, y = dna
    paths = []
    for i, (Xs, ys) in enumerate(_shards(X, y, 250)):
        paths.append(tmp_path / f"part{i}.svm")
        dump_svmlight(Xs, ys, paths[-1])
    pm = ParameterMixing(Perceptron(average=True), n_epochs=2, client=client, n_features=180)
    pm.fit(paths)
    shards = [load_svmlight(p, n_features=180) for p in paths]
    assert _state(pm.estimator_) == _state(mix_in_process(Perceptron(average=True), shards, 2))
    # without n_features: the widest file, scanned on the workers
    assert ParameterMixing(Perceptron(), client=client).fit(paths).n_features_in_ <= 180


def test_a_shard_failing_mid_file_raises_and_keeps_nothing(client, dna, tmp_path, capsys):
    from onlinelearn.cli import main

    X, y = dna
    good, bad = tmp_path / "good.svm", tmp_path / "bad.svm"
    dump_svmlight(X[:100], y[:100], good)
    dump_svmlight(X[100:200], y[100:200], bad)
    with open(bad, "ab") as f:
        f.write(b"1 3:0.5 2:oops\n")
    pm = ParameterMixing(Perceptron(), n_epochs=2, client=client, n_features=180)
    with pytest.raises(ValueError, match="line 101"):
        pm.fit([good, bad])
    assert not hasattr(pm, "estimator_")
    model = tmp_path / "m.npz"
    address = client.scheduler.address
    argv = ["train", good, bad, "-m", model, "--scheduler", address, "--n-features", 180, "-q"]
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and "bad.svm" in err and "line 101" in err and err.count("\n") == 1
    assert not model.exists()


def test_cli_scheduler_trains_the_mixture(client, dna, tmp_path, capsys):
    from onlinelearn.cli import main
    from onlinelearn.model_io import load_model

    X, y = dna
    paths = []
    for i, (Xs, ys) in enumerate(_shards(X, y, 300)):
        paths.append(tmp_path / f"p{i}.svm")
        dump_svmlight(Xs, ys, paths[-1])
    model = tmp_path / "m.npz"
    argv = ["train", *paths, "-m", model, "--scheduler", client.scheduler.address]
    argv += ["--epochs", 2, "--learner", "pa1", "--n-features", 180]
    code = main([str(a) for a in argv])
    out = capsys.readouterr().out
    assert code == 0 and "epoch 2:" in out
    shards = [load_svmlight(p, n_features=180) for p in paths]
    ref = mix_in_process(PassiveAggressiveClassifier(variant="PA-I"), shards, 2)  # CLI default
    assert _state(load_model(model)) == _state(ref)


def test_bad_arguments(client, dna):
    X, y = dna
    with pytest.raises(TypeError, match="dask array or a list of svmlight files"):
        ParameterMixing(Perceptron(), client=client).fit(X, y)
    with pytest.raises(ValueError, match="y is required"):
        ParameterMixing(Perceptron(), client=client).fit(da.from_array(X))
    with pytest.raises(ValueError, match="n_epochs"):
        ParameterMixing(Perceptron(), n_epochs=0, client=client).fit(da.from_array(X), y)


def test_clear_error_without_dask(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'onlinelearn\[dist\]'"):
        require_dask()
    with pytest.raises(ImportError, match="onlinelearn"):
        ParameterMixing(Perceptron()).fit([])


class _DiesOnce(Perceptron):
    """A Perceptron whose first pass kills its worker process (as a crash or an OOM kill
    would); later passes, on the restarted or the other worker, run normally."""

    def __init__(self, marker="", **params):
        super().__init__(**params)
        self.marker = marker

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        if self.marker and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os._exit(1)
        return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)


def test_worker_lost_during_an_epoch_is_retried_with_the_same_result(client, dna, tmp_path):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    X, y = dna
    marker = tmp_path / "died"
    pm = ParameterMixing(_DiesOnce(marker=str(marker)), n_epochs=2, client=client)
    pm.fit(da.from_array(X, chunks=(300, 60)), da.from_array(y, chunks=300))
    assert marker.exists()  # a worker did die
    ref = mix_in_process(Perceptron(), _shards(X, y, 300), n_epochs=2)
    np.testing.assert_array_equal(pm.coef_, ref.coef_)
    assert pm.estimator_.t_ == ref.t_ and pm.estimator_.n_updates_ == ref.n_updates_
    client.wait_for_workers(2, timeout=60)


def test_package_imports_without_dask():
    import subprocess

    code = (
        "import sys\n"
        "sys.modules['dask'] = sys.modules['distributed'] = None  # as if not installed\n"
        "import onlinelearn, onlinelearn.distributed, onlinelearn.cli\n"
        "from onlinelearn.distributed import ParameterMixing\n"
        "try:\n"
        "    ParameterMixing(onlinelearn.Perceptron()).fit(['x.svm'])\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "pip install 'onlinelearn[dist]'" in out.stdout
