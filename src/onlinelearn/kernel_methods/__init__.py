"""Kernel methods: the kernel SVM by dual coordinate ascent and the kernel online learners."""

from ._online import KernelCOPA, KernelPassiveAggressive, KernelPerceptron

__all__ = ["KernelPerceptron", "KernelPassiveAggressive", "KernelCOPA"]
