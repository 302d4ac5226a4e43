"""``LossTuned``: c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)) with the squared hinge (thesis
Fig. 3.2 with Theorem 2 / Corollary 4), on the dual ascent family's tuned kernel.

* Each round's alpha_t against an independent solve of its own problem (scipy brentq on the
  derivative of the 1-D dual, with grad f* written here in numpy)::

      max_{alpha >= 0}  gamma alpha - alpha^2 / (4 s) - c_t f*((v + alpha u) / c_t)

  on the three links, two and three classes, random weights s, and the row-action revisit of
  the previous variable (k = 2: delta >= -alpha_m at the same c_t).
* c_t read back from the run's own online losses, the dual objective recomputed from the dual
  variables, and the subgradient rule alpha_t = 2 s [gamma - z_t]_+.
* Model files written before the squared hinge (two st slots fewer) load, predict exactly as
  they did, and continue as a model fitted by this version.  To write those files again (only
  with the version before this step)::

      python tests/test_loss_tuned.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from onlinelearn._core import dual_ascent as DA
from onlinelearn.framework import (
    Entropy,
    Euclidean,
    Hinge,
    LipschitzTuned,
    LossTuned,
    OnlineLearner,
    PNorm,
    SelfTuned,
    SquaredHinge,
)
from onlinelearn.model_io import load_model, save_model

OLD = Path(__file__).resolve().parent / "data" / "dual_ascent_before_squared_hinge"
P = 3.0
_LINKS = {"euclidean": Euclidean(), "entropy": Entropy(), "pnorm": PNorm(p=P)}


# ---------------------------------------------------------------- model files of the version before
def _old_data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(90, 5))
    y = np.argmax(X[:, :3] + 0.4 * rng.normal(size=(90, 3)), axis=1)
    return X, y, rng.normal(size=(12, 5))


def _old_learners():
    from onlinelearn import DualAscentClassifier

    def ol(link, step):
        return OnlineLearner(link=link, loss=Hinge(1.0), step=step, average=False, tol=None,
                             shuffle=False)  # fmt: skip

    return {
        "last_k2": DualAscentClassifier(step="last-k", k=2, C=0.5, shuffle=False, n_epochs=1),
        "self_tuned_entropy": ol(Entropy(), SelfTuned(U=2.0, k=2)),
        "lipschitz_pnorm": ol(PNorm(p=P), LipschitzTuned(U=1.5)),
        "lipschitz_binary": ol(Euclidean(), LipschitzTuned(U=0.5, L=2.0)),
    }


def _old_labels(name, y):
    return np.where(y == 0, 0, 1) if name == "lipschitz_binary" else y


def _write_old():  # pragma: no cover - run by hand, with the version before LossTuned
    X, y, probe = _old_data()
    OLD.mkdir(parents=True, exist_ok=True)
    expected = {"probe": probe}
    for name, est in _old_learners().items():
        labels = _old_labels(name, y)
        est.partial_fit(X[:60], labels[:60], classes=np.unique(labels))
        save_model(est, OLD / f"{name}.npz")
        expected[f"{name}.predict"] = est.predict(probe)
        expected[f"{name}.decision_function"] = est.decision_function(probe)
    np.savez(OLD / "expected.npz", **expected)


@pytest.mark.parametrize("name", sorted(_old_learners()))
def test_a_file_from_before_the_squared_hinge_loads_predicts_and_continues(name):
    X, y, probe = _old_data()
    y = _old_labels(name, y)
    with np.load(OLD / "expected.npz") as arrays:
        expected = dict(arrays)
    with np.load(OLD / f"{name}.npz") as raw:
        assert raw["s_st"].shape == (DA.N_ST_V1,), "the stored file is not of the old layout"
    est = load_model(OLD / f"{name}.npz")
    assert est._state["st"].shape == (DA.N_ST,)
    assert np.array_equal(est._state["st"][DA.N_ST_V1:], np.zeros(DA.N_ST - DA.N_ST_V1))
    np.testing.assert_array_equal(est.predict(probe), expected[f"{name}.predict"])
    np.testing.assert_array_equal(
        est.decision_function(probe), expected[f"{name}.decision_function"]
    )
    # it continues exactly as the same model fitted by this version
    fresh = _old_learners()[name]
    fresh.partial_fit(X[:60], y[:60], classes=np.unique(y))
    for k, v in fresh._state.items():
        np.testing.assert_array_equal(est._state[k], v, err_msg=k)
    est.partial_fit(X[60:], y[60:])
    fresh.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(est.decision_function(probe), fresh.decision_function(probe))


if __name__ == "__main__":  # pragma: no cover
    _write_old()
