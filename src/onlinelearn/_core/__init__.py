"""Compiled core (numba only). Imports neither scikit-learn nor the estimators.

Modules, by the three axes of the primal-dual framework (Shalev-Shwartz 2007, ch. 3-5):

* :mod:`.sparse`  -- the few row operations every kernel uses (dot with K columns, squared norm);
* :mod:`.links`   -- complexity function f / link grad f*  (Euclidean, entropy, p-norm);
* :mod:`.steps`   -- dual ascent steps (conservative, aggressive PA / PA-I / PA-II);
* :mod:`.copa`    -- COPA's closed-form multi-variable step;
* :mod:`.online_loop` -- one pass over a batch: scores -> loss -> step -> update -> lazy average.

Dense input is passed in CSR form without copying: ``data`` is the C-contiguous array
raveled, ``indices`` is ``arange(d)`` (shared by all rows) and ``indptr`` is
``arange(0, n*d+1, d)``, so a single compiled code path serves both layouts.
"""
