"""What the commands share, kept importable from here: the names live in
:mod:`._options` (errors and the pieces of the argument parsers), :mod:`._learners` (the
learner of a command line) and :mod:`._loop` (the training loop over chunks).

Import from those modules; this one re-exports every name for code written against it.  A
module-level setting such as ``_WARN_MODEL_BYTES`` is read where it lives (:mod:`._loop`):
patch it there."""

from __future__ import annotations

from ._learners import (
    LEARNERS,
    _check_learner_params,
    _init_params,
    _learner_class,
    _make_learner,
    _model_task,
    _parse_param,
    _resumed_learner,
    _takes_C,
)
from ._loop import (
    _DECOMPRESSION_ERRORS,
    _WARN_MODEL_BYTES,
    _announce_compilation,
    _check_model_size,
    _chunks,
    _concat_rows,
    _LabelRuns,
    _learn_chunk,
    _learn_step,
    _ProgressTable,
    _ranking_labels,
    _read_error,
    _reading,
    _ShuffleBuffer,
    _take_rows,
)
from ._options import (
    CLIError,
    _add_chunk_size,
    _add_command,
    _add_model_in,
    _add_plot,
    _add_vw_options,
    _check_format,
    _error_message,
    _format_label,
    _format_options,
    _positive_float,
    _positive_int,
    _quadratic_argv,
    _stderr_line,
    _vw_width,
)

__all__ = [
    "CLIError",
    "_error_message",
    "_stderr_line",
    "_format_label",
    "_positive_int",
    "_positive_float",
    "_add_command",
    "_add_plot",
    "_add_chunk_size",
    "_add_model_in",
    "_check_format",
    "_add_vw_options",
    "_quadratic_argv",
    "_vw_width",
    "_format_options",
    "LEARNERS",
    "_learner_class",
    "_init_params",
    "_takes_C",
    "_parse_param",
    "_make_learner",
    "_check_learner_params",
    "_model_task",
    "_resumed_learner",
    "_DECOMPRESSION_ERRORS",
    "_ProgressTable",
    "_read_error",
    "_reading",
    "_chunks",
    "_ranking_labels",
    "_learn_step",
    "_learn_chunk",
    "_take_rows",
    "_concat_rows",
    "_ShuffleBuffer",
    "_LabelRuns",
    "_announce_compilation",
    "_WARN_MODEL_BYTES",
    "_check_model_size",
]
