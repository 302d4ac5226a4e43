"""Reduced run of the COPA paper's toy experiment (Sec. 4), ``onlinelearn.experiments.copa_toy``.

Observed (full run, 10 samples of 5000): with the class-normalised cost C / T_y^2 of eq. (17)
averaged COPA has a much smaller confusion norm than the averaged Perceptron, at a lower
accuracy; with a plain C its confusion norm is *larger* than the Perceptron's.
"""

from __future__ import annotations

import numpy as np
import pytest

from onlinelearn.experiments.copa_toy import make_toy_sample, reproduce_copa_toy


@pytest.fixture(scope="module")
def result():
    return reproduce_copa_toy(n_samples=2, n=1000, random_state=0)


def test_sample_matches_the_paper_setup():
    X, y = make_toy_sample(20000, np.random.default_rng(0))
    np.testing.assert_allclose(np.bincount(y) / len(y), [0.9, 0.05, 0.05], atol=0.01)
    np.testing.assert_allclose(X[y == 0].mean(axis=0), [0.0, 1.0], atol=0.02)
    np.testing.assert_allclose(X[y == 1].std(axis=0), [0.5, 0.5], atol=0.03)


def test_confusion_cost_copa_has_smaller_confusion_norm(result):
    copa = result.copa["confusion"]
    perc = result.perceptron
    assert copa.confusion_norm.mean() < perc.confusion_norm.mean()
    assert copa.confusion_norm.shape == (2,)
    # the norm is bought with accuracy on this imbalanced problem
    assert 0.6 < copa.accuracy.mean() <= perc.accuracy.mean()


def test_plain_cost_is_not_confusion_oriented(result):
    assert result.copa[None].confusion_norm.mean() > result.copa["confusion"].confusion_norm.mean()


def test_table_and_plot(result, tmp_path):
    table = result.format_table()
    assert "paper: COPA" in table and "Perceptron" in table
    pytest.importorskip("matplotlib")
    result.plot(tmp_path / "toy.png")
    assert (tmp_path / "toy.png").stat().st_size > 0


