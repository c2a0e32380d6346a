"""Files replaced whole: written beside, then renamed, so that a reader, a resumed run or a write cut
short by Ctrl-C finds the old file or the whole new one, never a truncated one (`prove --resume P
--out P` rewrites the proof it continues); and the files read, refused with what a path names instead."""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO

from certify.errors import BadInput, shown


def replace(path, text: str) -> Path:
    """Write `text` to `path` (UTF-8) through a temporary file in its folder and a rename; a path that
    exists and is not a regular file (/dev/stdout, a pipe) cannot be renamed over and is written in place."""
    return replace_with(path, lambda handle: handle.write(text), encoding="utf-8")


def replace_with(path, write: Callable[[IO], object], *, encoding: str | None = None) -> Path:
    """replace() of what write(handle) writes: a text file in `encoding`, else bytes (a figure, which matplotlib
    wrote in place: a run killed while drawing one left it cut short in the job's folder)."""
    path = Path(path)
    target = path.resolve() if path.is_symlink() and path.is_file() else path  # a link: the file it names
    binary = "" if encoding else "b"
    if target.exists() and not target.is_file():
        try:
            with open(_opened_in_place(target), "w" + binary, encoding=encoding) as handle:
                write(handle)
        except OSError as err:  # a failed write names no file ("No space left on device" of /dev/full): this one
            err.filename = str(path) if err.filename is None else err.filename
            raise
        return path
    # a name of this write's own: two runs writing one file at once (`certify prove` twice into the default
    # counterexample.json) shared `.NAME.tmp`, and the one renamed second found it gone
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")  # temporary() knows it
    try:
        handle = open(tmp, "x" + binary, encoding=encoding)
    except OSError as err:
        if not target.parent.is_dir():  # a folder missing, or a file in its place: the system's words say so
            err.filename = str(target)
            raise
        # the folder takes no new file (/proc, read-only): the system's words were said of the file asked for,
        # "No such file or directory: /proc/version" of a file that exists
        raise OSError(err.errno, f"cannot write {target}: no file can be created in {target.parent} "
                                 f"({err.strerror})") from None
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as err:
        tmp.unlink(missing_ok=True)  # nothing half-written left beside the file
        if isinstance(err, OSError) and err.filename == str(tmp):  # the file asked for, not the hidden one beside it
            err.filename = str(target)
        raise
    return path


