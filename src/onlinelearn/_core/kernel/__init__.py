"""Compiled kernels of the kernel family: Gram blocks of a kernel program, the kernel SVM by dual
coordinate ascent, and the online passes of the kernel learners."""
