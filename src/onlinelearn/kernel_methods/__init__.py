"""Kernel methods: the kernel SVM by dual coordinate ascent and the kernel online learners."""

from ._online import KernelCOPA, KernelPassiveAggressive, KernelPerceptron
from ._svc import KernelSVC

__all__ = ["KernelSVC", "KernelPerceptron", "KernelPassiveAggressive", "KernelCOPA"]
