"""Reading and writing a workspace file so that no link, swap or hard link gets out.

`Workspace.resolve` checks a path; this module makes the check hold while the file is
used. The path's names are opened one at a time from the root, each without following
a link (``O_NOFOLLOW``, relative to the folder above: ``dir_fd``):

    root/ -> open("docs", dir_fd=root) -> open("faq.md", dir_fd=docs)
             a folder swapped for a link since the check: ELOOP -> PathError

What is opened is then checked, not the name: a regular file (a FIFO would block, a
device never ends), with one hard link (a second name may be a file outside the
workspace). A write goes to a temporary file in the same folder, then an atomic
rename replaces the old name: readers see the old text or the new, never half, and a
hard link elsewhere is never written through. Errors name the path as the model wrote
it, never the absolute root. (Windows has no ``dir_fd``: there paths are opened whole.)
`list_files` names the regular files under a folder the same way: no link followed, and
nothing opened but folders.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import Any

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW | FLAGS
BY_FOLDER = os.open in os.supports_dir_fd and NOFOLLOW != 0


class PathError(ValueError):
    """The path is outside the root, protected, missing, or not a regular file."""


class NotTextError(ValueError):
    """The file is binary or not UTF-8."""


class TooLargeError(ValueError):
    """The file, or the content to write, is over ``max_file_bytes``."""


class EditError(ValueError):
    """The text to replace is missing or not unique."""


class Files:
    """The ``files`` service a run's door lends its mechanisms (door.py): a file under a
    root they name, read and written with every check of this module."""

    @staticmethod
    def read_text(root: str | os.PathLike, path: str, limit: int) -> str:
        return read_text(Path(root).resolve(), parts_of(path), path, limit)

    @staticmethod
    def write_text(root: str | os.PathLike, path: str, text: str) -> None:
        data = text.encode("utf-8", "replace")
        write_bytes(Path(root).resolve(), parts_of(path), path, data)

    @staticmethod
    def list_files(root: str | os.PathLike, path: str, limit: int) -> tuple[list[str], bool]:
        """The regular files under the folder ``root/path`` (`list_files`)."""
        return list_files(Path(root).resolve(), parts_of(path), path, limit)


def parts_of(path: str) -> tuple[str, ...]:
    """The names of a relative path that stays under its root, or `PathError`."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts or "\\" in path:
        raise PathError(f"'{path}' must be a relative path inside the folder, without '..'")
    return pure.parts


def read_text(root: Path, parts: tuple[str, ...], path: str, limit: int) -> str:
    """The UTF-8 text of the file at ``root/parts``; ``path`` is how errors name it."""
    with _folder(root, parts[:-1], path, create=False) as folder:
        _check(folder, parts[-1], path, must_exist=True)
        fd = _open(folder, parts[-1], os.O_RDONLY | getattr(os, "O_NONBLOCK", 0), path)
        with os.fdopen(fd, "rb") as f:
            st = _check_opened(os.fstat(f.fileno()), path)
            if st.st_size > limit:
                raise TooLargeError(f"'{path}' is {st.st_size:,} bytes; the limit is {limit:,}")
            data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLargeError(f"'{path}' is over {limit:,} bytes, the limit")
    if b"\0" in data:
        raise NotTextError(f"'{path}' is a binary file (it contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotTextError(f"'{path}' is not UTF-8 text") from None


def write_bytes(root: Path, parts: tuple[str, ...], path: str, data: bytes) -> None:
    """Replace (or create) the file at ``root/parts`` with ``data``, atomically."""
    with _folder(root, parts[:-1], path, create=True) as folder:
        old = _check(folder, parts[-1], path, must_exist=False)
        temp = f".{secrets.token_hex(6)}.harness-tmp"
        fd = _open(folder, temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, path)
        try:
            with os.fdopen(fd, "wb") as f:
                if old is not None and hasattr(os, "fchmod"):
                    os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))  # keep +x and friends
                f.write(data)
            _call(os.replace, folder, temp, parts[-1])
        except BaseException as exc:
            with suppress(OSError):
                _call(os.unlink, folder, temp)
            if isinstance(exc, OSError):  # disk full, no permission: say so, not the root
                raise _error(exc, path) from None
            raise


def _check(folder: int | Path, name: str, path: str, *, must_exist: bool) -> os.stat_result | None:
    """The stat of ``name`` before opening it: refuse what must never be opened."""
    try:
        st = _call(os.lstat, folder, name)
    except FileNotFoundError:
        if must_exist:
            raise PathError(f"'{path}' does not exist; list_files shows what does") from None
        return None
    except OSError as exc:
        raise _error(exc, path) from None
    if stat.S_ISLNK(st.st_mode):
        raise PathError(f"'{path}' changed while it was being used (it became a link); "
                        "try again")
    return _check_opened(st, path)