def test_bound_of_one_online_pass(result):
    """The bound printed for a COPA run is Theorem 1 on the progressive predictions."""
    from onlinelearn.experiments.copa_toy import online_bound
    from onlinelearn.linear.copa import COPA
    from onlinelearn.metrics import confusion_matrix_conditional, confusion_risk_bound

    assert set(result.bounds) == {None, "confusion"}
    for cw, b in result.bounds.items():
        assert b.C == result.copa[cw].C
        assert b.n_rounds == 500 and b.class_counts.sum() == 500
        assert b.result.bound == pytest.approx(b.result.empirical_norm + b.result.deviation)
        assert "bound" in result.format_table() and f"T={b.n_rounds}" in b.line()

    X, y = make_toy_sample(400, np.random.default_rng(3))
    b = online_bound(COPA(C=2.0, average=True, shuffle=False), X, y, delta=0.1, form="derived")
    twin = COPA(C=2.0, average=True, shuffle=False)
    pred = twin.partial_fit_predict(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(b.C_hat, confusion_matrix_conditional(y, pred, labels=[0, 1, 2]))
    expected = confusion_risk_bound(b.C_hat, np.bincount(y), M=1.0, delta=0.1, form="derived")
    assert b.result == pytest.approx(tuple(expected))
    np.testing.assert_array_equal(b.class_counts, np.bincount(y))


# ------------------------------------------------------------------------ --protocol paper|ours


@pytest.fixture(scope="module")
def paper_result():
    return reproduce_copa_toy(n_samples=2, n=1000, random_state=0, protocol="paper")


def test_paper_protocol_is_the_papers(paper_result, monkeypatch):
    """No intercept, the stream's order, C / T_y^2, the paper's sizes; every COPA and
    Perceptron built by the run is configured so (checked on the objects themselves)."""
    from onlinelearn.experiments import copa_toy
    from onlinelearn.experiments.copa_toy import PROTOCOLS

    assert paper_result.protocol == "paper"
    assert list(paper_result.copa) == ["confusion"]
    s = paper_result.settings
    assert (s["fit_intercept"], s["shuffle"]) == (False, False)
    grid = [c for c, _, _ in paper_result.selection["confusion"]]
    assert grid == list(PROTOCOLS["paper"]["C_grids"]["confusion"])
    assert paper_result.copa["confusion"].C in grid

    made = []
    for name in ("COPA", "Perceptron"):
        cls = getattr(copa_toy, name)

        def record(*args, _cls=cls, **kw):
            est = _cls(*args, **kw)
            made.append(est)
            return est

        monkeypatch.setattr(copa_toy, name, record)
    reproduce_copa_toy(n_samples=1, n=400, random_state=1, protocol="paper")
    assert made and all(not e.fit_intercept for e in made)
    assert all(not e.shuffle for e in made if e.n_epochs > 1)
    assert all(e.class_weight == "confusion" for e in made if type(e).__name__ == "COPA")
    fitted = [e for e in made if hasattr(e, "coef_")]
    assert fitted and all(np.all(e.intercept_ == 0.0) for e in fitted)


def test_default_protocol_is_unchanged(result):
    assert result.protocol == "ours"
    assert (result.settings["fit_intercept"], result.settings["shuffle"]) == (True, True)
    assert list(result.copa) == [None, "confusion"]


def test_gaps_are_the_distance_to_the_papers_figures(paper_result):
    from onlinelearn.experiments.copa_toy import PAPER

    for (name, da, sa, dn, _sn), s in zip(
        paper_result.gaps(), [*paper_result.copa.values(), paper_result.perceptron], strict=True
    ):
        paper = PAPER["Perceptron" if name.startswith("Perceptron") else "COPA"]
        assert da == pytest.approx(s.accuracy.mean() - paper[0])
        assert dn == pytest.approx(s.confusion_norm.mean() - paper[1])
        assert sa == pytest.approx(s.accuracy.std())


def test_theorem2_beside_the_observed_value(paper_result, result):
    for res in (paper_result, result):
        assert set(res.theorem2) == set(res.copa)
        for cw, (C, b) in res.theorem2.items():
            assert C == res.copa[cw].C
            assert b.observed <= b.bound and b.loss_max <= b.M
            assert b.n_rounds == res.settings["n"] // 2
        assert "Theorem 2" in res.format_table() and "holds" in res.format_table()


def test_side_by_side_table(paper_result, result):
    from onlinelearn.experiments.copa_toy import format_side_by_side

    table = format_side_by_side({"paper": paper_result, "ours": result})
    lines = table.splitlines()
    assert "protocol paper" in lines[0] and "protocol ours" in lines[0]
    copa_row = next(x for x in lines if x.startswith("COPA (averaged, C/T_y^2)"))
    s_p, s_o = paper_result.copa["confusion"], result.copa["confusion"]
    for s in (s_p, s_o):
        assert f"{s.accuracy.mean():.3f}+-" in copa_row
        assert f"{s.confusion_norm.mean():.3f}+-" in copa_row
    assert copa_row.rstrip().endswith("0.85   0.10")
    plain = next(x for x in lines if x.startswith("COPA (averaged, C) "))
    assert "(not run)" in plain  # the paper's protocol runs the paper's cost only
    assert len({len(x) for x in lines[:5]}) == 1  # aligned columns


def test_unknown_protocol():
    with pytest.raises(ValueError, match="protocol"):
        reproduce_copa_toy(n_samples=1, n=200, protocol="theirs")


def test_cli_protocols(capsys):
    from onlinelearn.cli import main

    argv = ["reproduce", "copa-toy", "--samples", "1", "--n", "400", "--epochs", "1"]
    assert main([*argv, "--protocol", "paper"]) == 0
    out = capsys.readouterr().out
    assert "the paper's protocol" in out and "COPA (averaged, C) " not in out
    assert "distance to the paper's figures" in out and "Theorem 2" in out
    assert main([*argv, "--protocol", "both"]) == 0
    out = capsys.readouterr().out
    assert "side by side" in out and "protocol paper" in out and "protocol ours" in out
    assert main([*argv, "--protocol", "paper", "--class-weight", "both"]) == 0
    out = capsys.readouterr().out
    assert "COPA (averaged, C) " in out  # an explicit choice is honoured
