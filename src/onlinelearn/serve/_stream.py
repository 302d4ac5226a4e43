"""``POST /learn/stream``: labelled rows as newline-delimited lines on one connection, read as
they arrive and learned in order.

Lines.  The body is cut into lines as it arrives; every line counts, blank and comment lines
too, so that line N is the body's N-th line.  The rows are in one of the server's formats:
svmlight lines (the default), Vowpal Wabbit lines (``?format=vw``, ``&q=ab``, or
``Content-Type: text/x-vw``) or JSON lines (``Content-Type: application/x-ndjson`` or
``application/json``), each line an object ``{"row": ROW, "label": y}`` or a whole /learn body
``{"rows": [...], "labels": [...]}``.

Calls.  The rows of lines 1..B, B+1..2B, ... (B = ``?batch=``, default :data:`DEFAULT_BATCH`)
are each learned by one call of the batch pass (``partial_fit_predict``), a call of one row by
the model's one-row step; the rows of one line (a JSON line of several rows) are never split.
The model is then, every array of its model file, that of ``partial_fit`` called on each group
of B lines' rows in turn.  Its weights and counters are those of one ``partial_fit`` per row
whatever B; so is its probability calibration for the linear classifiers (Perceptron, PA,
COPA: the stream rule of docs/probabilities.md), so for them the whole model is that of one
``partial_fit`` per row.  The other learners' calibration sees a call's rows together:
``?batch=1`` (one call per row, slower) gives them the model of one ``partial_fit`` per row.
Other learn requests arriving meanwhile are learned between two calls, never inside one.

Failures.  A malformed line (400), a row the model refuses (422) or a line longer than
``--max-body-bytes`` (413) stops the stream there: every row before that line is learned, none
at or after it; the reply names the line and says how many rows were learned.  A client that
disconnects gets its complete lines learned.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ._parse import BadRequest, _one_line

#: lines per call of the batch pass, by default
DEFAULT_BATCH = 1000
#: lines of the body parsed at once (a multiple of the batch), at least
JOB_LINES = 1024
#: parsed blocks of one stream queued for the writer at once
IN_FLIGHT = 2
#: after a failure, bytes of the body still read (and dropped) before the reply, so that a
#: client that sends its body before reading gets the reply rather than a reset connection
DRAIN_BYTES = 64 * 2**20

_WHERE = re.compile(r"^stream: line \d+: ")


class LineError(BadRequest):
    """A line of a stream that cannot be learned: ``line`` its number, ``prefix`` the parsed
    rows of its block before it ``(X, y, w, lines)`` (or None)."""

    def __init__(self, line: int, reason: str, status: int = 400, prefix=None):
        super().__init__(f"line {line}: {reason}", status)
        self.line = line
        self.prefix = prefix


class _StreamParsing:
    """The stream methods of :class:`~onlinelearn.serve.ModelServer` (no lock, no model); the
    checks of VW rows, ``_vw_bits`` and ``_vw_targets``, are those of the request parsing."""

    def stream_format(self, content_type: str, fmt: str = "") -> str:
        if fmt == "vw" or content_type.startswith("text/x-vw"):
            self._vw_bits()
            return "vw"
        if fmt not in ("", "svmlight"):
            raise BadRequest(f"unknown format {fmt!r}: svmlight, vw or JSON lines")
        if content_type.startswith(("application/json", "application/x-ndjson",
                                    "application/jsonl")):  # fmt: skip
            return "json"
        return "svmlight"

    def parse_block(self, kind: str, part: bytes, first_line: int, quadratic=()):
        """``(X, y, w, lines)`` of the complete lines ``part`` whose first is line
        ``first_line`` of the stream; ``lines`` the line of each row.  Raises
        :class:`LineError` for the first line that cannot be learned."""
        if kind == "json":
            return self._json_lines(part, first_line)
        try:
            return self._lines_block(kind, part, first_line, quadratic)
        except BadRequest:
            pass
        # which line: each line alone (only on this path), then the rows before it
        lines = part.split(b"\n")
        offset = 0
        for k, line in enumerate(lines):
            try:
                self._lines_block(kind, line + b"\n", first_line + k, quadratic)
            except BadRequest as exc:
                prefix = self._lines_block(kind, part[:offset], first_line, quadratic)
                raise LineError(first_line + k, _WHERE.sub("", str(exc)), prefix=prefix) from None
            offset += len(line) + 1
        raise LineError(first_line, "the block cannot be read")  # pragma: no cover

    def _lines_block(self, kind, part: bytes, first_line: int, quadratic):
        import scipy.sparse as sp

        from onlinelearn._core import svmlight as SK

        n = len(part)
        if n == 0:
            return _empty(self.n_features, self.regressor)
        buf = np.empty(n + SK.PAD, dtype=np.uint8)
        buf[:n] = np.frombuffer(part, dtype=np.uint8)
        try:
            if kind == "vw":
                from onlinelearn.io import vw

                opt = vw._VWOptions("stream", self._vw_bits(), list(quadratic) or None,
                                    np.float64, None)  # fmt: skip
                block, _ = vw._parse_part(buf, n, first_line - 1, opt)
                data, w = block.X_data, block.weights
            else:
                from onlinelearn.io._blocks import _Options, _parse_part

                head = part.lstrip().split(None, 1)[:1] if part.count(b"\n") <= 1 else ()
                if head and b":" in head[0] and not head[0].startswith(b"#"):
                    raise BadRequest("a learn row needs a label")
                label_dtype = np.float64 if self.regressor else np.int64
                opt = _Options("stream", self.n_features, np.float64, False, label_dtype, False)
                block, _ = _parse_part(buf, n, first_line - 1, opt)
                data, w = block.data, None
        except ValueError as exc:
            raise BadRequest(_one_line(exc)) from None
        y = block.labels
        if kind == "vw":
            if np.isnan(y).any():
                raise BadRequest("a learn row needs a label")
            y, w = self._vw_targets(y, w)
        elif self.regressor and not np.all(np.isfinite(y)):
            raise BadRequest("non-finite target value")
        if kind == "vw" and self.n_features > 1 << 31:  # pragma: no cover - 2**30 at most
            raise BadRequest("too many features")
        indptr = block.indptr
        if indptr.shape[0] and indptr[-1] < 2**31:
            indptr = indptr.astype(np.int32)
        X = sp.csr_matrix((data, block.indices, indptr), shape=(len(y), self.n_features))
        return X, y, w, np.asarray(block.lines, dtype=np.int64)

    def _json_lines(self, part: bytes, first_line: int):
        import scipy.sparse as sp

        indptr, indices, values, labels, lines = [0], [], [], [], []

        def done():
            y = self._json_labels(labels) if labels else _empty(1, self.regressor)[1]
            X = sp.csr_matrix(
                (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int32),
                 np.asarray(indptr, dtype=np.int64)),
                shape=(len(lines), self.n_features),
            )  # fmt: skip
            return X, y, None, np.asarray(lines, dtype=np.int64)

        for k, line in enumerate(part.split(b"\n")):
            if not line.strip():
                continue
            no = first_line + k
            mark = (len(indptr), len(indices), len(labels))  # to undo this line's rows
            try:
                rows, ys = _json_rows(line)
                if len(rows) != len(ys):
                    raise BadRequest('"labels" must have one label per row')
                for i, row in enumerate(rows):
                    idx, vals = self._json_row(row, f"row {i}" if len(rows) > 1 else "")
                    if not np.all(np.isfinite(vals)):
                        raise BadRequest("non-finite feature value (NaN or inf)")
                    indices += idx
                    values += vals
                    indptr.append(len(indices))
                    lines.append(no)
                y = self._json_labels(ys)
                if self.regressor and not np.all(np.isfinite(y)):
                    raise BadRequest("non-finite target value")
                labels += y.tolist()
            except BadRequest as exc:
                del indptr[mark[0] :], indices[mark[1] :], values[mark[1] :]
                del labels[mark[2] :], lines[mark[2] :]
                raise LineError(no, str(exc), prefix=done()) from None
        return done()


def _json_rows(line: bytes):
    try:
        doc = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"invalid JSON: {_one_line(exc)}") from None
    if isinstance(doc, dict) and "row" in doc:
        if "label" not in doc:
            raise BadRequest('a learn line needs a "label"')
        return [doc["row"]], [doc["label"]]
    if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
        labels = doc.get("labels")
        if not isinstance(labels, list):
            raise BadRequest('a learn line needs "labels", one per row')
        return doc["rows"], labels
    raise BadRequest('a JSON line is {"row": ROW, "label": y} or {"rows": [...], "labels": [...]}')


def _empty(n_features, regressor):
    import scipy.sparse as sp

    y = np.empty(0, dtype=np.float64 if regressor else np.int64)
    return sp.csr_matrix((0, n_features)), y, None, np.empty(0, dtype=np.int64)


class Lines:
    """Cuts a body, as its chunks arrive, into parts of ``job_lines`` complete lines."""

    def __init__(self, job_lines: int, max_line: int):
        self.job_lines = job_lines
        self.max_line = max_line
        self.pending = bytearray()  # complete lines not yet in a part
        self.pending_lines = 0
        self.partial = bytearray()  # the line being received
        self.next_line = 1  # the number of the first pending line
        self.too_long = None  # the number of a line longer than max_line

    def feed(self, chunk: bytes) -> list:
        """The parts ``(first line, bytes)`` that ``chunk`` completes."""
        cut = chunk.rfind(b"\n")
        if cut < 0:
            self.partial += chunk
        else:
            if len(self.partial) + cut > self.max_line and (
                len(self.partial) + chunk.find(b"\n") > self.max_line
            ):
                self.too_long = self.next_line + self.pending_lines
                return []
            self.pending += self.partial
            self.pending += memoryview(chunk)[: cut + 1]
            self.partial = bytearray(memoryview(chunk)[cut + 1 :])
            self.pending_lines += chunk.count(b"\n")
        if len(self.partial) > self.max_line:
            self.too_long = self.next_line + self.pending_lines
        out = []
        while self.pending_lines >= self.job_lines:
            ends = np.flatnonzero(np.frombuffer(self.pending, dtype=np.uint8) == 10)
            end = int(ends[self.job_lines - 1]) + 1
            del ends
            out.append((self.next_line, bytes(self.pending[:end])))
            del self.pending[:end]
            self.next_line += self.job_lines
            self.pending_lines -= self.job_lines
        return out

    def flush(self):
        """The complete lines not yet in a part, or None."""
        if not self.pending:
            return None
        part = (self.next_line, bytes(self.pending))
        self.next_line += self.pending_lines
        self.pending = bytearray()
        self.pending_lines = 0
        return part

    def end(self):
        """The last part at the end of the body (a last line without its newline too)."""
        if self.partial:
            self.pending += self.partial + b"\n"
            self.pending_lines += 1
            self.partial = bytearray()
        return self.flush()

    @property
    def lines(self) -> int:
        return self.next_line - 1 + self.pending_lines


def job_lines(batch: int) -> int:
    """Lines parsed at once: whole calls of ``batch`` lines, at least :data:`JOB_LINES`."""
    return batch * max(1, -(-JOB_LINES // batch))


@dataclass(eq=False)
class Stream:
    """One stream's blocks on their way to the writer, and what came back (module docstring).

    ``to_thread(f, *args)``: awaits ``f(*args)`` in a worker thread (the parsing)."""

    server: object
    kind: str
    quadratic: tuple
    batch: int
    predictions: bool
    to_thread: object
    refused: bool = False  # set by the writer: a row was refused, later blocks are not tried
    stopped: bool = False  # nothing more is sent
    learned: int = 0
    wrong: int = 0
    squared_error: float = 0.0
    preds: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # (line, status, message)
    inflight: deque = field(default_factory=deque)

    async def send(self, first_line: int, part: bytes):
        """Parse the lines ``part`` (the first is line ``first_line``) and queue their rows."""
        if self.stopped:
            return
        try:
            X, y, w, lines = await self.to_thread(
                self.server.parse_block, self.kind, part, first_line, self.quadratic
            )
        except LineError as exc:
            if exc.prefix is not None and exc.prefix[0].shape[0]:
                await self._submit(*exc.prefix)
            self.fail(exc.line, exc.status, str(exc))
            return
        if X.shape[0]:
            await self._submit(X, y, w, lines)

    def fail(self, line, status, message):
        self.errors.append((line, status, message))
        self.stopped = True

    async def _submit(self, X, y, w, lines):
        while len(self.inflight) >= IN_FLIGHT:
            await self._collect()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()

        def wake():
            loop.call_soon_threadsafe(_resolve, fut)

        self.inflight.append((self.server.submit_block(self, X, y, w, lines, wake), fut))

    async def _collect(self):
        job, fut = self.inflight[0]
        await fut
        self.inflight.popleft()
        r = job.result
        if r is not None:
            self.learned += r["learned"]
            self.wrong += r.get("mistakes", 0)
            self.squared_error += r.get("squared_error", 0.0)
            self.preds += r.get("predictions", [])
        if job.error is not None:
            self.fail(job.error_line, 422, job.error)

    async def finish(self):
        while self.inflight:
            await self._collect()

    def reply(self, lines: int) -> tuple[int, dict]:
        out = {"learned": self.learned, "lines": lines}
        if self.server.regressor:
            out["squared_error"] = self.squared_error
        else:
            out["mistakes"] = self.wrong
        if self.predictions:
            out["predictions"] = self.preds
        if not self.errors:
            return 200, out
        line, status, message = min(self.errors, key=lambda e: (e[0] is None, e[0] or 0))
        return status, {"error": message, "line": line, **out}


def _resolve(fut):
    if not fut.done():
        fut.set_result(None)
