"""A throwaway nginx reverse proxy for the tests: Debian's ``/usr/sbin/nginx`` serving a
configuration made for one test from a temporary prefix, in the foreground, stopped when
the test ends.

It ends the clients' TLS with a certificate of the test's own authority and passes their
requests on, round robin, to the platform's nodes, as an operator's proxy does: the peer's
address added to ``X-Forwarded-For`` (after whatever the client wrote there), the scheme
in ``X-Forwarded-Proto``, the ``Host`` as the client sent it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support import free_port

NGINX = Path("/usr/sbin/nginx")
START_SECONDS = 30.0
"""A safety net for nginx to accept connections (it takes a fraction of a second)."""
UPSTREAM_ADDRESS = "127.0.0.1"
"""Where nginx connects to the nodes from: the platform's trusted proxy."""


@dataclass
class Proxy:
    """A running nginx."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes]

    def url(self, host: str = "localhost") -> str:
        """Its base URL, by ``host``."""
        return f"https://{host}:{self.port}"

    def log(self) -> str:
        """Its error log (what it said about its upstreams)."""
        path = self.directory / "error.log"
        return path.read_text("utf-8", errors="replace") if path.exists() else ""


def configuration(directory: Path, port: int, nodes: Sequence[str], cert: Path,
                  key: Path) -> str:
    """nginx's configuration: TLS on 127.0.0.1:``port``, every request passed on to the
    ``nodes`` (``host:port``) in turn."""
    servers = "\n".join(f"        server {node};" for node in nodes)
    # As root, nginx would run its workers as nobody, who cannot read the test's files.
    user = "user root;" if os.geteuid() == 0 else ""
    return f"""
{user}
daemon off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log info;
events {{ worker_connections 512; }}
http {{
    access_log {directory}/access.log;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    upstream merknera {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location / {{
            proxy_pass http://merknera;
            proxy_bind {UPSTREAM_ADDRESS};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;
        }}
    }}
}}
"""


@contextmanager
def running_proxy(directory: Path, nodes: Sequence[str], cert: Path,
                  key: Path) -> Iterator[Proxy]:
    """nginx in front of ``nodes`` until the block ends.

    :raises FileNotFoundError: naming the package, when nginx is not installed.
    """
    if not NGINX.exists():
        raise FileNotFoundError(f"no {NGINX}: make test installs Debian's nginx package "
                                "(scripts/system-packages nginx)")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = directory / "nginx.conf"
    conf.write_text(configuration(directory, port, nodes, cert, key))
    process = subprocess.Popen(
        [str(NGINX), "-p", str(directory), "-e", str(directory / "error.log"), "-c",
         str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    proxy = Proxy(port, directory, process)
    try:
        _wait_accepting(proxy)
        yield proxy
    finally:
        process.terminate()
        try:
            process.wait(START_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for temporary in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            shutil.rmtree(directory / temporary, ignore_errors=True)


def _wait_accepting(proxy: Proxy) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        if proxy.process.poll() is not None:
            raise RuntimeError(f"nginx exited with {proxy.process.returncode}:\n{proxy.log()}")
        try:
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not listen within {START_SECONDS:g} s:\n"
                                   f"{proxy.log()}") from None
            time.sleep(0.05)
