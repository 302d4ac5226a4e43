"""The two reproductions of the structured family on the command line (small runs)."""

from __future__ import annotations

import pytest
from _data import require_shared_data, require_shared_file

from onlinelearn.cli import main


def test_reproduce_boosting_bound_small(capsys):
    require_shared_data("pmlb/mushroom")
    code = main(["reproduce", "boosting-bound", "--datasets", "mushroom", "--rounds", "5",
                 "--max-rows", "400", "-q"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| mushroom")]
    assert len(rows) == 3  # edge, gini, scikit-learn
    # the training error is below exp(-2 gamma^2 T) for both booster rows
    for line in rows[:2]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert float(cells[3]) <= float(cells[5])
    # gini stumps = scikit-learn's AdaBoost: same train error and test accuracy
    gini, sk = ([c.strip() for c in r.strip("|").split("|")] for r in rows[1:])
    assert gini[3] == sk[3] and gini[7] == sk[7]


def test_reproduce_pos_tagging_small(capsys):
    require_shared_file("ud_english_ewt/en_ewt-ud-train.conllu.xz")
    code = main(["reproduce", "pos-tagging", "--max-train", "150", "--epochs", "1", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    accs = {}
    for line in out.splitlines():
        if line.startswith("| ") and "learner" not in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            accs[cells[0]] = float(cells[1])
    assert set(accs) == {"perceptron", "PA", "PA-prediction", "self-tuned", "token PA-I"}
    assert all(0.5 < a < 1.0 for a in accs.values())


def test_reproduce_help_lists_both():
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
