"""A throwaway PostgreSQL cluster for the tests: ``initdb`` on a temporary directory, then
``pg_ctl`` serving it on a free port of 127.0.0.1 and a socket in the same directory,
stopped (and its files removed) when the tests end.

It runs as the user running the tests, or as ``postgres`` when that is root (the server
refuses to run as root).  The programs are Debian's ``postgresql`` package's
(``/usr/lib/postgresql/<version>/bin``), which ``make test`` installs when it is missing.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support import free_port

_numbers = itertools.count(1)

SERVER_USER = "postgres"
"""Who runs the cluster when the tests run as root."""
START_SECONDS = 60
"""A safety net for ``pg_ctl start -w`` (it returns once the server accepts connections)."""


def server_bin() -> Path:
    """The directory of the newest installed server's programs.

    :raises FileNotFoundError: naming the package, when none is installed.
    """
    found = sorted((path for path in Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")
                    if path.parts[-3].isdigit()), key=lambda path: int(path.parts[-3]))
    if not found:
        raise FileNotFoundError("no PostgreSQL server here: make test installs Debian's "
                                "postgresql package (scripts/system-packages postgresql)")
    return found[-1].parent


@dataclass
class Cluster:
    """A running throwaway cluster."""

    directory: Path
    port: int
    user: str
    bin: Path

    @property
    def url(self) -> str:
        """A ``postgresql://`` URL of its ``postgres`` database over TCP."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        """A ``postgresql://`` URL of the database ``name`` over TCP."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{name}"

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        name = f"store_{next(_numbers)}"
        self.psql(f"CREATE DATABASE {name}")
        return self.database_url(name)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` with psql; its output, unaligned and without headers."""
        done = subprocess.run(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
             "-p", str(self.port), "-U", self.user, "-d", database, "-c", sql],
            capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout.strip()

    def pause(self) -> None:
        """Stop the server as an operator's restart does (``pg_ctl stop -m fast``: its
        sessions are ended, new connections refused), keeping its files for
        :meth:`resume`."""
        _as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.directory / "data"),
                         "-m", "fast", "-w", "stop"])

    def resume(self) -> None:
        """Start the server again after :meth:`pause`, on the same port."""
        _start_server(self.bin, self.directory, self.port)

    def stop(self) -> None:
        """Stop the server at once and remove its files."""
        _as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.directory / "data"),
                         "-m", "immediate", "-w", "stop"], check=False)
        shutil.rmtree(self.directory, ignore_errors=True)


def start_cluster() -> Cluster:
    """``initdb`` and start a cluster; trusts local connections (a test's own, on
    127.0.0.1 and its socket directory only)."""
    bin_dir = server_bin()
    directory = Path(tempfile.mkdtemp(prefix="merknera-pg-"))
    data = directory / "data"
    user = SERVER_USER if os.geteuid() == 0 else _current_user()
    if os.geteuid() == 0:
        shutil.chown(directory, SERVER_USER, SERVER_USER)
    _as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", user, "-A", "trust",
                     "-E", "UTF8", "--no-sync"])
    port = free_port()
    try:
        _start_server(bin_dir, directory, port)
    except subprocess.CalledProcessError as exc:
        server_log = directory / "server.log"
        log = server_log.read_text() if server_log.exists() else ""
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"the throwaway PostgreSQL did not start: {exc}\n{log}") from exc
    return Cluster(directory, port, user, bin_dir)


def _start_server(bin_dir: Path, directory: Path, port: int) -> None:
    """``pg_ctl start`` the cluster in ``directory`` on ``port``, until it accepts
    connections."""
    options = (f"-c listen_addresses=127.0.0.1 -c port={port} "
               f"-c unix_socket_directories={directory} -c fsync=off "
               "-c full_page_writes=off -c synchronous_commit=off")
    _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(directory / "data"), "-l",
                     str(directory / "server.log"), "-o", options, "-w", "-t",
                     str(START_SECONDS), "start"])


def _current_user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


def _as_server_user(command: list[str], *, check: bool = True) -> None:
    """Run a server program as the user the cluster runs as."""
    if os.geteuid() == 0:
        command = ["runuser", "-u", SERVER_USER, "--", *command]
    subprocess.run(command, check=check, capture_output=True, timeout=START_SECONDS * 2)
