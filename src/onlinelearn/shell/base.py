"""The online estimator base: partial_fit plumbing, label sets, weights, averaging read-out.

A learner is a point on the three axes of the primal-dual framework (DESIGN.md): a link
(:mod:`onlinelearn._core.links`), a loss (binary hinge for one weight vector, multiclass hinge
with the max-loss rival, COPA's confusion loss) and a dual ascent step
(:mod:`onlinelearn._core.steps`).  Subclasses only declare their codes and parameters; this
module owns everything else:

* validation before any change (a rejected batch leaves the model as it was), and a snapshot
  restored if the compiled pass reports a non-finite weight;
* growing label sets in ``partial_fit`` (classes are kept sorted; a binary model becomes a
  multiclass one when a third label arrives: the vector w becomes the columns (-w/2, w/2), same
  decisions and, for the Euclidean link, the same decision values;
  :mod:`onlinelearn.shell.state_columns`);
* ``class_weight`` (dict, ``'balanced'``, and for COPA ``'confusion'``) with exact counts in
  ``fit`` and running counts in ``partial_fit``, times ``sample_weight``
  (:mod:`onlinelearn.shell.weights`, shared with the kernel online learners);
* lazy averaging read-out (:mod:`onlinelearn.shell.readout`) and the model state for files.

The compiled pass and the checks after it are in :mod:`onlinelearn.shell.linear_pass`; the
snapshots behind "a failed call changes nothing" in :mod:`onlinelearn.shell.snapshot`;
rebuilding from a model file and ``merge_models`` in :mod:`onlinelearn.shell.linear_state`.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import links as L
from .._core import steps as S
from .._core.checks import all_finite
from .._core.state import pass_codes
from . import events
from . import validation as V
from .linear_pass import LinearPass
from .meta import state_meta, with_methods, with_tags
from .online import Call, ProgressiveMixin, check_predict_with
from .params import POSITIVE, SHARED, Param, constraints_of, param_names, validate_once
from .proba import ProbabilityMixin, held_out_request
from .readout import LinearReadoutMixin
from .snapshot import _WEIGHT_DTYPES, SnapshotMixin
from .state_columns import StateColumnsMixin
from .weights import ExampleWeightsMixin

__all__ = ["LINEAR", "OnlineLinearClassifier"]

#: the declarations of the linear learners' parameters (:mod:`onlinelearn.shell.params`): the
#: shared ones, ``intercept_scaling`` with ``'auto'`` and the weights' ``dtype``
LINEAR = {
    **SHARED,
    "intercept_scaling": Param(1.0, POSITIVE, StrOptions({"auto"})),
    "dtype": Param(None, None, StrOptions({"float32", "float64"}), type, np.dtype),
}
#: the parameters every linear learner has (each orders them in its own signature)
_COMMON = "n_epochs shuffle average random_state fit_intercept intercept_scaling class_weight dtype"


@with_methods(LinearPass, ProgressiveMixin, StateColumnsMixin, LinearReadoutMixin, SnapshotMixin,
              ExampleWeightsMixin)  # fmt: skip
class OnlineLinearClassifier(ProbabilityMixin, ClassifierMixin, BaseEstimator):
    """Base class of the online linear classifiers. Not for direct use.

    It holds everything a linear learner does: the one transaction and ``fit`` /
    ``partial_fit`` / ``partial_fit_predict`` (:mod:`.online`), the state's columns
    (:mod:`.state_columns`), the read-out (:mod:`.readout`), the snapshots (:mod:`.snapshot`),
    the example weights (:mod:`.weights`) and the compiled pass (:mod:`.linear_pass`), taken
    from those modules as its own methods (:func:`~onlinelearn.shell.meta.with_methods`).

    A subclass is a point of the framework: it implements :meth:`_configuration`, which builds
    the (link, loss, step) objects of :mod:`onlinelearn.framework` from its parameters (a named
    learner is that and its defaults), and may set ``_always_multiclass`` (one weight vector
    per class even for two classes).  The codes and parameters the compiled passes read come
    from those objects (:meth:`_codes`).
    """

    _always_multiclass = False
    _class_weight_modes = ("balanced",)

    _parameter_constraints: dict = constraints_of({n: LINEAR[n] for n in _COMMON.split()})

    # ------------------------------------------------------------------ the configuration
    def _configuration(self):
        """``(link, loss, step)``: the learner as objects of :mod:`onlinelearn.framework`,
        built from its parameters."""
        raise NotImplementedError

    def _config(self):
        """:meth:`_configuration`, built once and kept until a parameter is set again
        (:meth:`__setattr__`; the read-out asks for it many times a call).  When an object
        refuses a value, the parameter checks run first, so that a bad parameter is reported
        by its own check."""
        config = self.__dict__.get("_config_cache")
        if config is None:
            try:
                config = self._configuration()
            except (TypeError, ValueError):
                self._validate_params_once()  # a bad parameter: its own check's message
                raise
            self.__dict__["_config_cache"] = config
        return config

    def __sklearn_tags__(self):
        return with_tags(self, super().__sklearn_tags__())

    def __setattr__(self, name, value):
        if name in param_names(type(self)):
            self.__dict__.pop("_config_cache", None)  # built again from the new value
            self.__dict__.pop("_event", None)
        super().__setattr__(name, value)

    # ------------------------------------------------------------------ one event at a time
    #: ``partial_fit`` on one row of a known label: the event road (shell.online, shell.events)
    _event_partial_fit = events.partial_fit_row
    learn_one = events.learn_one
    predict_one = events.predict_one
    predict_proba_one = events.predict_proba_one

    @property
    def _link(self) -> int:
        """The link's code (:mod:`onlinelearn._core.links`)."""
        return self._config()[0].code

    def _step_code(self) -> int:
        _, loss, step = self._config()
        return S.COPA if loss.closed_form_step == "copa" else step.code

    def _float_params(self, n_weights: int) -> dict:
        """C, gamma (margin), eta, p, log_n for the core (defaults in :meth:`_codes`): the
        link's (eta of the entropy link, p, log n), the step's (C; eta of the conservative step,
        multiplied into the link's) and the hinge's margin."""
        link, loss, step = self._config()
        fp = dict(link.params(n_weights))
        sp = dict(step.params())
        eta = fp.get("eta", 1.0) * sp.pop("eta", 1.0)
        fp.update(sp)
        fp["eta"] = eta
        fp.update(loss.pass_params())
        return fp

    def _balanced_flag(self) -> int:
        return int(bool(self._config()[0].balanced))

    def _check_params(self):
        """Rules spanning two parameters (after the declarative constraints)."""

    def _auto_intercept_scaling(self, batch, fit_mode=True):
        """The value b of the intercept feature that ``intercept_scaling='auto'`` takes, from
        the first training batch: 0.1 on sparse input, 1 on dense input (scikit-learn's SGD
        damps its intercept on sparse input, ``SPARSE_INTERCEPT_DECAY = 0.01``).  This rule
        reads the storage format; PA, Winnow and the p-norm Perceptron take the format-free
        :func:`.intercept.typical_value_scaling` instead, and a subclass may choose another rule.
        ``fit_mode``: ``batch`` is the whole training set of ``fit`` (False: the first batch
        of a stream begun by ``partial_fit``)."""
        dense = batch.indices.shape[0] != batch.data.shape[0]
        return 1.0 if dense else 0.1

    def _epoch_stop_rule(self, n_rows):
        """None (this default): ``fit`` makes ``n_epochs`` passes.  A subclass may return a
        callable, told the per-row losses of each epoch of ``fit`` (made before each row's
        update), that returns True to stop before ``n_epochs``."""
        return None

    def _intercept_value(self):
        """b: the value of the intercept feature (0 without intercept).  A number given as
        ``intercept_scaling`` is used as it is; ``'auto'`` uses ``intercept_scaling_``, fixed
        by the first training batch."""
        if not self.fit_intercept:
            return 0.0
        if isinstance(self.intercept_scaling, str):
            return float(self.intercept_scaling_)
        return float(self.intercept_scaling)

    def _weights_dtype(self, x_dtype):
        """dtype of the weights theta: ``dtype`` if given, else that of the input (float32 X,
        float32 weights: half the memory traffic of a pass, which is bound by it).  The
        averaging sums, scores, norms and counters stay float64 either way."""
        want = getattr(self, "dtype", None)
        if want is None:
            return np.dtype(x_dtype)
        try:
            dt = np.dtype(want)
        except TypeError:
            dt = None
        if dt not in _WEIGHT_DTYPES:
            raise ValueError(f"dtype must be None, 'float32' or 'float64', got {want!r}")
        return dt

    # ------------------------------------------------------------------ parameters to core
    def _codes(self, n_weights):
        fp = {"C": 1.0, "gamma": 0.0, "eta": 1.0, "p": 2.0, "log_n": 1.0}
        fp.update(self._float_params(n_weights))
        b = self._intercept_value()
        step = self._step_code()
        return pass_codes(
            link=self._link,
            step=step,
            average=self.average,
            balanced=self._balanced_flag(),
            C=fp["C"],
            gamma=fp["gamma"],
            eta=fp["eta"],
            p=fp["p"],
            b=b,
            log_n=fp["log_n"],
            dual_gamma=self._dual_margin(),
            dual_quad=0.25 if step == S.PA2 else 0.0,
            # the weighted average (only the learners with ``average_power`` have one)
            avg_power=getattr(self, "average_power", 0.0),
        )

    def _prepare(self, X, y, classes, sample_weight, reset):
        """Validate everything; return the batch and the new sorted label set. No mutation
        except ``n_features_in_`` on the first call (restored on failure by the caller)."""
        self._validate_params_once()
        if not reset:
            self._check_average_state()
        in_pass = self._finite_in_pass()
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=reset, finite=not in_pass)
        if classes is not None:
            classes = V.check_classes(classes, y)
        new_classes = V.grown_labels(None if reset else self.classes_, y, classes)
        V.check_class_weight_keys(self.class_weight, new_classes)
        batch = V.CSRBatch(X)
        if in_pass and len(new_classes) < 2 and not all_finite(batch.data):
            V.raise_nonfinite_x(self, batch.data)  # one class: no pass reads the values
        return batch, y, sw, new_classes

    def _validate_params_once(self):
        """Parameter checks, skipped while the parameters are the very objects last validated
        (dicts compared by value): a stream of ``partial_fit`` calls pays for them once."""
        validate_once(self, self._validate_all_params)

    def _validate_all_params(self):
        self._validate_params()
        self._check_params()
        if isinstance(self.class_weight, dict):
            for lab, val in self.class_weight.items():
                if not (isinstance(val, numbers.Real) and np.isfinite(val) and val >= 0):
                    raise ValueError(
                        f"class_weight[{lab!r}] = {val!r}: class weights must be finite "
                        "numbers >= 0 (labels not seen yet are allowed: they may arrive later)."
                    )

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap,
               predict_with="current"):  # fmt: skip
        """The linear family's set-up of a call (:mod:`onlinelearn.shell.online`): validate,
        grow the label set, the example weights, and what the pass scores for the calibration.

        ``predict_with`` (``partial_fit_predict``): ``'current'``, the current iterate w_t
        (the learner's own prediction, whose mistakes are ``n_mistakes_``); ``'average'``
        (``average=True``, Euclidean learners: Perceptron, PA, COPA, where it costs one more
        read of the row), the averaged weights in force before each row.  The snapshot keeps
        the arrays by reference; only what this call can change is copied (nothing when fit
        starts from new arrays; the touched rows for a sparse Euclidean batch)."""
        predict_average = check_predict_with(self, predict_with, self._link == L.EUCLID)
        rows = None
        batch, y, sw, new_classes = self._prepare(X, y, classes, sample_weight, reset=first)
        if isinstance(self.intercept_scaling, str) and (
            first or "intercept_scaling_" not in self.__dict__
        ):
            self.intercept_scaling_ = self._auto_intercept_scaling(batch, fit_mode)
        if first:
            self._init_state(new_classes, batch.n_cols, batch.data.dtype)
        else:
            if len(new_classes) == len(self.classes_):
                rows = self._touched_rows(batch)
            self._save_arrays(snap, rows)
            self._grow(new_classes)
        y_codes = V.label_codes(self.classes_, y)
        n = batch.n_rows
        counts = np.bincount(y_codes, minlength=len(self.classes_)) if fit_mode else None
        # the calibration's held-out rows (the last m of a one-epoch fit or of a partial_fit),
        # scored in the pass
        req = held_out_request(self, n) if not fit_mode or self.n_epochs == 1 else None
        return Call(
            n=n, batch=batch, y_codes=y_codes, rows=rows, counts=counts, req=req,
            weights=self._example_weights(y_codes, sw, counts),
            stop=self._epoch_stop_rule(n) if fit_mode else None,
            predict_average=predict_average, pred=np.zeros(n, dtype=np.int64), loss=np.zeros(n),
        )  # fmt: skip

    def _epoch(self, call, order):
        """One compiled pass (:meth:`_run`) over ``order`` (None: the rows in their order)."""
        n, req = call.n, call.req
        if order is None:
            order = np.arange(n, dtype=np.int64)
        hold = None if req is None else (n - req.m, req.m)
        held = self._run(call.batch, call.y_codes, call.weights, order, call.pred, call.loss,
                         call.rows, call.predict_average, hold)  # fmt: skip
        if req is not None:
            req.rows, req.scores = order[n - req.m :], self._held_out_view(held, req.m)
        return call.stop is not None and call.stop(call.loss)

    def _finish(self, call):
        if call.counts is not None:
            self.class_counts_ = call.counts.astype(np.int64)
        else:
            self._count_classes(call.y_codes)
        return self.classes_[call.pred]

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        """(meta, arrays) describing the fitted model completely (see docs/CONTRACT.md)."""
        if "classes_" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "classes_")
        extra = {"n_iter_": int(self.n_iter_)} if "n_iter_" in self.__dict__ else {}
        meta = state_meta(self, **extra)
        arrays = {"classes_": np.asarray(self.classes_), "theta": self._theta}
        if self._u_layout():
            arrays["U"] = self._A
        else:
            arrays["A"], arrays["lastS"] = self._A, self._lastS
        if isinstance(self.intercept_scaling, str) and self.fit_intercept:
            arrays["intercept_scaling_"] = np.array([self.intercept_scaling_], dtype=np.float64)
        arrays["st"] = self._st
        arrays["class_counts"] = self.class_counts_
        return meta, arrays
