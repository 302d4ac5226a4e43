"""The requests of ``onlinelearn serve``: bodies read into rows (svmlight, Vowpal Wabbit or
JSON) and checked before anything is queued, the error a bad request gets, and the plain JSON
forms of the replies.  Nothing here touches the model or its lock."""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np

from .._core import svmlight as SK
from .._core.config import njit


class _Body(io.BytesIO):
    """A request body as a binary stream whose name the parser's errors quote."""

    name = "body"


class BadRequest(ValueError):
    """A request the server refuses with a 4xx and one line of reason."""

    def __init__(self, reason: str, status: int = 400):
        super().__init__(reason)
        self.status = status


#: bodies up to this size are tried as one row in the event loop (larger ones: a worker thread)
ROW_BYTES = 1 << 16


class Row:
    """One row on its way to the model's one-row step: float64 ``data`` and int32 0-based
    ``indices`` (no matrix), its ``label`` (None for a prediction) and ``weight`` (None: 1)."""

    __slots__ = ("data", "indices", "label", "weight")

    def __init__(self, data, indices, label=None, weight=None):
        self.data, self.indices, self.label, self.weight = data, indices, label, weight

    @classmethod
    def of(cls, X, y=None, w=None, i=0):
        """Row ``i`` of a parsed request (a CSR matrix and its labels and weights)."""
        a, b = X.indptr[i], X.indptr[i + 1]
        data = np.ascontiguousarray(X.data[a:b], dtype=np.float64)
        indices = np.ascontiguousarray(X.indices[a:b], dtype=np.int32)
        label = None if y is None else y[i].item()
        weight = None if w is None or w[i] == 1.0 else float(w[i])
        return cls(data, indices, label, weight)

    def matrix(self, n_features):
        """The row as the (1, n_features) CSR matrix of the batch path."""
        import scipy.sparse as sp

        nnz = self.indices.shape[0]
        return sp.csr_matrix((self.data, self.indices, np.array([0, nnz])), shape=(1, n_features))

    def as_dict(self) -> dict:
        """{column: value}, the row of a model's ``learn_one`` / ``predict_one``."""
        return dict(zip(self.indices.tolist(), self.data.tolist(), strict=True))


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

    def parse_row(self, body: bytes, content_type: str, labelled: bool, fmt: str = "",
                  quadratic=()) -> Row | None:  # fmt: skip
        """The :class:`Row` of a body that is one plain svmlight line or a JSON body of one
        row, read straight to (values, columns); None for anything else (several rows, Vowpal
        Wabbit lines, a value outside the compiled reader's exact fast path, an error): then
        :meth:`parse` reads the body and says what is wrong, as before."""
        if len(body) > ROW_BYTES or fmt not in ("", "svmlight"):
            return None
        if content_type.startswith("text/x-vw"):
            return None
        if content_type.startswith("application/json"):
            return self._json_one(body, labelled)
        return self._svm_one(body, labelled)

    def _svm_one(self, body: bytes, labelled: bool):
        s = body.strip()
        if not s or b"\n" in s:
            return None
        unlabelled = b":" in s.split(None, 1)[0]
        if unlabelled and labelled:
            return None  # parse() says the line needs one
        status, v, data, indices, top = _svm_row(np.frombuffer(s, dtype=np.uint8), unlabelled)
        if status != 0 or top >= self.n_features:
            return None
        label = None
        if labelled:  # v NaN: a label left to Python's float()
            if self.regressor and v == v:
                label = v
            elif v == v and v == round(v) and abs(v) < 2.0**53:
                label = int(v)
            else:
                return None
        return Row(data, indices, label)

    def _json_one(self, body: bytes, labelled: bool):
        try:
            doc = json.loads(body)
            rows = doc["rows"]
            if type(rows) is not list or len(rows) != 1:
                return None
            idx, vals = self._json_row(rows[0], "row 0")
            label = None
            if labelled:
                labels = doc["labels"]
                if type(labels) is not list or len(labels) != 1:
                    return None
                label = self._json_labels(labels)[0].item()
                if self.regressor and not math.isfinite(label):
                    return None
        except (BadRequest, ValueError, TypeError, KeyError, UnicodeDecodeError):
            return None
        data = np.array(vals, dtype=np.float64)
        if not np.isfinite(data).all():
            return None
        return Row(data, np.array(idx, dtype=np.int32), label)

    def _vw_bits(self) -> int:
        """b of a model trained on hashed (VW) rows: its ``n_features`` is ``2**b``."""
        bits = self.n_features.bit_length() - 1
        if self.n_features != 1 << bits:
            raise BadRequest(
                f"the model has {self.n_features} features, not 2**b: it was not trained on "
                "hashed (VW) rows"
            )
        return bits

    def _parse_vw(self, body: bytes, labelled: bool, quadratic):
        from onlinelearn.io.vw import load_vw

        bits = self._vw_bits()
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
        return X, *self._vw_targets(y, w)

    def _vw_targets(self, y, w):
        """``(y, sample_weight)`` of labelled VW rows, every label present: integer labels for
        a classifier (a fraction is refused), and None for weights that are all 1."""
        if not self.regressor:
            if not np.all(y == np.round(y)):
                raise BadRequest("labels of a classifier must be integers")
            y = y.astype(np.int64)
        return y, (None if np.all(w == 1.0) else w)

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
            idx, vals = self._json_row(row, f"row {i}")
            indices += idx
            values += vals
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
            y = self._json_labels(labels)
        return X, y

    def _json_labels(self, labels: list, where: str = "") -> np.ndarray:
        try:
            y = np.asarray(labels, dtype=np.float64 if self.regressor else np.int64)
        except (TypeError, ValueError):
            raise BadRequest(f"{where}labels must be numbers (integers for a classifier)") from None
        if y.ndim != 1:
            raise BadRequest(f"{where}labels must be a flat list")
        return y

    def _json_row(self, row, where: str):
        """(0-based columns, float values) of one JSON row: a dense list of ``n_features``
        numbers or an object {"1-based index": value}; ``where`` names it in errors."""
        at = f"{where}: " if where else ""
        if isinstance(row, dict):
            items = []
            for k, v in row.items():
                try:
                    j = int(k)
                except ValueError:
                    raise BadRequest(f"{at}feature index {k!r} is not an integer") from None
                if not 1 <= j <= self.n_features:
                    raise BadRequest(f"{at}feature index {j} outside 1..{self.n_features}")
                items.append((j - 1, v))
            items.sort()
        elif isinstance(row, list):
            if len(row) != self.n_features:
                raise BadRequest(f"{at}{len(row)} values, the model has {self.n_features} features")
            items = [(j, v) for j, v in enumerate(row) if v != 0]
        else:
            raise BadRequest(f"{at}a row is a list of numbers or an object index: value")
        indices, values = [], []
        for j, v in items:
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise BadRequest(f"{at}value {v!r} is not a number")
            indices.append(j)
            values.append(float(v))
        return indices, values


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