def _opened_in_place(target: Path) -> int:
    """A descriptor of `target`, a path that is not a regular file, opened to write; a named pipe that no process
    reads raises OSError at once, where opening it waited for a reader for ever (`--out` naming a pipe)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as err:
        if err.errno == errno.ENXIO and stat.S_ISFIFO(target.stat().st_mode):
            raise OSError(err.errno, "a named pipe that no process reads (start its reader first)",
                          str(target)) from None
        raise
    os.set_blocking(fd, True)  # the writes then wait for a slow reader, as they did
    return fd


def temporary(name: str) -> bool:
    """Whether `name` is the hidden temporary file of a write by replace(): left behind only by a process killed
    in that write, and never read as the file it was to become."""
    return re.fullmatch(r"\..+\.[0-9]+-[0-9a-f]{8}\.tmp", name) is not None


def hidden(name: str) -> bool:
    """Whether `name` is hidden, as file browsers and `ls` hide it: a leading dot.  certify writes no such name but
    its lock (.lock) and the temporary files above, so a job's folder checks pass over the others (.DS_Store, which
    macOS Finder leaves in a folder it shows; ._NAME, beside a file copied to another disk): never read, never shown."""
    return name.startswith(".")


def first_link(path) -> Path | None:
    """`path` when it is a symbolic link, else the first link under it when it is a folder (walked without following
    links), else None: a command writing there would write through it, over the file or into the folder it names
    elsewhere (replace() writes a link's file, as it must for an --out FILE the user linked)."""
    path = Path(path)
    if path.is_symlink():
        return path
    for root, dirs, names in os.walk(path):
        dirs.sort()
        for name in sorted(dirs + names):  # os.walk lists a link to a folder with the folders, and enters none
            if os.path.islink(os.path.join(root, name)):
                return Path(root, name)
    return None


def given_path(path) -> Path:
    """path as a Path, or BadInput when it is empty or blank, as from an unset shell variable (`certify verify
    "$CERT"`): Path("") is the current folder, which verify then read as the folder given."""
    if isinstance(path, str) and not path.strip():
        raise BadInput("an empty path (an unset variable?)")
    return Path(path)


def input_file(path, what: str) -> Path:
    """path, when it names a regular file to read; else BadInput saying what it names instead (a folder was
    refused as "no such configuration file", which it is not), `what` naming the file wanted."""
    path = given_path(path)
    text = str(path)
    if not text.isprintable() or len(text) > 200:  # a JSON text given for a path: one line, cut short
        text = shown(text)
    try:
        if path.is_file():
            return path
        if path.is_dir():
            raise BadInput(f"{text} is a folder, not a {what}")
        if path.exists():
            raise BadInput(f"{text} is a device, a pipe or a socket, not a {what} (a regular file)")
    except OSError as err:  # a name too long for the system, from Python (a string of 5000 characters)
        raise BadInput(f"no such {what}: {text} ({err.strerror})") from None
    raise BadInput(f"no such {what}: {text}")


def is_folder(path) -> bool:
    """Whether path names a folder; False for a name the system cannot look up (too long: an OSError), which
    input_file then refuses in words."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False


def folder_path(folder, option: str) -> Path:
    """An output folder of the Python API as a Path, or BadInput before any work naming the `option` (out=): no
    path (None, a number), or one that cannot be a folder, as the commands' --out refuses it (output_problem; a name
    too long for the system raised OSError)."""
    if not isinstance(folder, (str, os.PathLike)):
        raise BadInput(f"{option}: a folder is a path (a string or a pathlib.Path), not {type(folder).__name__}")
    try:
        problem = output_problem(given_path(folder), folder=True)  # "" was the current folder
    except BadInput as err:
        problem = str(err)
    except OSError as err:
        problem = f"{shown(str(folder))}: {err.strerror}"
    if problem:
        raise BadInput(f"{option}: {problem}")
    return Path(folder)


def wrong_kind(path, folder_needed: bool) -> str:
    """The words for a path of the wrong kind: a file where a folder is needed, or the other way round."""
    if folder_needed:
        return f"{path} is a file where a folder is needed (choose another path)"
    return f"{path} is a folder where a file is needed (choose another path)"


def output_problem(path, folder: bool) -> str | None:
    """Why an output path (a folder when `folder`, else a file) cannot be written, as far as its kind tells,
    or None: it is of the other kind, a part of it is a file, or a folder's is a link to nothing.  Nothing is made: a command checks this
    before its work, which otherwise ran whole (a proof, a trajectory) to fail at the writing."""
    target = Path(path)
    if target.exists():
        return None if target.is_dir() == folder else wrong_kind(target, folder)
    if folder and target.is_symlink():  # a broken link: making the folder failed with "File exists: DIR"
        return _broken(target)
    for parent in target.parents:
        if parent.exists():
            return None if parent.is_dir() else wrong_kind(parent, True)
        if parent.is_symlink():  # to nothing, or in a loop: "File exists" (or "Too many levels...") after the work
            return _broken(parent)
    return None


def _broken(link: Path) -> str:
    return f"{link} is a link to {os.readlink(link)}, which does not exist (create it, or choose another path)"


def head(handle, count: int) -> bytes:
    """The first `count` bytes of a binary file, or all of it when shorter, read in pieces: handle.read(count) made a
    buffer of `count` bytes first, whatever the file's length (--limit bytes=1e12 was out of memory, 1e29 an error).
    The checker keeps its own copy (certify_checker.__main__._head): it imports nothing of certify, and certify.core
    may not import the checker (the layer contract: only the engine calls it, to confirm)."""
    pieces = []
    while count > 0 and (piece := handle.read(min(count, 1 << 24))):
        pieces.append(piece)
        count -= len(piece)
    return b"".join(pieces)


def holds(path, data: bytes) -> bool:
    """Whether the file at `path` holds exactly `data`, read no further than one byte past it: a file a folder's
    reader compares with what it derives was read whole, whatever its size."""
    with open(path, "rb") as handle:
        return head(handle, len(data) + 1) == data
