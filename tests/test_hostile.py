"""Hostile but realistic use (issue 12): every reproduction of a defect is a test here.

The promises (docs/reliability.md): a rejected call changes nothing; a model file is either the
old one or the new one, never a mix; no input crashes the process.  The property-based fuzzers of
the svmlight reader and of CSR structures are in ``tests/test_hostile_fuzz.py``.
"""

from __future__ import annotations

import bz2
import copy
import gzip
import lzma
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import onlinelearn
from onlinelearn import (
    COPA,
    PassiveAggressiveClassifier,
    Perceptron,
    PNormPerceptron,
    Winnow,
)
from onlinelearn.cli import main
from onlinelearn.model_io import load_model, read_model_file, save_model

SRC = str(Path(onlinelearn.__file__).resolve().parents[1])


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def state_of(est):
    """Everything that defines a fitted linear model, as bytes (bit-identical comparison)."""
    meta, arrays = est._get_state()
    return repr(meta), {k: (v.dtype.str, v.shape, v.tobytes()) for k, v in arrays.items()}


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    X = rng.random((200, 20))
    y = rng.integers(0, 3, 200)
    return X, y


def _fitted(cls=Perceptron, **params):
    rng = np.random.default_rng(1)
    X = rng.random((60, 8))
    y = rng.integers(0, 3, 60)
    return cls(**params).fit(X, y), X, y


# -- item 1: two writers to one model path ---------------------------------------------------


_WRITER = textwrap.dedent(
    """
    import sys
    from onlinelearn.model_io import load_model, save_model
    est = load_model(sys.argv[1])
    for _ in range(int(sys.argv[3])):
        save_model(est, sys.argv[2])
    """
)


def test_two_processes_saving_to_one_path_never_mix(tmp_path):
    """Two processes save different models to one path, many times, while this process reads
    it: every read sees one complete model (one or the other), and the last file is valid."""
    rng = np.random.default_rng(2)
    X = sp.random(50, 30000, density=0.01, random_state=3, format="csr")
    models = []
    for k in range(2):
        est = Perceptron(random_state=k).fit(X, rng.integers(0, 2, 50))
        est._theta += rng.random(est._theta.shape)  # incompressible: a wide race window
        save_model(est, tmp_path / f"src{k}.npz")
        models.append(est.coef_)
    target = tmp_path / "same.npz"
    save_model(load_model(tmp_path / "src0.npz"), target)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path / f"src{k}.npz"), str(target), "5"],
            env=_env(),
        )
        for k in range(2)
    ]
    reads = 0
    while any(p.poll() is None for p in procs):
        coef = load_model(target).coef_  # raises ModelFileError on a mixed or partial file
        assert any(np.array_equal(coef, m) for m in models)
        reads += 1
        time.sleep(0.01)  # leave the cores to the writers
    assert [p.wait() for p in procs] == [0, 0]
    coef = load_model(target).coef_
    assert any(np.array_equal(coef, m) for m in models)
    assert reads >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["same.npz", "src0.npz", "src1.npz"]


# -- item 9: links, modes, fsync, the user's own .tmp, stale temporaries ----------------------


def test_save_keeps_symlink_and_mode_and_users_tmp(tmp_path, monkeypatch):
    est, _, _ = _fitted()
    real = tmp_path / "real.npz"
    save_model(est, real)
    os.chmod(real, 0o600)
    link = tmp_path / "link.npz"
    link.symlink_to(real)
    mine = tmp_path / "link.npz.tmp"
    mine.write_text("my own notes")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    est2 = Perceptron().fit(np.eye(8), np.arange(8) % 2)
    save_model(est2, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600
    assert mine.read_text() == "my own notes"
    assert len(synced) >= 1  # the file (and the directory where the platform allows it)
    np.testing.assert_array_equal(load_model(link).coef_, est2.coef_)


def test_new_file_gets_umask_mode(tmp_path):
    est, _, _ = _fitted()
    old = os.umask(0o027)
    try:
        save_model(est, tmp_path / "m.npz")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "m.npz").st_mode) == 0o640


