"""Model files without pickle: a compressed ``.npz`` archive of plain arrays plus JSON metadata.

Layout of a model file (a zip archive written by :func:`numpy.savez_compressed`):

``__header__``
    uint8 array holding UTF-8 JSON: ``{"magic": "onlinelearn-model", "format_version": 2,
    "library_version": ..., "meta": <estimator metadata>, "arrays": [<names>]}``.
``__sha256__``
    uint8 array of 32 bytes: SHA-256 over the header bytes and, for each array in sorted name
    order, its name, dtype, shape and raw C-order bytes (see :func:`_digest`).
``<name>``
    one entry per estimator array (``coef_``, ``classes_``, ...), numeric dtypes only.

Loading uses ``allow_pickle=False`` throughout, so a model file can never execute code, and checks
the magic string, the format version and the checksum before the estimator is rebuilt.  Any
problem raises :class:`ModelFileError` (a :class:`ValueError`) that says what is wrong.

Only files of :data:`FORMAT_VERSION` are read.  Files of format version 1 were written by
development versions of onlinelearn (0.1.0, never released), whose layouts changed without a
change of version; they are refused with one line that says to train the model again, and no
file is converted on load.

The estimator side is ``est._get_state() -> (meta, arrays)`` and
``onlinelearn.shell.linear_state.estimator_from_state(meta, arrays)`` (see ``docs/CONTRACT.md``).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib

import numpy as np

from .shell.atomic import atomic_write

__all__ = ["FORMAT_VERSION", "ModelFileError", "load_model", "read_model_file", "save_model"]

#: Version of the file layout written by :func:`save_model`, the only one :func:`load_model` reads.
FORMAT_VERSION = 2
#: the prefix of the arrays of a classifier's probability calibration (``meta["calibration"]``
#: holds its scalars; absent when the estimator has none, e.g. native probabilities)
_CALIBRATION = "calibration."
SUPPORTED_FORMAT_VERSIONS = frozenset({FORMAT_VERSION})
MAGIC = "onlinelearn-model"
_HEADER = "__header__"
_DIGEST = "__sha256__"
_ZIP_MAGIC = b"PK\x03\x04"


class ModelFileError(ValueError):
    """A model file is unreadable, corrupted, edited, foreign, or of an unsupported version."""


def _library_version() -> str:
    try:
        from importlib.metadata import version

        return version("onlinelearn")
    except Exception:  # pragma: no cover - not installed
        return "unknown"


# -- JSON with a lossless encoding of tuples and dicts with non-string keys ---------------------


def _to_json(obj, where: str = "meta"):
    if isinstance(obj, bool | str) or obj is None:
        return obj
    if isinstance(obj, int | float):
        return obj
    if isinstance(obj, np.generic):
        return _to_json(obj.item(), where)
    if isinstance(obj, tuple):
        return {"__tuple__": [_to_json(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [_to_json(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"{where}: arrays of dtype {obj.dtype} cannot be stored in metadata")
        return _to_json(obj.tolist(), where)
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj) and not (set(obj) & {"__tuple__", "__items__"}):
            return {k: _to_json(v, f"{where}[{k!r}]") for k, v in obj.items()}
        return {
            "__items__": [
                [_to_json(k, f"{where} key"), _to_json(v, f"{where}[{k!r}]")]
                for k, v in obj.items()
            ]
        }
    raise TypeError(
        f"{where}: value {obj!r} of type {type(obj).__name__} cannot be stored in a model file "
        "(only JSON types, tuples and numeric numpy scalars/arrays)"
    )


def _from_json(obj):
    if isinstance(obj, list):
        return [_from_json(v) for v in obj]
    if isinstance(obj, dict):
        if set(obj) == {"__tuple__"}:
            return tuple(_from_json(v) for v in obj["__tuple__"])
        if set(obj) == {"__items__"}:
            return {_hashable(_from_json(k)): _from_json(v) for k, v in obj["__items__"]}
        return {k: _from_json(v) for k, v in obj.items()}
    return obj


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


# -- checksum -----------------------------------------------------------------------------------


def _digest(header: bytes, arrays: dict[str, np.ndarray]) -> bytes:
    """SHA-256 over the header bytes and every array's name, dtype, shape and C-order bytes.

    Each field is length-prefixed so that no two different contents hash the same byte stream.
    """
    h = hashlib.sha256()

    def field(b: bytes) -> None:
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)

    field(MAGIC.encode())
    field(header)
    for name in sorted(arrays):
        a = arrays[name]
        field(name.encode())
        field(a.dtype.str.encode())
        field(json.dumps(list(a.shape)).encode())
        field(np.ascontiguousarray(a).tobytes())
    return h.digest()


# -- estimator state ----------------------------------------------------------------------------


def _state_of(estimator) -> tuple[dict, dict]:
    """``estimator._get_state()`` with its probability calibration, if it keeps one
    (:mod:`onlinelearn.shell.proba`): ``meta["calibration"]`` and the arrays
    ``calibration.<name>``."""
    meta, arrays = estimator._get_state()
    calibration = getattr(estimator, "_calibration_state", None)
    calibration = calibration() if calibration is not None else None
    if calibration is not None:
        meta = {**meta, "calibration": calibration[0]}
        arrays = {**arrays, **{_CALIBRATION + k: v for k, v in calibration[1].items()}}
    return meta, arrays


def _estimator_of(meta, arrays):
    """The estimator of a :func:`_state_of` (the inputs are not changed)."""
    from onlinelearn.shell.linear_state import estimator_from_state

    meta, arrays = dict(meta), dict(arrays)
    if meta.get("class") == "SeenColumns":  # a wrapper, not a name of the package's top level
        from onlinelearn.seen_columns import SeenColumns

        return SeenColumns._from_state(meta, arrays)
    # the probability calibration (absent when the estimator kept none)
    calibration = meta.pop("calibration", None)
    cal_arrays = {k[len(_CALIBRATION):]: arrays.pop(k) for k in list(arrays)
                  if k.startswith(_CALIBRATION)}  # fmt: skip
    est = estimator_from_state(meta, arrays)
    if hasattr(est, "_set_calibration_state"):
        est._set_calibration_state(calibration, cal_arrays)
    return est


# -- public API ---------------------------------------------------------------------------------


def save_model(estimator, path) -> None:
    """Write a fitted estimator to ``path`` as a pickle-free ``.npz`` model file.

    Parameters
    ----------
    estimator : onlinelearn estimator
        Anything with ``_get_state() -> (meta, arrays)``.
    path : str or path-like
        Destination.  numpy appends ``.npz`` to a name without that suffix; this function writes
        exactly to ``path`` instead.  The file is replaced atomically (see
        :mod:`onlinelearn.shell.atomic`): readers and concurrent writers see the old model or a new
        one, never a mix; a symbolic link and the permission bits of an existing file are kept.
    """
    if not isinstance(path, str | bytes | os.PathLike):
        raise TypeError(
            f"path must be a file name (str or os.PathLike), not {type(path).__name__}: the model "
            "is written to a temporary file beside it and renamed, which a file object cannot do"
        )
    if not hasattr(estimator, "_get_state"):
        raise TypeError(
            f"{type(estimator).__name__} cannot be saved: it has no _get_state() method"
        )
    meta, arrays = _state_of(estimator)
    clean: dict[str, np.ndarray] = {}
    for name, value in arrays.items():
        if not isinstance(name, str) or not name or name.startswith("__") or "/" in name:
            raise ValueError(f"invalid array name {name!r} in estimator state")
        a = np.asarray(value)
        if a.dtype.kind not in "biufcUS":
            raise TypeError(
                f"array {name!r} has dtype {a.dtype}; only numeric, boolean and fixed-width "
                "string arrays can be stored without pickle"
            )
        clean[name] = np.ascontiguousarray(a)
    header = {
        "magic": MAGIC,
        "format_version": FORMAT_VERSION,
        "library_version": _library_version(),
        "meta": _to_json(meta),
        "arrays": sorted(clean),
    }
    header_bytes = json.dumps(
        header, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True
    ).encode("ascii")
    digest = _digest(header_bytes, clean)
    entries = dict(clean)
    entries[_HEADER] = np.frombuffer(header_bytes, dtype=np.uint8)
    entries[_DIGEST] = np.frombuffer(digest, dtype=np.uint8)
    # a unique temporary file beside the destination, fsync, then one atomic rename: a crash or
    # a concurrent writer never leaves half a model or a mix of two (onlinelearn.shell.atomic)
    with atomic_write(path, "wb") as f:
        np.savez_compressed(f, **entries)


def _version_message(name, version, written_by) -> str:
    """The one line that refuses a file of another format version than :data:`FORMAT_VERSION`."""
    here = _library_version()
    written_by = " ".join(str(written_by).split())  # one line, whatever the header holds
    again = "train the model again and save it"
    if type(version) is int and version < FORMAT_VERSION:
        return (
            f"{name}: model file format_version {version} was written by a development version "
            f"of onlinelearn ({written_by}) and is not read by this one; {again}"
        )
    if type(version) is int:
        return (
            f"{name}: model file format_version {version} was written by onlinelearn "
            f"{written_by}, newer than this one ({here}), which reads format_version "
            f"{FORMAT_VERSION} only; upgrade onlinelearn, or {again} with this version"
        )
    return (
        f"{name}: model file format_version {version!r} is not a version of onlinelearn "
        f"(this one, {here}, reads format_version {FORMAT_VERSION}); {again}"
    )


def read_model_file(path) -> tuple[dict, dict[str, np.ndarray], dict]:
    """Read and verify a model file without rebuilding the estimator.

    Returns ``(meta, arrays, header)``.  Raises :class:`ModelFileError` on any problem and
    :class:`FileNotFoundError` if ``path`` does not exist.
    """
    name = os.fsdecode(path)
    with open(path, "rb") as f:
        head = f.read(4)
    if head != _ZIP_MAGIC:
        kind = "an empty file" if not head else "not a zip/npz archive"
        if head[:1] == b"\x80":
            kind = "a Python pickle, which is never loaded for safety"
        raise ModelFileError(f"{name}: not an onlinelearn model file ({kind})")
    try:
        with np.load(path, allow_pickle=False) as npz:
            entries = {key: npz[key] for key in npz.files}
    except ValueError as exc:
        if "pickle" in str(exc):
            raise ModelFileError(
                f"{name}: the archive holds pickled objects, which are never loaded: {exc}"
            ) from None
        raise ModelFileError(f"{name}: corrupted or truncated model file ({exc})") from None
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, KeyError) as exc:
        raise ModelFileError(f"{name}: corrupted or truncated model file ({exc})") from None
    except Exception as exc:  # a damaged zip directory can fail in many ways
        raise ModelFileError(
            f"{name}: corrupted model file ({type(exc).__name__}: {exc})"
        ) from None
    foreign = sorted(k for k, v in entries.items() if not isinstance(v, np.ndarray))
    if foreign:
        raise ModelFileError(f"{name}: not an onlinelearn model file (non-array entries {foreign})")

    if _HEADER not in entries or _DIGEST not in entries:
        raise ModelFileError(
            f"{name}: not an onlinelearn model file (an .npz archive without "
            f"'{_HEADER}'/'{_DIGEST}' entries)"
        )
    header_arr = entries.pop(_HEADER)
    digest_arr = entries.pop(_DIGEST)
    if header_arr.dtype != np.uint8 or header_arr.ndim != 1:
        raise ModelFileError(f"{name}: malformed header entry")
    header_bytes = header_arr.tobytes()
    try:
        header = json.loads(header_bytes.decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{name}: header is not valid JSON ({exc})") from None
    if not isinstance(header, dict) or header.get("magic") != MAGIC:
        raise ModelFileError(f"{name}: not an onlinelearn model file (wrong magic string)")
    version = header.get("format_version")
    if type(version) is not int or version not in SUPPORTED_FORMAT_VERSIONS:
        raise ModelFileError(_version_message(name, version, header.get("library_version", "?")))
    listed = header.get("arrays")
    if not isinstance(listed, list) or sorted(listed) != sorted(entries):
        raise ModelFileError(
            f"{name}: the arrays in the file {sorted(entries)} do not match those listed in its "
            f"header {listed}"
        )
    if digest_arr.dtype != np.uint8 or digest_arr.shape != (32,):
        raise ModelFileError(f"{name}: malformed checksum entry")
    if _digest(header_bytes, entries) != digest_arr.tobytes():
        raise ModelFileError(
            f"{name}: checksum mismatch: the file was modified or corrupted after it was saved"
        )
    if "meta" not in header or not isinstance(header["meta"], dict):
        raise ModelFileError(f"{name}: header has no estimator metadata")
    return _from_json(header["meta"]), entries, header


def load_model(path):
    """Load an estimator saved by :func:`save_model`, after verifying the file.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ModelFileError
        If the file is truncated, corrupted, edited, not a model file, of another
        ``format_version`` than :data:`FORMAT_VERSION` (one line: train the model again), or
        describes an estimator this version cannot rebuild.
    """
    meta, arrays, header = read_model_file(path)
    try:
        return _estimator_of(meta, arrays)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(
            f"{os.fsdecode(path)}: cannot rebuild the estimator "
            f"(written by onlinelearn {header.get('library_version', '?')}): "
            f"{type(exc).__name__}: {exc}"
        ) from None