def _check_opened(st: os.stat_result, path: str) -> os.stat_result:
    if stat.S_ISDIR(st.st_mode):
        raise PathError(f"'{path}' is a directory; only regular files can be read or written")
    if not stat.S_ISREG(st.st_mode):
        raise PathError(f"'{path}' is not a regular file; only regular files can be read "
                        "or written")
    if st.st_nlink > 1:
        raise PathError(f"'{path}' has {st.st_nlink} hard links: another name for the same "
                        "file may be outside the workspace, so it is not used")
    return st


@contextmanager
def _folder(root: Path, names: tuple[str, ...], path: str, *, create: bool) -> Iterator[int | Path]:
    """The folder ``root/names``, opened name by name without following a link.

    Yields a descriptor (or, without ``dir_fd`` support, the path). ``create`` makes
    missing folders on the way, as `write_file` promises.
    """
    if not BY_FOLDER:
        folder = root.joinpath(*names)
        if create:
            _guard(lambda: folder.mkdir(parents=True, exist_ok=True), path)
        yield folder
        return
    fd = _guard(lambda: os.open(root, os.O_RDONLY | os.O_DIRECTORY | FLAGS), path)
    try:
        for name in names:
            if create:
                try:
                    os.mkdir(name, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise _error(exc, path) from None
            try:
                inner = os.open(name, FOLDER_FLAGS, dir_fd=fd)
            except OSError as exc:  # Linux says ENOTDIR for a link opened as a folder
                link = _is_link(name, fd)
                raise _error(OSError(errno.ELOOP, "") if link else exc, path) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _open(folder: int | Path, name: str, flags: int, path: str) -> int:
    flags |= NOFOLLOW | FLAGS
    if isinstance(folder, int):
        return _guard(lambda: os.open(name, flags, 0o666, dir_fd=folder), path)
    return _guard(lambda: os.open(folder / name, flags, 0o666), path)


def _call(fn: Callable[..., Any], folder: int | Path, *names: str) -> Any:
    """``fn(*names)`` inside ``folder``: relative to its descriptor, or joined to its path."""
    if isinstance(folder, int):
        if fn is os.replace:
            return fn(*names, src_dir_fd=folder, dst_dir_fd=folder)
        if fn is os.lstat:
            return os.stat(names[0], dir_fd=folder, follow_symlinks=False)
        return fn(*names, dir_fd=folder)
    return fn(*(folder / n for n in names))


def _guard(fn: Callable[[], Any], path: str) -> Any:
    """Run ``fn``; an OSError becomes a PathError that names ``path``, not the root."""
    try:
        return fn()
    except OSError as exc:
        raise _error(exc, path) from None


def _error(exc: OSError, path: str) -> PathError:
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return PathError(f"'{path}' changed while it was being used (a folder became a "
                         "link); try again")
    if exc.errno == errno.ENOTDIR:
        return PathError(f"cannot use '{path}': a part of it is a file, not a folder")
    if exc.errno == errno.ENOENT:
        return PathError(f"'{path}' does not exist; list_files shows what does")
    return PathError(f"cannot use '{path}': {exc.strerror or type(exc).__name__}")


MAX_DEPTH = 8  # folders below the one listed that list_files enters


def list_files(root: Path, parts: tuple[str, ...], path: str, limit: int) -> tuple[list[str], bool]:
    """The regular files under the folder ``root/parts`` (``()``: the root itself), as
    sorted paths relative to it, and True if some were left unlooked at. Folders are
    opened as `read_text` opens them, no link followed; only names and their types are
    read, so a FIFO or a device is skipped, never opened. At most ``limit`` names are
    looked at, at most `MAX_DEPTH` folders deep."""
    found: list[str] = []
    with _folder(root, parts, path, create=False) as folder:
        more = _guard(lambda: _walk(folder, "", found, [limit], MAX_DEPTH), path)
    return sorted(found), more


def _walk(folder: int | Path, prefix: str, found: list[str], left: list[int], depth: int) -> bool:
    """Add the regular files under ``folder`` to ``found``; True if ``left[0]`` (the names
    still to look at) ran out, or a folder was too deep to enter."""
    with os.scandir(folder) as entries:
        listed = sorted(entries, key=lambda entry: entry.name)
    more = False
    for entry in listed:
        if left[0] <= 0:
            return True
        left[0] -= 1
        if entry.is_file(follow_symlinks=False):
            found.append(prefix + entry.name)
        elif entry.is_dir(follow_symlinks=False):
            more = _walk_into(folder, entry.name, f"{prefix}{entry.name}/", found, left,
                              depth) or more
    return more


def _walk_into(folder: int | Path, name: str, prefix: str, found: list[str], left: list[int],
               depth: int) -> bool:
    """`_walk` the folder ``name`` inside ``folder``, opened without following a link."""
    if depth <= 0:
        return True
    inner = None
    try:
        if isinstance(folder, int):
            inner = os.open(name, FOLDER_FLAGS, dir_fd=folder)
        return _walk(folder / name if inner is None else inner, prefix, found, left, depth - 1)
    except OSError:  # a link since it was listed, gone, or not ours to read: not entered
        return False
    finally:
        if inner is not None:
            os.close(inner)
