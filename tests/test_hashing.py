"""MurmurHash3 in numba against scikit-learn's, and onlinelearn.features.Hasher against
FeatureHasher and the VW reader (the same columns from Python and from a VW file)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher
from sklearn.utils import murmurhash3_32 as sk_murmur

from onlinelearn._core.hashing import murmur3_many, murmurhash3_32
from onlinelearn.features import Hasher, feature_string
from onlinelearn.io.vw import load_vw


def _random_text(rng, length, forbid=""):
    """A random string of ``length`` code points: ASCII, Latin, CJK, emoji (4-byte UTF-8)."""
    pools = [(33, 126), (0xA1, 0x2FF), (0x4E00, 0x9FFF), (0x1F300, 0x1F5FF)]
    out = []
    while len(out) < length:
        lo, hi = pools[rng.integers(len(pools))]
        c = chr(int(rng.integers(lo, hi + 1)))
        if c not in forbid and not c.isspace():
            out.append(c)
    return "".join(out)


def test_murmur3_matches_sklearn_on_random_strings():
    rng = np.random.default_rng(0)
    keys = [_random_text(rng, int(n)) for n in rng.integers(0, 101, size=3000)]
    keys += ["", "a", "ab", "abc", "abcd", "abcde"]  # every tail length
    for seed in (0, 1, 42, 2**31, 2**32 - 1):
        data = [k.encode("utf-8") for k in keys]
        offsets = np.zeros(len(data) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(b) for b in data])
        got = murmur3_many(np.frombuffer(b"".join(data), np.uint8), offsets, np.int64(seed))
        want = [sk_murmur(b, seed=seed) for b in data]
        np.testing.assert_array_equal(got, want)
    # raw bytes that are not UTF-8, and str vs bytes
    for k in range(200):
        b = rng.integers(0, 256, size=k, dtype=np.uint8).tobytes()
        assert murmurhash3_32(b, 7) == sk_murmur(b, seed=7)
    assert murmurhash3_32("héllo") == sk_murmur("héllo", seed=0)
    with pytest.raises(TypeError):
        murmurhash3_32(3)
    with pytest.raises(ValueError):
        murmurhash3_32("a", seed=-1)


def test_hasher_dict_and_string_rows_equal_featurehasher():
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(200):
        row = {}
        for _ in range(int(rng.integers(0, 12))):
            name = _random_text(rng, int(rng.integers(1, 10)))
            kind = rng.integers(3)
            row[name] = (
                float(rng.normal()) if kind == 0 else int(rng.integers(-3, 4)) if kind == 1
                else _random_text(rng, 3)
            )
        rows.append(row)
    for bits in (1, 5, 18, 30):
        want = FeatureHasher(n_features=2**bits).transform(rows)
        got = Hasher(n_bits=bits).fit_transform(rows)
        assert got.shape == (200, 2**bits)
        assert abs(got - want).max() == 0
    tokens = [[_random_text(rng, 3) for _ in range(int(rng.integers(1, 8)))] for _ in range(50)]
    tokens[0] = tokens[0] + tokens[0]  # repeats add up
    want = FeatureHasher(n_features=2**12, input_type="string").transform(tokens)
    got = Hasher(n_bits=12, input_type="string").transform(tokens)
    assert abs(got - want).max() == 0
    got32 = Hasher(n_bits=12, input_type="string", dtype=np.float32).transform(tokens)
    assert got32.dtype == np.float32
    unsigned = Hasher(n_bits=12, input_type="string", alternate_sign=False).transform(tokens)
    assert (unsigned.data > 0).all()


def _vw_value(rng, v):
    """``v`` written in one of several ways VW files use (all exact for the reader)."""
    k = rng.integers(4)
    if k == 0:
        return repr(v)
    if k == 1:
        return f"{v:.3e}"
    if k == 2:
        return f"{v:.25f}"  # more digits than the fast path: left to Python's float()
    return f"{v:g}"


def _random_namespaced_rows(rng, n_rows):
    letters = "abcU"
    rows, lines = [], []
    for _ in range(n_rows):
        row, parts = {}, []
        for k in range(int(rng.integers(1, 4))):
            if k == 0 and rng.random() < 0.3:
                ns = ""
            else:
                ns = letters[rng.integers(len(letters))] + _random_text(
                    rng, int(rng.integers(0, 3)), forbid="|:"
                )
            if ns in row:
                continue
            feats, toks = {}, []
            for _ in range(int(rng.integers(0, 6))):
                name = _random_text(rng, int(rng.integers(1, 6)), forbid="|:")
                if name in feats:
                    continue
                r = rng.random()
                if r < 0.3:
                    feats[name] = 1
                    toks.append(name)
                    continue
                v = float(rng.integers(-5, 6)) if r < 0.6 else float(rng.normal())
                text = _vw_value(rng, v)
                feats[name] = float(text)
                toks.append(f"{name}:{text}")
            row[ns] = feats
            parts.append(f"|{ns} " + " ".join(toks))
        label = int(rng.integers(-1, 2))
        rows.append(row)
        lines.append(f"{label} " + " ".join(parts))
    return rows, lines


@pytest.mark.parametrize("interactions", [None, ["ab"], ["aa", "bU", "ca"]])
def test_hasher_namespaces_equal_vw_reader_and_featurehasher(interactions):
    rng = np.random.default_rng(2)
    rows, lines = _random_namespaced_rows(rng, 300)
    text = ("\n".join(lines) + "\n").encode("utf-8")
    bits = 14
    hasher = Hasher(n_bits=bits, input_type="namespaces", interactions=interactions)
    X_py = hasher.transform(rows)
    X_vw, _ = load_vw(io.BytesIO(text), n_bits=bits, interactions=interactions)
    # FeatureHasher on the documented strings, built here independently of Hasher
    pairs = []
    for row in rows:
        feats = [(ns, feature_string(ns, f), v) for ns, d in row.items() for f, v in d.items()
                 if v != 0]  # fmt: skip
        out = [(s, v) for _, s, v in feats]
        for a, b in interactions or []:
            for i in range(len(feats)):
                for j in range(len(feats)):
                    if a == b and j < i:
                        continue
                    if feats[i][0].startswith(a) and feats[j][0].startswith(b):
                        out.append((feats[i][1] + "*" + feats[j][1], feats[i][2] * feats[j][2]))
        pairs.append(out)
    X_sk = sp.csr_matrix(FeatureHasher(n_features=2**bits, input_type="pair").transform(pairs))
    assert X_py.shape == X_vw.shape == X_sk.shape == (300, 2**bits)
    np.testing.assert_allclose(X_vw.toarray(), X_sk.toarray(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(X_py.toarray(), X_sk.toarray(), rtol=1e-12, atol=1e-12)
    assert X_vw.has_sorted_indices
    if interactions:  # the interactions added columns
        assert X_vw.nnz > load_vw(io.BytesIO(text), n_bits=bits)[0].nnz


def test_hasher_parameters_are_checked():
    for bad in (0, 31, 2.0, True):
        with pytest.raises(ValueError, match="n_bits"):
            Hasher(n_bits=bad).fit()
    with pytest.raises(ValueError, match="input_type"):
        Hasher(input_type="pairs").fit()
    with pytest.raises(ValueError, match="namespaces"):
        Hasher(interactions="ab").fit()
    with pytest.raises(ValueError, match="two characters"):
        Hasher(input_type="namespaces", interactions=["abc"]).fit()
    with pytest.raises(ValueError, match="single string"):
        Hasher(input_type="string").transform(["abc"])
    with pytest.raises(ValueError, match="iterable of rows"):
        Hasher().transform({"a": 1})
    assert Hasher().transform([]).shape == (0, 2**18)
    h = Hasher(n_bits=4)
    assert h.get_params()["n_bits"] == 4  # parameters stored verbatim, nothing learned
    assert h.fit([{"a": 1}]) is h
    assert not [k for k in vars(h) if k.endswith("_")]


def test_hasher_in_a_pipeline_and_scikit_learn_conventions():
    """check_estimator skips dict-input transformers (as for FeatureHasher); what it would check
    here: clone, parameters, pickling, and a pipeline with a learner."""
    import pickle

    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    from onlinelearn import PassiveAggressiveClassifier

    rows = [{"colour": c, "size": float(s)} for c, s in zip("rgbrgbrgbrgb", range(12), strict=True)]
    y = np.array([0, 1, 2] * 4)
    h = Hasher(n_bits=8)
    assert clone(h).get_params() == h.get_params()
    assert abs(pickle.loads(pickle.dumps(h)).transform(rows) - h.transform(rows)).max() == 0
    model = make_pipeline(Hasher(n_bits=8), PassiveAggressiveClassifier(random_state=0))
    model.fit(rows, y)
    assert (model.predict(rows) == y).mean() == 1.0  # the colour gives the class
