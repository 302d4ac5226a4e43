"""Files that are either the old version or the new one, never a mix.

:func:`atomic_write` writes into a temporary file of a unique name in the destination's own
directory, flushes it to disk (``fsync``), gives it the destination's permission bits and then
renames it over the destination in one step (``os.replace``, atomic on POSIX and on Windows for
a file of one volume), after which the directory entry is flushed too.  Consequences:

* two processes saving to one path each write their own temporary file, and the last rename
  wins: a reader sees one complete file or the other, never a mix of both;
* a crash, an exception or SIGKILL mid-write leaves the destination as it was;
* a symbolic link at the destination is kept: the file it points to is replaced;
* the permission bits of an existing destination are kept (a model saved with mode 0600 stays
  0600); a new file gets the usual ``0666 & ~umask``;
* the temporary file is named ``.<name>.<host>-<pid>.<random>.tmp``, so a user's own file (for
  example ``model.npz.tmp``) is never touched.  A temporary file left by a killed process
  (SIGKILL cannot be caught) is removed by the next write to the same destination from the same
  host, once that process is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import tempfile

__all__ = ["atomic_write", "check_writable"]


def _tag() -> str:
    host = socket.gethostname().replace(".", "_").replace(os.sep, "_") or "host"
    return f"{host}-{os.getpid()}"


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # not thread-safe, hence only a fallback
    os.umask(mask)
    return mask


def _resolve(path) -> tuple[str, str, str]:
    """(target, directory, base name): symbolic links followed to the file they name."""
    target = os.path.realpath(os.fspath(path))
    return target, os.path.dirname(target), os.path.basename(target)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _remove_stale(directory: str, base: str) -> None:
    """Remove temporary files of ``base`` left by dead processes of this host."""
    host = _tag().rsplit("-", 1)[0]
    prefix = f".{base}.{host}-"
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            os.remove(os.path.join(directory, name))


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mkstemp(path, directory: str, base: str) -> tuple[int, str]:
    if os.path.isdir(os.path.join(directory, base)):
        raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
    try:
        return tempfile.mkstemp(prefix=f".{base}.{_tag()}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        # report the path the user gave, not the name of our temporary file
        raise type(exc)(exc.errno, exc.strerror or str(exc), os.fspath(path)) from None


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb", encoding: str | None = None):
    """Context manager yielding a file object whose content replaces ``path`` on success.

    On an exception inside the block the temporary file is removed and ``path`` is untouched.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    target, directory, base = _resolve(path)
    _remove_stale(directory, base)
    fd, tmp = _mkstemp(path, directory, base)
    try:
        try:
            perm = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            perm = 0o666 & ~_umask()
        if hasattr(os, "fchmod"):
            os.fchmod(fd, perm)
        with os.fdopen(fd, mode, encoding=encoding) as f:
            fd = -1
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        tmp = None
        _fsync_directory(directory)
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.remove(tmp)


def check_writable(path) -> None:
    """Raise the OSError that :func:`atomic_write` would raise for ``path``, without writing it.

    Creates and removes one temporary file beside the destination, which is the real test
    (permissions, read-only file systems, a missing directory, a directory in the way)."""
    _, directory, base = _resolve(path)
    fd, tmp = _mkstemp(path, directory, base)
    os.close(fd)
    os.remove(tmp)
