"""``onlinelearn reproduce svm-cd-vs-sgd`` on a small subsample: the curves are consistent (every
primal is above the certified dual bound, CD's gap is non-negative), the table and the figure
are produced, and the command line reports bad options in one line."""

from __future__ import annotations

import numpy as np
import pytest
from _data import require_shared_data

from onlinelearn.cli import main
from onlinelearn.experiments.svm_cd_vs_sgd import run_cd_vs_sgd, w8a_split


def test_curves_are_consistent_and_cd_is_certified():
    require_shared_data("a9a")
    require_shared_data("a9a", "test")
    res = run_cd_vs_sgd(["a9a"], epochs=4, max_rows=600, t0_grid=(0.0, 1e2, 1e4))
    (r,) = res.results
    assert [c.solver for c in r.curves][:2] == ["dual CD", "Pegasos"]
    assert len(r.curves) == 4  # CD, Pegasos, the best and the worst t0
    for c in r.curves:
        assert len(c.epochs) == len(c.times) == len(c.primal) == len(c.test_acc)
        assert np.all(np.asarray(c.primal) >= r.D_star * (1 - 1e-9))
        assert np.all(np.diff(c.times) >= 0)
    cd = r.curves[0]
    assert np.all(np.asarray(cd.gap) >= -1e-9 * np.asarray(cd.primal))
    assert cd.primal[0] == pytest.approx(r.C * r.n_train)  # alpha = 0: w = 0, P = C N
    assert r.curves[1].primal[0] == pytest.approx(r.C * r.n_train)
    table = res.format_table()
    assert table.count("| a9a |") == 4


def test_w8a_split_is_seeded_and_disjoint():
    tr, te = w8a_split(49749, seed=0)
    tr2, te2 = w8a_split(49749, seed=0)
    assert np.array_equal(tr, tr2) and np.array_equal(te, te2)
    assert len(tr) == int(0.8 * 49749) and len(np.union1d(tr, te)) == 49749
    assert not np.array_equal(te, w8a_split(49749, seed=1)[1])


def test_cli_small_run_and_errors(capsys, tmp_path):
    require_shared_data("a9a")
    pytest.importorskip("matplotlib")
    png = tmp_path / "svm.png"
    argv = ["reproduce", "svm-cd-vs-sgd", "--datasets", "a9a", "--max-rows", "400",
            "--epochs", "2", "--quiet", "--plot", str(png)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "2 epochs" in out and "| a9a | dual CD |" in out
    assert png.stat().st_size > 1000
    with pytest.raises(SystemExit):
        main(["reproduce", "svm-cd-vs-sgd", "--datasets", "iris"])
    with pytest.raises(SystemExit):
        main(["reproduce", "svm-cd-vs-sgd", "--epochs", "0"])
