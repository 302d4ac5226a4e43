"""Data sets: the DNA data shipped with the package, and loaders for the shared benchmark folder.

* :func:`load_dna` reads the LIBSVM ``dna`` data set shipped in ``onlinelearn/data`` (no download,
  no network).
* :func:`load_shared` and :func:`load_pmlb` read the larger benchmark sets from a local folder
  (see :func:`shared_data_dir`): the environment variable ``ONLINELEARN_DATA`` if set, else a
  ``shared/data`` folder beside the source checkout.  Nothing is downloaded and nothing is cached.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from onlinelearn.io import load_svmlight

__all__ = [
    "DATA_ENV_VAR",
    "SHARED_SETS",
    "load_dna",
    "load_pmlb",
    "load_shared",
    "pmlb_names",
    "shared_data_dir",
    "shared_data_path",
]

#: Environment variable naming the shared benchmark data folder.
DATA_ENV_VAR = "ONLINELEARN_DATA"

DNA_N_FEATURES = 180


def load_dna(split: str = "train"):
    """The LIBSVM ``dna`` data set (Statlog DNA), shipped with the package.

    Parameters
    ----------
    split : {'train', 'test'}
        ``'train'``: 2000 examples (``dna.scale``); ``'test'``: 1186 examples (``dna.scale.t``).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n, 180), float64, binary values
    y : numpy.ndarray of shape (n,), int64, labels in {1, 2, 3}
    """
    files = {"train": "dna.scale.bz2", "test": "dna.scale.t.bz2"}
    if split not in files:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    ref = resources.files("onlinelearn") / "data" / files[split]
    with resources.as_file(ref) as path:
        return load_svmlight(path, n_features=DNA_N_FEATURES)


# -- the shared benchmark folder ----------------------------------------------------------------


def _find_checkout_root(start: Path) -> Path | None:
    """The source checkout holding ``start``: an ancestor with ``pyproject.toml`` and
    ``src/onlinelearn``; None for an installed (non-editable) package."""
    for parent in start.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "src" / "onlinelearn").is_dir():
            return parent
    return None


def shared_data_dir() -> Path | None:
    """Folder of the shared benchmark data, or None if there is none.

    Looked up in this order:

    1. the environment variable ``ONLINELEARN_DATA`` (returned even if the folder is missing,
       so that the error names it);
    2. ``../shared/data`` relative to the root of the source checkout this module runs from;
    3. otherwise None.
    """
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser()
    root = _find_checkout_root(Path(__file__).resolve())
    if root is not None:
        candidate = root.parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


@dataclass(frozen=True)
class _SharedSet:
    train: str
    test: str | None
    n_features: int
    description: str


#: svmlight sets of the shared folder: name -> files (relative to the folder) and dimension.
SHARED_SETS: dict[str, _SharedSet] = {
    "mnist": _SharedSet(
        "mnist/mnist.scale.bz2", "mnist/mnist.scale.t.bz2", 784, "MNIST, pixels/255, labels 0-9"
    ),
    "news20": _SharedSet(
        "20newsgroups/20news_bydate_tfidf.train.svm.bz2",
        "20newsgroups/20news_bydate_tfidf.test.svm.bz2",
        56438,
        "20 newsgroups 'bydate', TF-IDF, labels 1-20",
    ),
    "dna": _SharedSet("dna/dna.scale.bz2", "dna/dna.scale.t.bz2", 180, "Statlog DNA, labels 1-3"),
    "pendigits": _SharedSet(
        "pendigits/pendigits.scale.bz2",
        "pendigits/pendigits.scale.t.bz2",
        16,
        "pen digits scaled to [0, 1], labels 1-10",
    ),
    "a9a": _SharedSet("a9a/a9a.bz2", "a9a/a9a.t.bz2", 123, "Adult, binary -1/+1"),
    "a8a": _SharedSet("a8a/a8a.bz2", None, 123, "Adult subset, binary -1/+1, no test split"),
    "w8a": _SharedSet("w8a/w8a.bz2", None, 300, "web pages, binary -1/+1, no test split"),
}


#: Every svmlight file of the shared folder: (path in the folder, n_features, multi-label).
SHARED_SVMLIGHT_FILES: tuple[tuple[str, int, bool], ...] = (
    ("20newsgroups/20news_bydate_tfidf.train.svm.bz2", 56438, False),
    ("20newsgroups/20news_bydate_tfidf.test.svm.bz2", 56438, False),
    ("mnist/mnist.scale.bz2", 784, False),
    ("mnist/mnist.scale.t.bz2", 784, False),
    ("dna/dna.scale.bz2", 180, False),
    ("dna/dna.scale.t.bz2", 180, False),
    ("pendigits/pendigits.bz2", 16, False),
    ("pendigits/pendigits.t.bz2", 16, False),
    ("pendigits/pendigits.scale.bz2", 16, False),
    ("pendigits/pendigits.scale.t.bz2", 16, False),
    ("a9a/a9a.bz2", 123, False),
    ("a9a/a9a.t.bz2", 123, False),
    ("a8a/a8a.bz2", 123, False),
    ("w8a/w8a.bz2", 300, False),
    ("cora/cora.features.svm.bz2", 1433, False),
    ("citeseer/citeseer.features.svm.bz2", 3703, False),
    ("enron_multilabel/enron.train.svm.bz2", 1001, True),
    ("enron_multilabel/enron.test.svm.bz2", 1001, True),
)


def _missing(what: str) -> FileNotFoundError:
    root = shared_data_dir()
    where = (
        f"looked in {root}"
        if root is not None
        else "no shared data folder was found next to the source checkout"
    )
    return FileNotFoundError(
        f"shared data set {what} is not available ({where}); set the environment variable "
        f"{DATA_ENV_VAR} to the folder holding the shared benchmark data"
    )


def shared_data_path(name: str, split: str = "train") -> Path:
    """Path of one file of the shared folder; see :data:`SHARED_SETS` for the names.

    ``name`` may also be ``'pmlb/<set>'``.  Raises :class:`FileNotFoundError` (naming
    ``ONLINELEARN_DATA``) if the file is not there, :class:`ValueError` for an unknown name or a
    split the set does not have.
    """
    if name.startswith("pmlb/"):
        rel = f"{name}/{name.split('/', 1)[1]}.tsv.gz"
    else:
        if name not in SHARED_SETS:
            raise ValueError(
                f"unknown shared data set {name!r}; known: {sorted(SHARED_SETS)} and 'pmlb/<name>'"
            )
        entry = SHARED_SETS[name]
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        rel = entry.train if split == "train" else entry.test
        if rel is None:
            raise ValueError(f"data set {name!r} has no test split")
    root = shared_data_dir()
    if root is None:
        raise _missing(repr(name))
    path = root / rel
    if not path.is_file():
        raise _missing(f"{name!r} ({rel})")
    return path


def load_shared(name: str, split: str = "train"):
    """Load an svmlight set of the shared folder with its known dimension.

    Parameters
    ----------
    name : {'mnist', 'news20', 'dna', 'pendigits', 'a9a', 'a8a', 'w8a'}
    split : {'train', 'test'}
        a8a and w8a have no test split.

    Returns
    -------
    X : scipy.sparse.csr_matrix, float64
    y : numpy.ndarray, int64
    """
    path = shared_data_path(name, split)
    return load_svmlight(path, n_features=SHARED_SETS[name].n_features)


def pmlb_names() -> list[str]:
    """Names of the PMLB sets present in the shared folder (empty if there is none)."""
    root = shared_data_dir()
    if root is None or not (root / "pmlb").is_dir():
        return []
    return sorted(p.name for p in (root / "pmlb").iterdir() if (p / f"{p.name}.tsv.gz").is_file())


def load_pmlb(name: str, return_feature_names: bool = False):
    """Load a PMLB set (tab-separated, gzip-compressed, header row) of the shared folder.

    Returns dense ``X`` (float64) and ``y`` (int64 if all labels are integers, else float64) from
    the column named ``target``; with ``return_feature_names=True`` also the list of the other
    column names.  PMLB gives no train/test split.
    """
    path = shared_data_path(f"pmlb/{name}")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if "target" not in header:
            raise ValueError(f"{path}: no column named 'target' in the header")
        data = np.loadtxt(f, delimiter="\t", dtype=np.float64, ndmin=2)
    if data.shape[1] != len(header):
        raise ValueError(f"{path}: {data.shape[1]} columns but {len(header)} header names")
    t = header.index("target")
    y = data[:, t]
    X = np.ascontiguousarray(np.delete(data, t, axis=1))
    if np.all(y == np.round(y)):
        y = y.astype(np.int64)
    names = [h for i, h in enumerate(header) if i != t]
    return (X, y, names) if return_feature_names else (X, y)
