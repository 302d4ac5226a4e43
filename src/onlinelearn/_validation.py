"""Former path of :mod:`onlinelearn.shell.validation`, which the ``onlinelearn.framework``
package (written in parallel) imports.  Every name is that of the moved module."""

from .shell import validation
from .shell.former_paths import forwarding

__all__, __getattr__, __dir__ = forwarding(validation)
del validation, forwarding