_KILLED_WRITER = textwrap.dedent(
    """
    import sys, time
    from onlinelearn.shell.atomic import atomic_write
    with atomic_write(sys.argv[1]) as f:
        f.write(b"half a model")
        f.flush()
        print("ready", flush=True)
        time.sleep(60)
    """
)


def test_sigkill_mid_write_keeps_old_model_and_next_save_cleans_up(tmp_path):
    est, _, _ = _fitted()
    path = tmp_path / "m.npz"
    save_model(est, path)
    before = path.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(path)], env=_env(), stdout=subprocess.PIPE
    )
    assert proc.stdout.readline().strip() == b"ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    stale = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1 and stale[0].name.startswith(".m.npz.")
    assert path.read_bytes() == before
    save_model(est, path)  # the writer is dead: its temporary is removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_failed_save_leaves_no_file_and_old_model(tmp_path):
    est, _, _ = _fitted()
    path = tmp_path / "m.npz"
    save_model(est, path)
    before = path.read_bytes()

    class Bad:
        def _get_state(self):
            return {"class": "Perceptron"}, {"x": np.array([object()])}

    with pytest.raises(TypeError):
        save_model(Bad(), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_save_to_missing_directory_names_the_path(tmp_path):
    est, _, _ = _fitted()
    with pytest.raises(FileNotFoundError) as info:
        save_model(est, tmp_path / "no" / "m.npz")
    assert info.value.filename == str(tmp_path / "no" / "m.npz")


# -- items 2 and 3: CSR structure and width --------------------------------------------------


def _broken_csr(kind):
    X = sp.csr_matrix((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), shape=(2, 8))
    if kind == "huge":
        X.indices[1] = 10**8
    elif kind == "negative":
        X.indices[1] = -1
    elif kind == "indptr_decreasing":
        X.indptr[1] = 5
    elif kind == "indptr_past_end":
        X.indptr[2] = 9
    elif kind == "indptr_start":
        X.indptr[0] = 1
    return X


BROKEN = ["huge", "negative", "indptr_decreasing", "indptr_past_end", "indptr_start"]


@pytest.mark.parametrize("kind", BROKEN)
def test_broken_csr_is_refused_by_fit(kind):
    with pytest.raises(ValueError, match="broken CSR matrix"):
        Perceptron().fit(_broken_csr(kind), [0, 1])


@pytest.mark.parametrize("kind", BROKEN)
@pytest.mark.parametrize("cls", [Perceptron, PassiveAggressiveClassifier, Winnow, COPA])
def test_broken_csr_changes_nothing(kind, cls):
    X = sp.csr_matrix(np.eye(8)[:2])
    est = cls().fit(sp.csr_matrix(np.eye(8)), np.arange(8) % 3)
    before = state_of(est)
    for call in (
        lambda: est.partial_fit(_broken_csr(kind), [0, 1]),
        lambda: est.predict(_broken_csr(kind)),
        lambda: est.decision_function(_broken_csr(kind)),
        lambda: est.partial_fit_predict(_broken_csr(kind), [0, 1]),
    ):
        with pytest.raises(ValueError, match="broken CSR matrix"):
            call()
    assert state_of(est) == before
    est.partial_fit(X, [0, 1])  # still usable


def test_broken_csc_and_coo_are_refused():
    Xc = sp.csc_matrix(np.eye(3))
    Xc.indices[0] = 9
    with pytest.raises(ValueError, match="broken CSC matrix: column 0 has row index 9"):
        Perceptron().fit(Xc, [0, 1, 1])
    Xo = sp.coo_matrix(np.eye(3))
    Xo.col[1] = 5
    with pytest.raises(ValueError, match="broken COO matrix"):
        Perceptron().fit(Xo, [0, 1, 1])


def test_unused_storage_past_indptr_end_is_ignored():
    """scipy allows indices/data longer than indptr[-1]; those entries are never read (found
    by the CSR fuzzer: an out-of-range index there broke the roll-back of partial_fit)."""
    est = PassiveAggressiveClassifier(average=True).fit(np.eye(8), np.arange(8) % 3)
    X = sp.csr_matrix((1, 8))
    X.indices = np.array([9], dtype=np.int32)
    X.data = np.array([1.0])
    ref = copy.deepcopy(est).partial_fit(sp.csr_matrix((1, 8)), [0])
    est.partial_fit(X, [0])
    assert state_of(est) == state_of(ref)


def test_wider_than_int32_is_refused_not_cut():
    """W = 2**31 + 10 columns: feature W - 5 would have landed on feature 16."""
    W = 2**31 + 10
    X = sp.csr_matrix(
        (np.ones(2), np.array([16, W - 5], dtype=np.int64), np.array([0, 1, 2])), shape=(2, W)
    )
    with pytest.raises(ValueError, match="at most 2147483646 features"):
        Perceptron().fit(X, [0, 1])
    est, _, _ = _fitted()
    with pytest.raises(ValueError, match="at most 2147483646 features"):
        est.predict(X)


def test_int64_indices_within_range_are_accepted():
    X = sp.csr_matrix(np.eye(4))
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    est = Perceptron().fit(X, [0, 1, 0, 1])
    np.testing.assert_array_equal(
        est.predict(X), Perceptron().fit(np.eye(4), [0, 1, 0, 1]).predict(np.eye(4))
    )


# -- item 4: NaN models ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, scale",
    [
        # seeded: the training order decides how the weights overflow or vanish
        (lambda: PNormPerceptron(p=500, random_state=0), 0.01),
    ],
    ids=["pnorm-p500"],
)
def test_nan_or_vanished_read_out_weights_are_refused(blobs, make, scale):
    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(FloatingPointError, match="read out"):
            make().fit(X * scale, y)
        est = make().fit(X[:3], y[:3])
        before = state_of(est)
        with pytest.raises(FloatingPointError, match="left as it was"):
            est.fit(X * scale, y)  # a failed fit restores the fitted model
    assert state_of(est) == before
    assert np.isfinite(est.coef_).all()


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize(
    "eta, scale", [(1.0, 3000.0), (1e4, 1.0)], ids=["winnow-x3000", "winnow-eta1e4"]
)
def test_unbalanced_winnow_with_huge_steps_stays_exact(blobs, eta, scale, average):
    """Unbalanced Winnow once read out 0/0 here: its exp shift followed max |theta|, so when every
    theta fell far below zero Z underflowed.  The shift is now max theta, and the weights equal
    the reference's stable softmax (tests/reference.py) even with steps of thousands."""
    from reference import link_weights, reference_pass

    X, y = blobs
    X = X * scale
    est = Winnow(balanced=False, eta=eta, average=average).partial_fit(X, y, classes=[0, 1, 2])
    theta, avg, _, n_upd = reference_pass(
        X, y, K=3, link="entropy", step="perceptron", eta=eta, balanced=False
    )
    assert np.abs(theta).max() > 700  # exp(-|theta|) would underflow: the case is hostile
    W = avg if average else link_weights(theta, "entropy", balanced=False)
    assert est.n_updates_ == n_upd
    np.testing.assert_allclose(est.coef_, W[:-1].T, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(est.intercept_, W[-1], rtol=1e-9, atol=1e-300)


# -- item 7: classes in partial_fit ----------------------------------------------------------


@pytest.mark.parametrize(
    "classes, match",
    [
        (["a"], "same kind as y"),
        ([np.nan, 0], "NaN"),
        ([[0, 1]], "1-D"),
        ("01", "string"),
        ([0, "a"], "mixes"),
        ([None], "not class labels|mixes"),
    ],
)
def test_partial_fit_classes_are_validated(blobs, classes, match):
    X, y = blobs
    with pytest.raises(ValueError, match=match):
        Perceptron().partial_fit(X, y, classes=classes)
    est = Perceptron().partial_fit(X[:10], y[:10])
    before = state_of(est)
    with pytest.raises(ValueError, match=match):
        est.partial_fit(X, y, classes=classes)
    assert state_of(est) == before
    assert est.classes_.dtype.kind == "i"


def test_valid_classes_announce_labels(blobs):
    X, y = blobs
    est = Perceptron().partial_fit(X, y, classes=[0, 1, 2, 7])
    np.testing.assert_array_equal(est.classes_, [0, 1, 2, 7])


# -- item 8: degenerate learning -------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: PassiveAggressiveClassifier(variant="PA"),
        lambda: PassiveAggressiveClassifier(variant="PA-I"),
        lambda: PassiveAggressiveClassifier(variant="PA-II"),
        lambda: COPA(),
    ],
    ids=["PA", "PA-I", "PA-II", "COPA"],
)
def test_aggressive_step_with_overflowing_norm_is_refused(blobs, make):
    X, y = blobs
    with pytest.raises(ValueError, match="squared norm that overflows"):
        make().fit(X * 1e160, y)
    est = make().fit(X, y)
    before = state_of(est)
    with pytest.raises(ValueError, match="left as it was"):
        est.partial_fit(X * 1e160, y)
    assert state_of(est) == before


