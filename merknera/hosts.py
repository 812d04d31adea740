"""A host and port as URLs and ``Host`` headers write them."""

from __future__ import annotations


def host_port(host: str, port: int | None = None) -> str:
    """``host:port`` with an IPv6 address in brackets (``[::1]:8080``, RFC 3986), as a
    URL's authority; the host alone, bracketed likewise, when ``port`` is None (a URL at
    its scheme's default port)."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"
