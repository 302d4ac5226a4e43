"""Per-example step multipliers, shared by the linear and the kernel online learners:
``sample_weight`` times the class weight (a dict, ``'balanced'``, or a subclass's own mode such
as COPA's ``'confusion'``), with exact counts in ``fit`` and running counts in ``partial_fit``."""

from __future__ import annotations

import numbers

import numpy as np


def weights_by_class(class_weight, classes, y_codes, sw, counts):
    """``sw`` times the weight of each row's class: ``class_weight`` None (1), 'balanced'
    (n / (K n_c) from ``counts``, scikit-learn's convention) or a dict {label: weight >= 0}
    (labels not in ``classes`` weigh nothing here)."""
    K = len(classes)
    if class_weight is None:
        return sw
    if isinstance(class_weight, str):
        c = np.maximum(counts, 1).astype(np.float64)
        return sw * (counts.sum() / (K * c))[y_codes]
    vec = np.ones(K)
    for lab, val in class_weight.items():
        if not (isinstance(val, numbers.Real) and np.isfinite(val) and val >= 0):
            raise ValueError(
                f"class_weight[{lab!r}] = {val!r}: class weights must be finite numbers >= 0"
            )
        idx = np.searchsorted(classes, lab)
        if idx < K and classes[idx] == lab:
            vec[idx] = float(val)
    return sw * vec[y_codes]


class ExampleWeightsMixin:
    """``_example_weights`` for an estimator with ``classes_``, ``class_counts_`` and
    ``class_weight``; subclasses may override ``_class_weight_mode`` and
    ``_class_weight_from_counts``."""

    def _count_classes(self, y_codes):
        """Add the labels of a batch to ``class_counts_`` (the running counts)."""
        self.class_counts_ = self.class_counts_ + np.bincount(y_codes, minlength=len(self.classes_))

    def _class_weight_mode(self):
        return self.class_weight

    def _example_weights(self, y_codes, sample_weight, exact_counts):
        """Per-example multiplier of the step: sample_weight x class weight.

        ``exact_counts``: counts of the whole training set (``fit``); otherwise running counts
        (``partial_fit``): the weight of the i-th example of a batch uses the counts of all
        examples up to and including it (in the order given)."""
        K = len(self.classes_)
        mode = self._class_weight_mode()
        w = sample_weight
        if mode is None:
            return w
        if isinstance(mode, dict):
            cw = np.ones(K)
            for lab, val in mode.items():
                idx = np.searchsorted(self.classes_, lab)
                if idx < K and self.classes_[idx] == lab:
                    cw[idx] = float(val)
            return w * cw[y_codes]
        if exact_counts is not None:
            n_c = exact_counts[y_codes].astype(np.float64)
            total = np.full(y_codes.shape[0], float(exact_counts.sum()))
        else:
            # running counts: occurrences of y_i among rows 0..i of this batch + counts before
            order = np.argsort(y_codes, kind="stable")
            ys = y_codes[order]
            starts = np.searchsorted(ys, ys, side="left")
            rank = np.empty_like(y_codes)
            rank[order] = np.arange(len(ys)) - starts
            n_c = (self.class_counts_[y_codes] + rank + 1).astype(np.float64)
            total = self.class_counts_.sum() + np.arange(1, len(y_codes) + 1, dtype=np.float64)
        return w * self._class_weight_from_counts(mode, n_c, total, K)

    def _class_weight_from_counts(self, mode, n_c, total, K):
        if mode == "confusion":
            # COPA eq. (17): the cost of an example of class y is C / T_y^2 (n_c >= 1 here);
            # only the learners on COPA's loss accept this mode (their parameter checks)
            return 1.0 / np.square(n_c)
        # 'balanced': n / (K n_c), scikit-learn's convention
        return total / (K * n_c)
