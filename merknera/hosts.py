"""Hosts, ports and web origins as URLs, ``Host`` and ``Origin`` headers write them."""

from __future__ import annotations

import urllib.parse


def host_port(host: str, port: int | None = None) -> str:
    """``host:port`` with an IPv6 address in brackets (``[::1]:8080``, RFC 3986), as a
    URL's authority; the host alone, bracketed likewise, when ``port`` is None (a URL at
    its scheme's default port)."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


def parse_origin(text: str) -> str | None:
    """``text`` as a web origin (what a browser sends in ``Origin``), written one way
    (``http://localhost:4200``; the port always given, the host in lower case), so that
    two spellings of one origin compare equal; None for anything else (``null``, a path,
    another scheme)."""
    try:
        parts = urllib.parse.urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if (parts.scheme.lower() not in _DEFAULT_PORTS or not host or parts.username is not None
            or parts.password is not None or parts.path not in ("", "/") or parts.query
            or parts.fragment or text.strip().endswith(("?", "#"))):
        return None
    scheme = parts.scheme.lower()
    return f"{scheme}://{host_port(host, port if port is not None else _DEFAULT_PORTS[scheme])}"


_DEFAULT_PORTS = {"http": 80, "https": 443}


_DEFAULT_PORTS = {"http": 80, "https": 443}
