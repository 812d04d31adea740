"""One node to a SQLite file: a platform that serves a SQLite file holds an exclusive lock
on a file beside it (``<db>.node-lock``) while it runs, and a second one is refused at
start-up.

Two processes serving one file each run every unfinished game, schedule the ladder and
ping every bot: they abort each other's games and disable well-behaved bots for "faults of
their own".
The lock is ``flock`` on a file of its own (SQLite locks the database with ``fcntl``, which
``flock`` would meet on NFS); the kernel lets it go when the process ends, however it ends,
so a node killed by SIGKILL leaves nothing to clean up.  The command-line tools (``merknera
user add``, ``tournament``) do not take it: they work beside a running node.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from merknera.store.db import POSTGRESQL_URL, StoreError


@contextlib.contextmanager
def serving(db: str) -> Iterator[None]:
    """Hold the node lock of the SQLite file ``db`` (nothing for ``:memory:`` and for a
    PostgreSQL database, which any number of nodes serve).

    :raises StoreError: naming the file and the node that holds it, when another process
        serves it.
    """
    if db == ":memory:" or POSTGRESQL_URL.match(db):
        yield
        return
    path = Path(f"{db}.node-lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise StoreError(
                f"{db} is served already ({holder}): a SQLite file serves one node. Stop "
                "that one first; for several nodes, move the arena to PostgreSQL (merknera "
                "db copy --from FILE --to postgresql://...) and serve that") from None
        os.ftruncate(fd, 0)
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        os.pwrite(fd, f"merknera serve, pid {os.getpid()}, since {stamp}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # lets the lock go
