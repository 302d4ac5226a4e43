"""Say in words what is wrong with one svmlight line, for the errors of the block parser
(:mod:`onlinelearn.io._blocks`); nothing here parses data."""

from __future__ import annotations

from .._core import svmlight as K


def _is_data_line(line: bytes) -> bool:
    """True if the line holds an example (not blank, not only a comment)."""
    s = line.lstrip()
    return bool(s) and not s.startswith(b"#")


def _describe_line(
    line: bytes, n_features: int | None, zero_based: bool, multilabel: bool = False
) -> str | None:
    """Say in words what is wrong with one svmlight line, or None if nothing obvious is.

    Only used to explain an error found by the parser; it never parses data.
    """
    tokens = line.split(b"#", 1)[0].split()
    if not tokens:
        return None
    label = tokens[0]
    if multilabel and b":" in label:
        tokens = [b"", *tokens]
    elif multilabel:
        for part in label.split(b","):
            try:
                float(part)
            except ValueError:
                return f"label {label.decode(errors='replace')!r} is not a list of numbers"
    elif b"," in label:
        text = label.decode(errors="replace")
        return f"label {text!r} is a list of labels (multi-label data: pass multilabel=True)"
    else:
        try:
            float(label)
        except ValueError:
            return f"label {label.decode(errors='replace')!r} is not a number"
    lowest = 0 if zero_based else 1
    previous = None
    for pos, tok in enumerate(tokens[1:]):
        text = tok.decode(errors="replace")
        idx, sep, val = tok.partition(b":")
        if not sep:
            return f"token {text!r} is not of the form index:value"
        if idx == b"qid" and pos == 0:
            try:
                int(val)
            except ValueError:
                return f"qid in {text!r} is not an integer"
            continue
        try:
            i = int(idx)
        except ValueError:
            return f"feature index in {text!r} is not an integer"
        if i < lowest:
            return f"feature index {i} is below {lowest} (indices are {lowest}-based)"
        if i - lowest > K.INT32_MAX:
            return (
                f"feature index {i} is beyond the range of the sparse matrix indices "
                f"(at most {K.INT32_MAX + lowest})"
            )
        try:
            float(val)
        except ValueError:
            return f"value in {text!r} is not a number"
        if previous is not None and i <= previous:
            return f"feature indices are not strictly increasing ({previous} then {i})"
        width = i + 1 if zero_based else i
        if n_features is not None and width > n_features:
            return f"feature index {i} is larger than n_features={n_features}"
        previous = i
    return None


def _snippet(line: bytes, limit: int = 60) -> str:
    text = line.rstrip(b"\r\n").decode(errors="replace")
    return text if len(text) <= limit else text[: limit - 3] + "..."