def test_zero_rows_without_intercept_are_not_degenerate():
    X = np.vstack([np.zeros((3, 4)), np.eye(4)])
    est = PassiveAggressiveClassifier(fit_intercept=False).fit(X, [0, 1, 0, 1, 0, 1, 0])
    assert est.n_updates_ > 0


@pytest.mark.parametrize(
    "class_weight, match",
    [({"1": 2.0}, "is a string but the class labels are numbers"), ({None: 1}, "not a class")],
)
def test_class_weight_keys_of_the_wrong_type(blobs, class_weight, match):
    X, y = blobs
    with pytest.raises(ValueError, match=match):
        Perceptron(class_weight=class_weight).fit(X, y)


def test_class_weight_for_labels_still_to_come_is_fine(blobs):
    X, y = blobs
    est = Perceptron(class_weight={0: 2.0, 9: 3.0}).fit(X, y)
    assert est.n_updates_ > 0


def test_label_lists_mixing_numbers_and_strings(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="mixes label types"):
        Perceptron().fit(X[:4], [1, "a", 1, "a"])


def test_huge_integer_labels_stay_exact(blobs):
    X, _ = blobs
    y = np.array([2**63 - 1, -(2**63)] * 5, dtype=np.int64)
    est = Perceptron().fit(X[:10], y)
    assert set(est.predict(X[:10]).tolist()) <= {2**63 - 1, -(2**63)}
    np.testing.assert_array_equal(est.classes_, [-(2**63), 2**63 - 1])


