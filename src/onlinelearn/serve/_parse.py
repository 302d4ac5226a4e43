"""The requests of ``onlinelearn serve``: bodies read into rows (svmlight, Vowpal Wabbit or
JSON) and checked before anything is queued, the error a bad request gets, and the plain JSON
forms of the replies.  Nothing here touches the model or its lock."""

from __future__ import annotations

import io
import json

import numpy as np


class _Body(io.BytesIO):
    """A request body as a binary stream whose name the parser's errors quote."""

    name = "body"


class BadRequest(ValueError):
    """A request the server refuses with a 4xx and one line of reason."""

    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.status = status


class _RequestParsing:
    """The parsing methods of :class:`~onlinelearn.serve.ModelServer`: they read only the
    server's ``n_features`` (the model's width) and ``regressor`` (float or integer labels),
    never the model itself, so they run without the lock."""

    def parse(self, body: bytes, content_type: str, labelled: bool, fmt: str = "", quadratic=()):
        """``(X, y, sample_weight)`` of a request body; ``y`` is None for unlabelled rows,
        ``sample_weight`` None unless Vowpal Wabbit lines give importance weights.

        ``fmt``: ``'vw'`` (or a ``text/x-vw`` content type) reads Vowpal Wabbit lines hashed
        into the model's ``2**b`` columns (``onlinelearn.io.vw``; ``quadratic``: the ``-q``
        pairs); otherwise JSON by content type, else svmlight lines."""
        if not body.strip():
            raise BadRequest('empty body: send svmlight lines or JSON {"rows": [...]}')
        w = None
        if fmt == "vw" or content_type.startswith("text/x-vw"):
            X, y, w = self._parse_vw(body, labelled, quadratic)
        elif fmt not in ("", "svmlight"):
            raise BadRequest(f"unknown format {fmt!r}: svmlight, vw or a JSON body")
        elif content_type.startswith("application/json"):
            X, y = self._parse_json(body, labelled)
        else:
            X, y = self._parse_lines(body, labelled)
        if X.shape[0] == 0:
            raise BadRequest("no rows in the body")
        data = X.data if hasattr(X, "data") else X
        if not np.all(np.isfinite(data)):
            raise BadRequest("non-finite feature value (NaN or inf)")
        if y is not None and self.regressor and not np.all(np.isfinite(y)):
            raise BadRequest("non-finite target value")
        return X, y, w

    def _parse_vw(self, body: bytes, labelled: bool, quadratic):
        from onlinelearn.io.vw import load_vw

        bits = self.n_features.bit_length() - 1
        if self.n_features != 1 << bits:
            raise BadRequest(
                f"the model has {self.n_features} features, not 2**b: it was not trained on "
                "hashed (VW) rows"
            )
        try:
            X, y, w = load_vw(
                _Body(body if body.endswith(b"\n") else body + b"\n"),
                n_bits=bits,
                interactions=list(quadratic) or None,
                label_dtype=None,
                return_weights=True,
            )
        except ValueError as exc:
            raise BadRequest(_one_line(exc)) from None
        if not labelled:
            return X, None, None
        missing = np.flatnonzero(np.isnan(y))
        if missing.size:
            raise BadRequest(f"line {missing[0] + 1}: a learn row needs a label")
        if not self.regressor:
            if not np.all(y == np.round(y)):
                raise BadRequest("labels of a classifier must be integers")
            y = y.astype(np.int64)
        return X, y, (None if np.all(w == 1.0) else w)

    def _parse_lines(self, body: bytes, labelled: bool):
        from onlinelearn.io import load_svmlight

        lines = body.replace(b"\r\n", b"\n").split(b"\n")
        fixed = []
        has_label = []
        for line in lines:
            s = line.strip()
            if not s or s.startswith(b"#"):
                continue
            first = s.split(None, 1)[0]
            unlabelled = b":" in first
            has_label.append(not unlabelled)
            fixed.append(b"0 " + s if unlabelled else s)
        if labelled and not all(has_label):
            raise BadRequest(f"line {has_label.index(False) + 1}: a learn row needs a label")
        try:
            X, y = load_svmlight(
                _Body(b"\n".join(fixed) + b"\n"),
                n_features=self.n_features,
                label_dtype=np.float64 if (self.regressor or not labelled) else np.int64,
            )
        except ValueError as exc:
            raise BadRequest(_one_line(exc)) from None
        return X, (y if labelled else None)

    def _parse_json(self, body: bytes, labelled: bool):
        import scipy.sparse as sp

        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest(f"invalid JSON: {_one_line(exc)}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise BadRequest('JSON body must be an object with a list "rows"')
        rows = doc["rows"]
        indptr, indices, values = [0], [], []
        for i, row in enumerate(rows):
            if isinstance(row, dict):
                items = []
                for k, v in row.items():
                    try:
                        j = int(k)
                    except ValueError:
                        msg = f"row {i}: feature index {k!r} is not an integer"
                        raise BadRequest(msg) from None
                    if not 1 <= j <= self.n_features:
                        raise BadRequest(f"row {i}: feature index {j} outside 1..{self.n_features}")
                    items.append((j - 1, v))
                items.sort()
            elif isinstance(row, list):
                if len(row) != self.n_features:
                    raise BadRequest(
                        f"row {i}: {len(row)} values, the model has {self.n_features} features"
                    )
                items = [(j, v) for j, v in enumerate(row) if v != 0]
            else:
                raise BadRequest(f"row {i}: a row is a list of numbers or an object index: value")
            for j, v in items:
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise BadRequest(f"row {i}: value {v!r} is not a number")
                indices.append(j)
                values.append(float(v))
            indptr.append(len(indices))
        X = sp.csr_matrix(
            (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int32), indptr),
            shape=(len(rows), self.n_features),
        )
        y = None
        if labelled:
            labels = doc.get("labels")
            if not isinstance(labels, list) or len(labels) != len(rows):
                raise BadRequest('a learn body needs "labels", one per row')
            try:
                y = np.asarray(labels, dtype=np.float64 if self.regressor else np.int64)
            except (TypeError, ValueError):
                raise BadRequest("labels must be numbers (integers for a classifier)") from None
            if y.ndim != 1:
                raise BadRequest("labels must be a flat list")
        return X, y


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _plain_list(a) -> list:
    out = np.asarray(a).tolist()
    return [int(v) if isinstance(v, float) and v.is_integer() else v for v in out]
