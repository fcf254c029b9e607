"""What sits in a user folder besides what the layers read: the part of ``UserMemory.problems()`` that walks it.

Each layer reports what is wrong *inside* its own file. This walk finds what no layer reads:

* links and special files (FIFOs, sockets, devices) anywhere in the folder — the store never opens them, and a
  person should know that ``sessions/s1.jsonl`` is really a link to somewhere else;
* ``{layer}.quarantine`` files: fragments an earlier repair cut from a layer (possibly by another process, long ago);
* temporary files of :func:`~agentmem_nb.store._fs.atomic_write` whose writer is gone (a kill between creating and
  renaming one leaves it behind; 22 MB was seen).

The walk opens every folder relative to its parent's descriptor without following links (as everything in
:mod:`agentmem_nb.store._fs` does), so a link met on the way is reported, never entered. It never raises: an entry
it cannot open becomes a finding.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmem_nb.errors import StoreError, UnsafeFileError
from agentmem_nb.store._fs import (
    describe_entry,
    folder_fd,
    open_folder_in,
    open_in,
    refusal,
    temp_is_orphaned,
    temp_target,
)
from agentmem_nb.store.problems import Problem, ProblemKind, problem_for_error

__all__ = ["check_user_folder", "QUARANTINE_SUFFIX"]

QUARANTINE_SUFFIX = ".quarantine"
_CHUNK = 1 << 20


def check_user_folder(directory: Path, *, base: Path) -> list[Problem]:
    """Links, special files, quarantine files and orphaned temporary files in ``directory`` (a user folder below
    ``base``), in a stable order. An absent folder has none."""
    try:
        with folder_fd(directory, base=base) as fd:
            return _walk(fd, directory)
    except FileNotFoundError:
        return []
    except (StoreError, OSError) as exc:  # the user folder itself is a link, or cannot be opened: that is the finding
        return [problem_for_error(directory, exc)]


def _walk(top_fd: int, top: Path) -> list[Problem]:
    found: list[Problem] = []
    pending: list[tuple[int, Path]] = [(os.dup(top_fd), top)]  # each popped descriptor is closed by this loop
    while pending:
        dfd, here = pending.pop()
        try:
            with os.scandir(dfd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
            folders: list[tuple[int, Path]] = []
            for entry in entries:
                path = here / entry.name
                try:
                    if entry.is_symlink() or not (entry.is_dir(follow_symlinks=False)
                                                  or entry.is_file(follow_symlinks=False)):
                        found.append(problem_for_error(path, UnsafeFileError(path, describe_entry(dfd, entry.name))))
                    elif entry.is_dir(follow_symlinks=False):
                        folders.append((open_folder_in(dfd, entry.name, shown=path), path))
                    else:
                        found += _check_regular(dfd, entry.name, path)
                except FileNotFoundError:  # removed while we looked: nothing to report
                    continue
                except (StoreError, OSError) as exc:  # swapped for a link meanwhile, no permission: the finding
                    found.append(problem_for_error(path, exc))
            pending.extend(reversed(folders))  # popped in name order
        except OSError as exc:  # the folder cannot be listed (permissions): report it and go on with the rest
            found.append(problem_for_error(here, exc))
        finally:
            os.close(dfd)
    return found


def _check_regular(dfd: int, name: str, path: Path) -> list[Problem]:
    refused = refusal(os.stat(name, dir_fd=dfd, follow_symlinks=False))
    if refused is not None:  # a hard link: every reader refuses it, so the walk reports it (once, with theirs)
        return [problem_for_error(path, UnsafeFileError(path, refused))]
    target = temp_target(name)
    if target is None and not name.endswith(QUARANTINE_SUFFIX):
        return []
    fd = open_in(dfd, name, os.O_RDONLY, shown=path)
    try:
        size = os.fstat(fd).st_size
        if target is not None:
            if not temp_is_orphaned(fd):
                return []  # a write in progress
            return [Problem(str(path), ProblemKind.ORPHANED_TEMP_FILE, 0,
                            f"{_size(size)} left by a write of {target} that did not finish (the process was killed "
                            f"or crashed); {target} itself is whole. Nothing uses it: delete it")]
        entries = 0
        position = 0
        while chunk := os.pread(fd, _CHUNK, position):
            entries += chunk.count(b"\n")
            position += len(chunk)
        layer = name[: -len(QUARANTINE_SUFFIX)]
        return [Problem(str(path), ProblemKind.QUARANTINE_FILE, 0,
                        f"{entries} fragment(s), {_size(size)}, cut from {layer} by earlier repairs (unfinished last "
                        "lines of interrupted writes; nothing acknowledged). Each line holds one fragment's bytes "
                        "(bytes_b64): copy back what you need, then delete the file")]
    finally:
        os.close(fd)


def _size(n: int) -> str:
    if n < 10_000:
        return f"{n} bytes"
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} kB"
