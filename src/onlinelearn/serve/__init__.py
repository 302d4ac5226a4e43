"""``onlinelearn serve MODEL``: a model behind HTTP that keeps learning from feedback.

An ASGI application (Starlette, run by uvicorn; ``pip install 'onlinelearn[serve]'``):

========================  ==============================================================
``POST /predict``         rows as ``text/plain`` svmlight lines (a leading label is optional
                          and ignored), Vowpal Wabbit lines (``?format=vw``, ``&q=ab`` for
                          pairs, or ``Content-Type: text/x-vw``; hashed as ``--format vw``
                          hashes them) or JSON ``{"rows": [...]}``; returns
                          ``{"predictions": [...]}``, and ``"probabilities"`` with
                          ``?proba=1`` when the model has ``predict_proba``
``POST /learn``           labelled rows (svmlight lines, or JSON ``{"rows": [...],
                          "labels": [...]}``); the model learns them online and the reply
                          says how many it got wrong before learning (progressive validation)
``POST /learn/stream``    labelled rows as newline-delimited lines on one connection (svmlight,
                          VW with ``?format=vw``, JSON lines ``{"row": ..., "label": y}``),
                          read as they arrive and learned in order in calls of ``?batch=``
                          lines (default 1000); the reply, at the end, says how many were
                          learned and wrong (``?predictions=1``: each row's prediction before
                          it was learned); a bad line stops the stream there, every row before
                          it learned (``onlinelearn.serve._stream``, ``docs/serve.md``)
``GET /model``            the current model file (the format of ``onlinelearn.model_io``)
``GET /health``           ``{"status": "ok", ...}``
``GET /metrics``          rows seen, progressive-validation error, updates, rows/s, ...
========================  ==============================================================

JSON rows are dense lists of ``n_features_in_`` numbers or sparse objects ``{"index": value}``
with 1-based indices, as in svmlight.

One row.  A request of one row is read straight to its (values, columns) and goes to the
model's one-row step (``learn_one`` / ``predict_one``, ``onlinelearn.shell.events`` for the
linear classifiers) instead of a one-row matrix through ``partial_fit`` / ``predict``: the same
model, bit for bit, and the answer a few tens of microseconds after the request.  A one-row
prediction is made in the event loop's thread; a one-row learn request too when nothing else is
queued or being learned, else by the writer thread.

Consistency.  One writer thread applies the learn requests in the order they arrived, taking
whatever is queued as one batch (one compiled ``partial_fit`` call; when the batch is refused,
the requests are applied one by one so that only the bad one fails).  Readers and the writer
share a readers-writer lock: a prediction sees the model before or after an update, never half
of one.  A request is parsed and checked (finite values, width, labels) before it is queued, so
a bad request gets a 4xx with a one-line reason and changes nothing; a learn request the model
refuses gets a 422 and, by the library's transaction rule, leaves the model as it was.

Durability.  The model is written (atomically: a temporary file renamed over the old one) every
``snapshot_every`` learned rows and every ``snapshot_seconds`` seconds when something was
learned, and on shutdown (SIGTERM or SIGINT).  After a SIGKILL, starting the same command again
resumes from the last snapshot, having lost at most the rows of one interval.
"""

from __future__ import annotations

# _lock: the readers-writer lock; _parse: request bodies into rows, BadRequest; _road: one row
# to the model's one-row step; _stream: /learn/stream's lines, blocks and replies; _server:
# ModelServer (lock, writer thread, snapshots, counters); _app: the ASGI app and the uvicorn
# runner.  Imports go one way, _lock, _parse <- _road, _stream <- _server <- _app.  Every name
# of the former single module is importable from here.
from ._app import _announce_when_listening, make_app, run  # noqa: F401
from ._lock import _RWLock  # noqa: F401
from ._parse import BadRequest, _Body, _one_line, _plain_list  # noqa: F401
from ._server import (  # noqa: F401
    DEFAULT_MAX_BODY,
    MAX_BATCH_ROWS,
    ModelServer,
    _is_regressor,
    _Job,
)

__all__ = ["ModelServer", "make_app", "run"]