@contextlib.contextmanager
def _probabilities_of(est):
    """Where the probabilities of ``est`` are computed: a model without ``predict_proba``, or
    one whose call refuses (AttributeError, NotImplementedError, ValueError), is a 422."""
    if not hasattr(est, "predict_proba"):
        raise BadRequest(f"{type(est).__name__} has no predict_proba", status=422)
    try:
        yield
    except (AttributeError, NotImplementedError, ValueError) as exc:
        raise BadRequest(_one_line(exc), status=422) from None


def _plain_list(a) -> list:
    out = np.asarray(a).tolist()
    return [int(v) if isinstance(v, float) and v.is_integer() else v for v in out]


@njit
def _svm_row(line, unlabelled):
    """One svmlight line (without its newline) through the compiled reader of
    ``onlinelearn.io`` (``"0 "`` before it when ``unlabelled``): ``(status, label, data,
    indices, largest index)``, status 0 when the reader took every token on its exact fast path
    (the values are then finite), 1 otherwise (the general path reads the body again)."""
    off = 2 if unlabelled else 0
    n = line.shape[0] + off + 1
    buf = np.empty(n + SK.PAD, dtype=np.uint8)
    buf[0] = 48
    buf[1] = 32
    buf[off : n - 1] = line
    buf[n - 1] = 10
    room = SK.block_room(n)
    data = np.empty(room, dtype=np.float64)
    indices = np.empty(room, dtype=np.int32)
    res = SK.parse_block(buf, n, False, False, False, data, indices, 0)
    nnz = res[3]
    if res[0] != SK.OK or res[8].shape[0] != 0 or res[4].shape[0] != 2:
        return 1, np.nan, data[:0], indices[:0], -1
    return 0, res[5][0], data[:nnz], indices[:nnz], res[11]
