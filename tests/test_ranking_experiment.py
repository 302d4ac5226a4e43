"""``onlinelearn reproduce message-folders``: the Table 8.1 run on a slice of the Enron stream."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from _data import require_shared_file

from onlinelearn import LabelRanker
from onlinelearn.experiments.message_folders import (
    THESIS_TABLE_8_1,
    load_enron_stream,
    run_message_folders,
)


def test_quick_enron_table_and_claims():
    path = require_shared_file("enron_multilabel/enron.train.svm.bz2")
    root = path.parent.parent
    res = run_message_folders(root, corpora=("enron",), quick=True)
    (c,) = res.corpora
    assert (c.n_labels, c.n_messages) == (53, 600)
    # each cell is the online mistake rate of the learner run by hand on the same stream
    X, Y = load_enron_stream(root)
    est = LabelRanker(update="III", complexity="entropy").partial_fit(X[:600], Y[:600])
    assert np.isclose(c.mistakes[("entropy", "III")], 100 * est.n_mistakes_ / 600)
    table = res.format_table()
    for user in THESIS_TABLE_8_1:
        assert user in table
    claims = res.claims()
    assert len(claims) == 5
    for claim, holds, detail in claims:
        assert f"[{'holds' if holds else 'FAILS'}] {claim}  ({detail})" in table
    assert 0 < c.ip_iterations_max < 50


def test_cli_lists_the_experiment():
    out = subprocess.run(
        [sys.executable, "-m", "onlinelearn", "reproduce", "message-folders", "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "Table 8.1" in out.stdout and "--quick" in out.stdout
