"""Compiled solvers of the SVM family (numba only; no scikit-learn, no estimators).

* :mod:`.dcd`     -- dual coordinate ascent for the linear SVM (the names the estimator uses):
  :mod:`.dcd_binary` (Hsieh et al. 2008: binary and one-vs-rest with the hinge (L1) or squared
  hinge (L2) loss), :mod:`.dcd_cs` (the Crammer-Singer multiclass dual by the sequential dual
  method; Keerthi et al. 2008; LIBLINEAR ``-s 4``) and :mod:`.dcd_common` (clock, random
  generator, packed rows);
* :mod:`.pegasos` -- the primal estimated sub-gradient solver (Shalev-Shwartz et al. 2007).

Input rows are in the CSR form of :class:`onlinelearn.shell.validation.CSRBatch`: dense C-contiguous
input is passed without a copy, ``indices`` = arange(d) shared by every row; the dual
coordinate solvers read them packed (:func:`.dcd_common.pack_rows`: one (index, value) record
per nonzero, as LIBLINEAR stores them).  The intercept is
the weight of an extra feature of constant value ``b`` (0: no intercept), stored last.
"""
