"""``onlinelearn reproduce label-ranking``: thesis Table 8.1 over every shared multi-label set."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from _data import require_shared_file

from onlinelearn import LabelRanker
from onlinelearn.experiments import label_ranking as LR
from onlinelearn.experiments.message_folders import COMPLEXITIES, THESIS_TABLE_8_1, UPDATES


def _root():
    return require_shared_file("blogcatalog/blogcatalog.labels.xz").parent.parent


def test_blogcatalog_stream_is_the_documented_graph():
    X, Y = LR.load_blogcatalog_stream(_root())
    assert X.shape == (10312, 10312) and Y.shape == (10312, 39)
    assert X.nnz == 2 * 333983  # undirected edges, both directions, no self-loop
    assert (X != X.T).nnz == 0 and X.diagonal().sum() == 0
    assert set(np.unique(X.data)) == {1.0}
    per_node = Y.sum(axis=1)
    assert (per_node == 1).sum() == 7460 and ((per_node >= 2) & (per_node <= 11)).sum() == 2852


def test_small_run_cells_and_claims(monkeypatch):
    root = _root()
    require_shared_file("enron_multilabel/enron.train.svm.bz2")
    monkeypatch.setattr(LR, "QUICK_ROWS", {"enron": 150, "blogcatalog": 300, "20news": 10})
    res = LR.run_label_ranking(root, datasets=LR.MULTI_LABEL, quick=True)
    assert [d.name for d in res.datasets] == ["enron", "blogcatalog"]
    assert all(d.multi_label for d in res.datasets)
    # a cell is the mistake rate of the learner run by hand on the same slice
    X, Y = LR.load_stream(root, "blogcatalog", 300)
    est = LabelRanker(update="II", complexity="entropy").partial_fit(X, Y)
    cell = res.datasets[1].mistakes[("entropy", "II")]
    assert cell == pytest.approx(100 * est.n_mistakes_ / 300)
    # every claim is printed as measured, failures included
    table = res.format_table()
    claims = res.claims()
    assert len(claims) == 10
    for claim, holds, detail in claims:
        assert f"[{'holds' if holds else 'FAILS'}] {claim}  ({detail})" in table
    for d in res.datasets:
        m = d.mistakes
        for comp in COMPLEXITIES:
            chain = m[(comp, "III")] <= m[(comp, "II")] <= m[(comp, "I")]
            assert (
                dict((c, h) for c, h, _ in claims)[f"{d.name}, {LR._CNAME[comp]}: III <= II <= I"]
                == chain
            )
    n_chain = sum(h for c, h, _ in claims if "III <= II" in c)
    assert f"| III <= II <= I | {n_chain} of 4 | 14 of 14 |" in table
    for user in THESIS_TABLE_8_1:
        assert f"| {user} (thesis) |" in table


def test_claims_report_failures():
    m = {(c, u): v for c in COMPLEXITIES for u, v in zip(UPDATES, (3.0, 2.0, 2.5), strict=True)}
    m[("entropy", "I")] = 4.0
    out = {c: h for c, h, _ in LR.claims_of("x", m)}
    assert out["x, squared norm: III <= II <= I"] is False  # 2.5 > 2.0
    assert out["x, update I: entropy <= squared norm"] is False  # 4 > 3
    assert out["x, update II: entropy <= squared norm"] is True  # a tie holds


def test_thesis_rows_satisfy_their_own_claims():
    # the thesis's claims hold on every row of its Table 8.1 (what "consistently" means there)
    claims = LR.LabelRankingResult([], {}).thesis_claims()
    assert len(claims) == 35 and all(h for _, h, _ in claims)


def test_unknown_dataset_is_refused():
    with pytest.raises(ValueError, match="unknown data set"):
        LR.load_stream(".", "cora")


def test_cli_label_ranking_and_old_names():
    out = subprocess.run(
        [sys.executable, "-m", "onlinelearn", "reproduce", "label-ranking", "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "Table 8.1" in out.stdout and "blogcatalog" in out.stdout and "20news" in out.stdout
    from onlinelearn.cli import build_parser

    args = build_parser().parse_args(
        ["reproduce", "message-folders", "--datasets", "enron", "20news", "--quick"]
    )
    assert args.corpora == ["enron", "20news"]
    args = build_parser().parse_args(["reproduce", "label-ranking"])
    assert args.datasets == ["enron", "blogcatalog"]


@pytest.mark.parametrize(
    "command, folders",
    [
        ("label-ranking", "enron_multilabel/ and blogcatalog/"),
        ("message-folders", "enron_multilabel/ and 20newsgroups/"),
    ],
)
def test_cli_says_which_shared_data_is_missing(monkeypatch, capsys, tmp_path, command, folders):
    import onlinelearn.datasets
    from onlinelearn.cli import main

    # no folder at all: the error names the folders the command reads
    monkeypatch.setattr(onlinelearn.datasets, "shared_data_dir", lambda: None)
    assert main(["reproduce", command, "--quick", "-q"]) == 2
    err = capsys.readouterr().err
    assert "no shared data folder" in err and f"(it must hold {folders})" in err
    # a folder without the data: the error names the missing file
    assert main(["reproduce", command, "--quick", "-q", "--data-dir", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "shared data missing" in err and "enron.train.svm.bz2" in err and out == ""