def test_label_beyond_2_53_in_a_file_is_refused(tmp_path, capsys):
    from onlinelearn.io import load_svmlight

    data = tmp_path / "labels.svm"
    data.write_text("1 1:1\n9223372036854775807 2:1\n")
    with pytest.raises(ValueError, match="line 2: label .* beyond 2\\*\\*53"):
        load_svmlight(data, n_features=2)
    X, y = load_svmlight(data, n_features=2, label_dtype=None)
    assert y[1] == 2.0**63
    code, out, err = _cli(["train", data, "-m", tmp_path / "m.npz", "-q"], capsys)
    assert code == 2 and "line 2" in err and not (tmp_path / "m.npz").exists()


def test_predict_on_overflowing_rows_is_refused(blobs):
    X, y = blobs
    est = Perceptron().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="decision values of row 0 are not finite"):
            est.predict(X * 1e308)


# -- item 9: numba cache without a writable directory ----------------------------------------


def test_no_writable_numba_cache_falls_back_to_compiling():
    code = textwrap.dedent(
        """
        import numba.core.caching as c
        c.CacheImpl._locator_classes = []  # as if no directory were writable
        import onlinelearn  # every kernel is declared with cache=True at import
        from onlinelearn._core.config import njit
        print(njit(lambda x: x + 1.0)(0.5))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.5"


# -- items 5, 6 and 9 on the command line ----------------------------------------------------


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def svm_text():
    rng = np.random.default_rng(4)
    lines = [
        f"{rng.integers(0, 3)} 1:{rng.random():.6f} 4:{rng.random():.6f} 7:{rng.random():.6f}\n"
        for _ in range(3000)
    ]
    return "".join(lines).encode()


@pytest.mark.parametrize("opener", [gzip.open, bz2.open, lzma.open], ids=["gz", "bz2", "xz"])
@pytest.mark.parametrize("scan", [False, True], ids=["n-features", "scan"])
def test_cli_truncated_compressed_file(tmp_path, capsys, svm_text, opener, scan):
    full = tmp_path / "full"
    with opener(full, "wb") as f:
        f.write(svm_text)
    raw = full.read_bytes()
    cut = tmp_path / "cut.svm"
    cut.write_bytes(raw[: len(raw) // 2])
    model = tmp_path / "m.npz"
    argv = ["train", cut, "-m", model, "-q"] + ([] if scan else ["--n-features", 7])
    code, out, err = _cli(argv, capsys)
    assert code == 2
    assert err.count("\n") == 1 and str(cut) in err and "truncated" in err
    assert ("line" in err) or scan
    assert not model.exists()


def test_cli_index_beyond_int32(tmp_path, capsys):
    data = tmp_path / "big.svm"
    data.write_text("1 1:0.5\n0 2:1\n1 1:0.5 2147483648:1\n")
    for extra in ([], ["--n-features", 7]):
        code, out, err = _cli(["train", data, "-m", tmp_path / "m.npz", "-q", *extra], capsys)
        assert code == 2 and err.count("\n") == 1 and str(data) in err, err
        assert "line 3" in err or "larger than 2147483646" in err
    code, out, err = _cli(
        ["train", data, "-m", tmp_path / "m.npz", "-q", "--n-features", 2**31 + 5], capsys
    )
    assert code == 2 and "larger than 2147483646" in err


def test_cli_pnorm_on_huge_values_names_file_and_lines(tmp_path, capsys):
    data = tmp_path / "huge.svm"
    data.write_text("".join(f"{i % 3} 1:{(i + 1) * 1e200:g} 3:0.5\n" for i in range(50)))
    code, out, err = _cli(
        ["train", data, "-m", tmp_path / "m.npz", "-q", "--learner", "pnorm", "--chunk-size", 20],
        capsys,
    )
    assert code == 2 and err.count("\n") == 1
    assert f"{data}: lines 1-20:" in err and "infinite or NaN" in err
    assert not (tmp_path / "m.npz").exists()


def test_cli_unexpected_error_is_one_line(tmp_path, capsys, monkeypatch):
    import onlinelearn.cli as cli

    def boom(args):
        raise KeyError("surprise")

    monkeypatch.setattr(cli, "_cmd_predict", boom)
    code, out, err = _cli(["predict", tmp_path / "x", "-m", tmp_path / "m"], capsys)
    assert code == 1 and err.count("\n") == 1 and "internal error: KeyError" in err


@pytest.fixture()
def trained(tmp_path, svm_text):
    data = tmp_path / "train.svm"
    data.write_bytes(svm_text)
    model = tmp_path / "m.npz"
    assert main(["train", str(data), "-m", str(model), "-q", "--n-features", "7"]) == 0
    return data, model


def test_predict_output_is_atomic(tmp_path, capsys, trained, svm_text):
    data, model = trained
    bad = tmp_path / "bad.svm"
    bad.write_bytes(svm_text * 5 + b"1 1:oops\n")  # fails at line 15001
    out_file = tmp_path / "pred.txt"
    out_file.write_text("previous predictions\n")
    code, out, err = _cli(["predict", bad, "-m", model, "-o", out_file], capsys)
    assert code == 2 and "line 15001" in err
    assert out_file.read_text() == "previous predictions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["bad.svm", "m.npz", "pred.txt", "train.svm"]
    )
    code, out, err = _cli(["predict", data, "-m", model, "-o", out_file], capsys)
    assert code == 0 and len(out_file.read_text().splitlines()) == 3000


@pytest.mark.parametrize("target", ["data", "model"])
def test_predict_output_equal_to_an_input_is_refused(tmp_path, capsys, trained, target):
    data, model = trained
    victim = data if target == "data" else model
    before = victim.read_bytes()
    code, out, err = _cli(["predict", data, "-m", model, "-o", victim], capsys)
    assert code == 2 and "write the predictions elsewhere" in err
    assert victim.read_bytes() == before


def test_train_refuses_unwritable_model_before_the_pass(tmp_path, capsys):
    data = tmp_path / "bad.svm"
    data.write_text("1 1:x\n")  # the pass would fail on line 1: the -m check must come first
    code, out, err = _cli(["train", data, "-m", tmp_path / "nodir" / "m.npz", "-q"], capsys)
    assert code == 2 and "nodir" in err and "No such file or directory" in err
    (tmp_path / "adir").mkdir()
    code, out, err = _cli(["train", data, "-m", tmp_path / "adir", "-q"], capsys)
    assert code == 2 and "directory" in err


def test_train_warns_or_refuses_absurd_n_features(tmp_path, capsys, monkeypatch):
    import onlinelearn.cli._loop as cli

    data = tmp_path / "tiny.svm"
    data.write_text("1 1:1\n0 2:1\n1 3:1\n0 4:1\n")
    model = tmp_path / "m.npz"
    monkeypatch.setattr(cli, "_WARN_MODEL_BYTES", 1000)
    code, out, err = _cli(["train", data, "-m", model, "-q", "--n-features", 500], capsys)
    assert code == 0 and "warning: --n-features 500 needs" in err
    monkeypatch.setattr(os, "sysconf", lambda name: 64)  # a machine of 64 x 64 bytes
    code, out, err = _cli(["train", data, "-m", model, "-q", "--n-features", 5000], capsys)
    assert code == 2 and "more than this machine's" in err


def test_text_mode_file_object_is_refused_clearly(tmp_path, svm_text):
    from onlinelearn.io import iter_svmlight_chunks

    path = tmp_path / "t.svm"
    path.write_bytes(svm_text)
    with open(path) as f, pytest.raises(TypeError, match="binary mode"):
        next(iter(iter_svmlight_chunks(f, n_features=7)))
    est, _, _ = _fitted()
    with open(tmp_path / "m.npz", "w") as f, pytest.raises(TypeError, match="path"):
        save_model(est, f)


def test_read_model_file_after_concurrent_saves_has_no_leftovers(tmp_path):
    est, _, _ = _fitted()
    for _ in range(3):
        save_model(est, tmp_path / "m.npz")
    meta, arrays, header = read_model_file(tmp_path / "m.npz")
    assert meta["class"] == "Perceptron"
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


_AVERAGE_SWITCH = r"""
import numpy as np, scipy.sparse as sp
from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, Winnow
rng = np.random.default_rng(0)
X = np.abs(rng.normal(size=(60, 5))); y = rng.integers(0, 3, 60)
for make in (Perceptron, PassiveAggressiveClassifier, COPA, Winnow):
    for data in (X, sp.csr_matrix(X)):
        est = make(average=False).fit(data, y)
        before = {k: v.copy() for k, v in est.__dict__.items() if isinstance(v, np.ndarray)}
        est.set_params(average=True)
        for call in (lambda: est.partial_fit(data, y), lambda: est.predict(data)):
            try:
                call()
            except ValueError as exc:
                assert "learned with average=False" in str(exc), exc
            else:
                raise AssertionError(f"{make.__name__}: no error")
        for k, v in before.items():
            same = np.array_equal(est.__dict__[k], v, equal_nan=v.dtype.kind == "f")
            assert same, (make.__name__, k)
        est.set_params(average=False).partial_fit(data, y)  # switched back: learns on
print("ok")
"""


def test_switching_average_on_after_learning_without_it_is_refused_not_a_crash():
    """A model learned with average=False has no averaging arrays: average=True then is a
    clear ValueError on partial_fit and predict, the model unchanged (it wrote out of
    bounds before: "free(): invalid next size"). In a child process, so a crash fails."""
    out = subprocess.run([sys.executable, "-c", _AVERAGE_SWITCH], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-2000:])
