"""The container deployment's files, checked without containers (none run on the test
machines): ``compose.yaml`` agrees with the Dockerfile, the platform's settings and the
nginx configuration, and ``deploy/nginx.conf`` passes ``nginx -t`` and proxies to a real
platform over TLS, run by Debian's nginx (``make test`` installs it).

The nginx test runs the repository's configuration with only what names the containers'
world replaced: the nodes' host names by the platform's address, the ports 80 and 443 by
free ports of 127.0.0.1, and the certificate's directory by a throwaway authority's.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import subprocess
from typing import Any

import yaml

from merknera.config import KEYS
from tests.e2e.harness import E2E, REPO, START_PATIENCE
from tests.support import free_port
from tests.support.dockerfile import read_dockerfile
from tests.support.tls import throwaway_ca

NGINX = "/usr/sbin/nginx"
CONF = REPO / "deploy" / "nginx.conf"
COMPOSE = REPO / "compose.yaml"
UPSTREAM = re.compile(r"^\s*server ([\w.-]+):(\d+);", re.MULTILINE)


def compose() -> dict[str, Any]:
    """compose.yaml, parsed."""
    with COMPOSE.open("rb") as handle:
        found: dict[str, Any] = yaml.safe_load(handle)
    return found


def nodes(services: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services that run Merknera's image."""
    return {name: service for name, service in services.items()
            if service.get("image") == "merknera"}


def test_compose_runs_two_nodes_of_the_image_on_postgresql_behind_the_proxy() -> None:
    services = compose()["services"]
    merknera = nodes(services)
    assert sorted(merknera) == ["merknera-1", "merknera-2"]
    image = read_dockerfile()[-1]
    settings = {key.env for key in KEYS.values()}
    environments = [image.environment(), *(node["environment"] for node in merknera.values())]
    for environment in environments:
        assert {key for key in environment if key.startswith("MERKNERA_")} <= settings, \
            environment
    for node in merknera.values():
        assert node["build"] == "."
        assert node["environment"]["MERKNERA_DB"].startswith("postgresql://")
        assert node["depends_on"]["postgres"]["condition"] == "service_healthy"
    # nginx sends to every node, at the port the image serves.
    port = image.environment()["MERKNERA_PORT"]
    assert set(UPSTREAM.findall(CONF.read_text("utf-8"))) == {(name, port) for name in merknera}
    proxy = services["proxy"]
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    mounted = {volume.split(":")[0] for volume in proxy["volumes"]}
    assert "./deploy/nginx.conf" in mounted and (REPO / "deploy" / "nginx.conf").is_file()


def replaced(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new``; ``old`` must be there."""
    assert old in text, f"{CONF} has no {old!r} any more: update this test"
    return text.replace(old, new)


async def test_nginx_conf_passes_nginx_t_and_proxies_to_the_platform_over_tls(
        e2e: E2E) -> None:
    platform = await e2e.start_platform()
    upstream = platform.url.removeprefix("http://")
    tls = e2e.tmp_path / "tls"
    tls.mkdir()
    ca, cert, key = throwaway_ca(tls)
    cert.rename(tls / "fullchain.pem")
    key.rename(tls / "privkey.pem")
    http_port, https_port = free_port(), free_port()
    text = CONF.read_text("utf-8")
    text = UPSTREAM.sub(f"        server {upstream};", text)
    text = replaced(text, "listen 80;", f"listen 127.0.0.1:{http_port};")
    text = replaced(text, "listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;")
    text = replaced(text, "/etc/nginx/tls/", f"{tls}/")
    prefix = e2e.tmp_path / "nginx"
    prefix.mkdir()
    (prefix / "nginx.conf").write_text(text, "utf-8")
    command = [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
               "-e", str(prefix / "error.log"), "-g", f"pid {prefix / 'nginx.pid'}; daemon off;"]
    checked = await asyncio.to_thread(
        subprocess.run, [*command, "-t"], capture_output=True, text=True, timeout=60,
        check=False)
    assert checked.returncode == 0, checked.stderr

    with (prefix / "stdout.log").open("wb") as out, (prefix / "stderr.log").open("wb") as err:
        nginx = await asyncio.create_subprocess_exec(*command, stdout=out, stderr=err,
                                                     stdin=asyncio.subprocess.DEVNULL)
    trusted = ssl.create_default_context(cafile=str(ca))
    try:
        async def proxied() -> tuple[dict[str, Any] | None, str]:
            if nginx.returncode is not None:
                raise AssertionError(f"nginx exited {nginx.returncode}: "
                                     f"{(prefix / 'stderr.log').read_text()}")
            async with e2e.session.get(f"https://localhost:{https_port}/readyz",
                                       ssl=trusted) as answer:
                body = await answer.json() if answer.status == 200 else None
                return body, f"HTTP {answer.status}"

        assert await e2e.wait_until("/readyz through nginx", proxied,
                                    patience=START_PATIENCE) == {"status": "ready"}
        async with e2e.session.get(f"https://localhost:{https_port}/api/nodes",
                                   ssl=trusted) as answer:
            assert answer.status == 200 and (await answer.json())["count"] == 1
        async with e2e.session.get(f"http://localhost:{http_port}/games?page=2",
                                   allow_redirects=False) as answer:
            assert answer.status == 308
            assert answer.headers["Location"] == "https://localhost/games?page=2"
        access_log = (prefix / "stdout.log").read_text("utf-8")
        assert "GET /readyz" in access_log and "GET /api/nodes" in access_log

        # One client's requests under way are capped at the proxy (the nodes do not cap a
        # trusted proxy's connections per client): 64 bodies nginx waits for, then a 65th
        # request is refused.  On a busy machine nginx may not count a held request at once
        # (seen: a request of the client's refused before the 64th was held): one more is
        # held at each look, at most 16 more.
        held = []

        async def hold() -> None:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", https_port, ssl=trusted, server_hostname="localhost")
            writer.write(b"POST /rpc HTTP/1.1\r\nHost: localhost\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n")
            await writer.drain()
            held.append((reader, writer))

        try:
            for _ in range(64):
                await hold()

            async def refused() -> tuple[int | None, str]:
                async with e2e.session.get(f"https://localhost:{https_port}/healthz",
                                           ssl=trusted) as answer:
                    if answer.status == 503:
                        return 503, "HTTP 503"
                if len(held) < 80:
                    await hold()
                return None, f"HTTP {answer.status} with {len(held)} requests held"

            assert await e2e.wait_until("a request beyond 64 refused", refused) == 503
        finally:
            for _, writer in held:
                writer.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            nginx.terminate()
        await asyncio.wait_for(nginx.wait(), START_PATIENCE)
