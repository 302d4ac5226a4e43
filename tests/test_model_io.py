"""Tests of onlinelearn.model_io: pickle-free model files, round trips and corruption detection."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import onlinelearn
from onlinelearn import model_io
from onlinelearn.datasets import load_dna
from onlinelearn.model_io import FORMAT_VERSION, ModelFileError, load_model, save_model


@pytest.fixture(scope="module")
def dna():
    X, y = load_dna("train")
    return X, y


def _learners():
    return [
        onlinelearn.Perceptron(),
        onlinelearn.Perceptron(average=True, random_state=3),
        onlinelearn.PassiveAggressiveClassifier(variant="PA-II", C=0.3),
        onlinelearn.PassiveAggressiveClassifier(class_weight={1: 2.0, 2: 1.0, 3: 0.5}),
        onlinelearn.Winnow(eta=0.2),
        onlinelearn.PNormPerceptron(p=3.0, average=True),
        *(
            [onlinelearn.COPA(C=0.5), onlinelearn.COPA(class_weight="confusion", average=True)]
            if hasattr(onlinelearn, "COPA")
            else []
        ),
    ]


@pytest.mark.parametrize("est", _learners(), ids=lambda e: repr(e))
def test_round_trip_predicts_and_continues_identically(tmp_path, dna, est):
    X, y = dna
    est.partial_fit(X[:600], y[:600], classes=np.array([1, 2, 3]))
    path = tmp_path / "model.npz"
    save_model(est, path)
    loaded = load_model(path)
    assert type(loaded) is type(est)
    assert loaded.get_params() == est.get_params()
    np.testing.assert_array_equal(loaded.classes_, est.classes_)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))
    np.testing.assert_array_equal(loaded.coef_, est.coef_)
    np.testing.assert_array_equal(loaded.intercept_, est.intercept_)
    assert (loaded.t_, loaded.n_updates_, loaded.n_mistakes_) == (
        est.t_,
        est.n_updates_,
        est.n_mistakes_,
    )
    # continue learning on both: identical progressive predictions and final weights
    p1 = est.partial_fit_predict(X[600:1400], y[600:1400])
    p2 = loaded.partial_fit_predict(X[600:1400], y[600:1400])
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(loaded.coef_, est.coef_)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def test_round_trip_binary_and_new_label_after_loading(tmp_path, dna):
    X, y = dna
    mask = y != 3
    est = onlinelearn.Perceptron().partial_fit(X[mask][:300], y[mask][:300])
    save_model(est, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    # label 3 appears only after loading: both copies grow their label set the same way
    est.partial_fit(X[:200], y[:200])
    loaded.partial_fit(X[:200], y[:200])
    np.testing.assert_array_equal(loaded.classes_, [1, 2, 3])
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))


def test_save_writes_exactly_the_given_path_and_no_pickle(tmp_path, dna):
    X, y = dna
    est = onlinelearn.Perceptron().partial_fit(X[:100], y[:100])
    path = tmp_path / "model.bin"  # numpy would append .npz; we must not
    save_model(est, path)
    assert path.is_file() and not (tmp_path / "model.bin.npz").exists()
    assert not (tmp_path / "model.bin.tmp").exists()
    with np.load(path, allow_pickle=False) as npz:  # loads without pickle
        header = json.loads(npz["__header__"].tobytes())
        assert all(npz[k].dtype != object for k in npz.files)
    assert header["magic"] == "onlinelearn-model"
    assert header["format_version"] == FORMAT_VERSION == 2
    assert header["meta"]["class"] == "Perceptron"
    assert isinstance(header["library_version"], str)


def test_unfitted_estimator_cannot_be_saved(tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        save_model(onlinelearn.Perceptron(), tmp_path / "m.npz")
    with pytest.raises(TypeError, match="_get_state"):
        save_model(object(), tmp_path / "m.npz")


# -- metadata encoding, independent of the estimators ------------------------------------------


class _FakeEstimator:
    def __init__(self, meta, arrays):
        self.meta, self.arrays = meta, arrays

    def _get_state(self):
        return self.meta, self.arrays


def test_metadata_json_round_trip_of_tuples_and_non_string_keys(tmp_path):
    meta = {
        "class": "Fake",
        "params": {"weights": {1: 0.5, -2: 3.0}, "shape": (2, 3), "flag": True, "none": None},
        "scalar": np.float64(2.5),
        "count": np.int64(7),
    }
    arrays = {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "labels": np.array(["a", "bb"]),
        "mask": np.array([True, False]),
    }
    save_model(_FakeEstimator(meta, arrays), tmp_path / "f.npz")
    meta2, arrays2, header = model_io.read_model_file(tmp_path / "f.npz")
    assert meta2 == {
        "class": "Fake",
        "params": {"weights": {1: 0.5, -2: 3.0}, "shape": (2, 3), "flag": True, "none": None},
        "scalar": 2.5,
        "count": 7,
    }
    assert sorted(arrays2) == ["labels", "mask", "w"]
    for k in arrays:
        assert arrays2[k].dtype == arrays[k].dtype
        np.testing.assert_array_equal(arrays2[k], arrays[k])
    with pytest.raises(ModelFileError, match="cannot rebuild the estimator"):
        load_model(tmp_path / "f.npz")  # 'Fake' is not an onlinelearn class


@pytest.mark.parametrize(
    ("meta", "arrays", "error"),
    [
        ({"x": object()}, {}, TypeError),
        ({}, {"o": np.array([{}], dtype=object)}, TypeError),
        ({}, {"__header__": np.zeros(2)}, ValueError),
        ({}, {"a/b": np.zeros(2)}, ValueError),
    ],
)
def test_unstorable_state_is_refused(tmp_path, meta, arrays, error):
    with pytest.raises(error):
        save_model(_FakeEstimator(meta, arrays), tmp_path / "f.npz")
    assert not (tmp_path / "f.npz").exists()


# -- corrupted, truncated, foreign and edited files --------------------------------------------


@pytest.fixture(scope="module")
def small_model_bytes(tmp_path_factory, dna):
    X, y = dna
    est = onlinelearn.PassiveAggressiveClassifier(average=True).partial_fit(
        X[:50, :8], y[:50], classes=np.array([1, 2, 3])
    )
    path = tmp_path_factory.mktemp("model") / "small.npz"
    save_model(est, path)
    return est, path.read_bytes()


def _member_data_ranges(data: bytes) -> list[range]:
    """Byte ranges of the (compressed) content of every member of a zip archive."""
    ranges = []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            start = info.header_offset
            name_len = int.from_bytes(data[start + 26 : start + 28], "little")
            extra_len = int.from_bytes(data[start + 28 : start + 30], "little")
            begin = start + 30 + name_len + extra_len
            ranges.append(range(begin, begin + info.compress_size))
    return ranges


def test_every_flipped_content_byte_is_detected(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    ranges = _member_data_ranges(data)
    assert len(ranges) >= 4 and sum(len(r) for r in ranges) > len(data) // 3
    path = tmp_path / "flipped.npz"
    for r in ranges:
        # The first and last bytes of a deflate stream hold bits that may not matter (the
        # final-block flag, padding after the last block); the next test checks that flips
        # there are harmless.  Flips in the body must always be caught.
        for pos in r[len(r) // 4 : 3 * len(r) // 4]:
            corrupted = bytearray(data)
            corrupted[pos] ^= 0x01
            path.write_bytes(bytes(corrupted))
            with pytest.raises(ModelFileError, match="flipped.npz"):
                load_model(path)


def test_every_flipped_byte_is_detected_or_harmless(tmp_path, small_model_bytes, dna):
    """Flip each byte in turn: loading must raise ModelFileError or give the very same model.

    Some zip header fields (timestamps, "version made by", attributes) do not affect the
    content and are not checked by anyone; a flip there must leave the model unchanged.
    """
    est, data = small_model_bytes
    X = dna[0][:, :8]
    expected = est.decision_function(X)
    path = tmp_path / "flipped.npz"
    detected = 0
    for pos in range(len(data)):
        corrupted = bytearray(data)
        corrupted[pos] ^= 0xFF
        path.write_bytes(bytes(corrupted))
        try:
            loaded = load_model(path)
        except ModelFileError:
            detected += 1
            continue
        np.testing.assert_array_equal(loaded.decision_function(X), expected)
        assert loaded.get_params() == est.get_params()
    assert detected >= len(data) // 2


@pytest.mark.parametrize("keep", [0, 1, 3, 4, 30, 0.5, -22, -1])
def test_truncated_file(tmp_path, small_model_bytes, keep):
    _, data = small_model_bytes
    n = int(len(data) * keep) if isinstance(keep, float) else keep % len(data)
    path = tmp_path / "cut.npz"
    path.write_bytes(data[:n])
    with pytest.raises(ModelFileError, match="cut.npz"):
        load_model(path)


def test_random_bytes(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "random.npz"
    for size in (1, 100, 5000):
        path.write_bytes(rng.bytes(size))
        with pytest.raises(ModelFileError):
            load_model(path)
    path.write_bytes(b"PK\x03\x04" + rng.bytes(500))  # zip magic then garbage
    with pytest.raises(ModelFileError, match="corrupted"):
        load_model(path)


def test_pickle_file_is_refused(tmp_path, small_model_bytes):
    est, _ = small_model_bytes
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(est))
    with pytest.raises(ModelFileError, match="pickle"):
        load_model(path)


def test_npz_with_pickled_object_array_is_refused(tmp_path):
    path = tmp_path / "obj.npz"
    np.savez(path, __header__=np.array([{"magic": "onlinelearn-model"}], dtype=object))
    with pytest.raises(ModelFileError, match="pickle"):
        load_model(path)


def test_foreign_npz_and_npy(tmp_path):
    np.savez(tmp_path / "foreign.npz", coef_=np.zeros((2, 3)))
    with pytest.raises(ModelFileError, match="not an onlinelearn model file"):
        load_model(tmp_path / "foreign.npz")
    np.save(tmp_path / "array.npy", np.zeros(3))
    with pytest.raises(ModelFileError, match="not an onlinelearn model file"):
        load_model(tmp_path / "array.npy")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(ModelFileError, match="not an onlinelearn model file"):
        load_model(tmp_path / "other.zip")


def _entries(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _rewrite(path, entries, header=None, fix_digest=True):
    entries = dict(entries)
    if header is not None:
        entries["__header__"] = np.frombuffer(
            json.dumps(header, sort_keys=True).encode(), dtype=np.uint8
        )
    if fix_digest:
        arrays = {k: v for k, v in entries.items() if not k.startswith("__")}
        digest = model_io._digest(entries["__header__"].tobytes(), arrays)
        entries["__sha256__"] = np.frombuffer(digest, dtype=np.uint8)
    with open(path, "wb") as f:
        np.savez_compressed(f, **entries)


def _header(entries):
    return json.loads(entries["__header__"].tobytes())


def test_edited_array_fails_checksum(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    entries = _entries(data)
    name = next(k for k in entries if not k.startswith("__") and entries[k].dtype.kind == "f")
    entries[name] = entries[name].copy()
    entries[name].flat[0] += 1e-12
    _rewrite(tmp_path / "edited.npz", entries, fix_digest=False)
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(tmp_path / "edited.npz")


def test_edited_header_fails_checksum(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    entries = _entries(data)
    header = _header(entries)
    header["meta"]["params"]["C"] = 123.0
    entries["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    _rewrite(tmp_path / "edited.npz", entries, fix_digest=False)
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(tmp_path / "edited.npz")


def test_checksum_binds_dtype_and_shape(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    entries = _entries(data)
    name = next(k for k in entries if not k.startswith("__") and entries[k].ndim == 2)
    entries[name] = entries[name].reshape(-1)  # same bytes, different shape
    _rewrite(tmp_path / "reshaped.npz", entries, fix_digest=False)
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(tmp_path / "reshaped.npz")


@pytest.mark.parametrize(
    "version,says",
    [
        (1, "format_version 1 was written by a development version of onlinelearn"),
        (0, "format_version 0 was written by a development version of onlinelearn"),
        (3, "format_version 3 was written by onlinelearn .*, newer than this one"),
        (99, "format_version 99 was written by onlinelearn .*, newer than this one"),
        ("2", "format_version '2' is not a version of onlinelearn"),
        (None, "format_version None is not a version of onlinelearn"),
        (True, "format_version True is not a version of onlinelearn"),
        (2.0, "format_version 2.0 is not a version of onlinelearn"),
    ],
)
def test_other_format_versions_are_refused_in_one_line(tmp_path, small_model_bytes, version, says):
    _, data = small_model_bytes
    entries = _entries(data)
    header = _header(entries)
    header["format_version"] = version
    _rewrite(tmp_path / "v.npz", entries, header=header)  # valid checksum: only the version is off
    with pytest.raises(ModelFileError, match=f"^.*v.npz: model file {says}") as info:
        load_model(tmp_path / "v.npz")
    message = str(info.value)
    assert "\n" not in message and "train the model again and save it" in message


def test_missing_or_extra_array(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    entries = _entries(data)
    extra = dict(entries, surplus=np.zeros(2))
    _rewrite(tmp_path / "extra.npz", extra)
    with pytest.raises(ModelFileError, match="do not match"):
        load_model(tmp_path / "extra.npz")
    name = next(k for k in entries if not k.startswith("__"))
    fewer = {k: v for k, v in entries.items() if k != name}
    _rewrite(tmp_path / "fewer.npz", fewer)
    with pytest.raises(ModelFileError, match="do not match"):
        load_model(tmp_path / "fewer.npz")


def test_wrong_magic_and_bad_header(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    entries = _entries(data)
    header = _header(entries)
    header["magic"] = "something-else"
    _rewrite(tmp_path / "magic.npz", entries, header=header)
    with pytest.raises(ModelFileError, match="wrong magic"):
        load_model(tmp_path / "magic.npz")
    entries["__header__"] = np.frombuffer(b"{not json", dtype=np.uint8)
    _rewrite(tmp_path / "json.npz", entries)
    with pytest.raises(ModelFileError, match="not valid JSON"):
        load_model(tmp_path / "json.npz")


def test_inconsistent_state_with_valid_checksum(tmp_path, small_model_bytes):
    _, data = small_model_bytes
    entries = _entries(data)
    entries["theta"] = np.zeros((3, 3))  # wrong shape for 8 features
    _rewrite(tmp_path / "bad_state.npz", entries)
    with pytest.raises(ModelFileError, match="cannot rebuild"):
        load_model(tmp_path / "bad_state.npz")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "absent.npz")


def test_model_file_error_is_a_value_error():
    assert issubclass(ModelFileError, ValueError)
