"""What every learner needs, once: the plumbing shared by all estimator families.

* :mod:`~onlinelearn._core.config`: the compile options of the numba core (``njit``);
* :mod:`~onlinelearn.shell.params`: the constructor parameters, each declared once (default
  and scikit-learn constraints) and shared by the estimators that have it; ``__init__`` and
  ``_parameter_constraints`` are built from those declarations;
* :mod:`~onlinelearn.shell.validation`: every check of the input (X, y, sample weights, label
  sets, sparse structure), and through it those of a pass's output
  (:mod:`~onlinelearn.shell.output_checks`): the one module the estimators import for checks;
  it re-exports the forms the core reads (:mod:`~onlinelearn.shell.encoding`: a batch as CSR
  arrays, labels as int codes);
* :mod:`~onlinelearn.shell.snapshot`: the snapshot restored when a call fails, so that a failed
  call changes nothing;
* :mod:`~onlinelearn.shell.weights`: per-example step multipliers (``sample_weight`` times the
  class weight);
* :mod:`~onlinelearn.shell.meta`: an estimator's model-file metadata (class, JSON parameters) and
  labels from decision values;
* :mod:`~onlinelearn.shell.atomic`: files replaced atomically (model files, predictions);
* :mod:`~onlinelearn.shell.proba`: ``predict_proba`` of every classifier (the logistic loss's
  own probabilities, or a calibration learned online from progressive-validation scores), with
  the maps and their window in :mod:`~onlinelearn.shell.calibration`;
* :mod:`~onlinelearn.shell.online`: ``fit``, ``partial_fit``, ``partial_fit_predict`` and the one
  transaction behind them (snapshot, validation at the boundary, the family's passes, restore on
  failure), where each family supplies its state and its pass as hooks;
* the linear learners' shell: :mod:`~onlinelearn.shell.base` (``OnlineLinearClassifier``:
  validation, label sets, class weights; public as ``onlinelearn.base.OnlineLinearClassifier``),
  :mod:`~onlinelearn.shell.linear_pass` (the compiled pass and the checks after it),
  :mod:`~onlinelearn.shell.state_columns` (its arrays, one column per class, grown when labels
  arrive), :mod:`~onlinelearn.shell.readout` (the weights that predict, ``coef_``,
  ``decision_function``) and :mod:`~onlinelearn.shell.linear_state` (rebuilding any estimator
  from a model file, ``merge_models``); the regressors' in :mod:`~onlinelearn.shell.regression`.

A family's base class holds everything an estimator of its kind does, its methods written in the
modules above and taken as its own (:func:`~onlinelearn.shell.meta.with_methods`), so that an
estimator's MRO holds few classes (its own, its family's base and the probabilities').

Nothing here is public API: the estimators import these modules, users import the
estimators.
"""
