"""``onlinelearn serve MODEL``: the model behind HTTP, learning from feedback as it serves."""

from __future__ import annotations

import sys

from ._options import CLIError, _add_command, _positive_float, _positive_int

_HELP = "serve a model over HTTP; it keeps learning from POST /learn"

_DESCRIPTION = """\
Serve a saved model over HTTP (needs pip install 'onlinelearn[serve]'):

  POST /predict   svmlight lines (text/plain; a leading label is optional) or JSON
                  {"rows": [...]}; returns {"predictions": [...]} (?proba=1: probabilities)
  POST /learn     labelled lines or JSON {"rows": [...], "labels": [...]}: learned online,
                  in arrival order, by one writer
  POST /learn/stream
                  labelled lines on one connection (svmlight, ?format=vw, or JSON lines
                  {"row": ..., "label": y}), learned as they arrive in calls of ?batch= lines
                  (default 1000); answered at the end with the counts (?predictions=1: each
                  row's prediction before learning it); a bad line stops it there, the rows
                  before it learned
  GET  /model     the current model file
  GET  /health    liveness
  GET  /metrics   rows seen, progressive-validation error, updates, rows/s

The model is written back atomically every --snapshot-every learned rows, every
--snapshot-seconds seconds and on SIGTERM/SIGINT (to MODEL unless --snapshot FILE): after a
crash, the same command resumes from the last snapshot.  A bad request gets a 4xx and one line
of reason, and changes nothing.  A single row goes to the model's one-row step.  See
docs/serve.md.
"""

_EPILOG = """\
example:
  onlinelearn serve model.npz --port 8000 --snapshot-every 1000
  curl -s localhost:8000/predict --data-binary $'1:0.5 7:1\\n3:2'
  curl -s localhost:8000/learn --data-binary $'1 1:0.5 7:1'
  producer | curl -s -X POST -T - localhost:8000/learn/stream   # rows as they come
"""


def register(sub, fmt) -> None:
    """Add ``serve`` to the sub-commands ``sub``."""
    p = _add_command(sub, fmt, "serve", _HELP, _DESCRIPTION, _EPILOG)
    p.add_argument("model", metavar="MODEL", help="model file written by train")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=8000, help="port (default 8000; 0: one the system picks)"
    )
    p.add_argument(
        "--snapshot-every",
        type=_positive_int,
        default=10000,
        metavar="N",
        help="write the model every N learned rows (default 10000)",
    )
    p.add_argument(
        "--snapshot-seconds",
        type=_positive_float,
        default=60.0,
        metavar="S",
        help="and every S seconds when rows were learned (default 60)",
    )
    p.add_argument(
        "--snapshot", metavar="FILE", default=None, help="where to write it (default: MODEL)"
    )
    p.add_argument(
        "--max-body-bytes",
        type=_positive_int,
        default=16 * 2**20,
        help="largest request body accepted, and longest line of a stream (default 16 MiB; "
        "larger: 413)",
    )
    p.set_defaults(func=_cmd_serve)


def _cmd_serve(args) -> int:
    try:
        from onlinelearn.serve import run
    except ImportError as exc:  # pragma: no cover
        raise CLIError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be in 0..65535, got {args.port}")

    def ready(host, port):
        print(f"onlinelearn serve: listening on http://{host}:{port}", flush=True)

    try:
        run(
            args.model,
            host=args.host,
            port=args.port,
            snapshot_every=args.snapshot_every,
            snapshot_seconds=args.snapshot_seconds,
            snapshot_path=args.snapshot,
            max_body=args.max_body_bytes,
            ready=ready,
        )
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    print("onlinelearn serve: stopped, model saved", file=sys.stderr)
    return 0
