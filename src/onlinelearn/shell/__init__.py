"""What every learner needs, once: the plumbing shared by all estimator families.

* :mod:`~onlinelearn.shell.config`: the compile options of the numba core (``njit``);

Nothing here is public API: the estimators import these modules, users import the estimators.
"""
