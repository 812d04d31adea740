"""A host and port as URLs write them (merknera.hosts): IPv6 addresses in brackets."""

from __future__ import annotations

import pytest

from merknera.clock import now_ms
from merknera.hosts import host_port


@pytest.mark.parametrize(("host", "port", "shown"), [
    ("127.0.0.1", 8080, "127.0.0.1:8080"),
    ("example.org", 80, "example.org:80"),
    ("::1", 8080, "[::1]:8080"),
    ("fe80::1%eth0", 443, "[fe80::1%eth0]:443"),
    ("example.org", None, "example.org"),
    ("::1", None, "[::1]"),
])
def test_host_port(host: str, port: int | None, shown: str) -> None:
    assert host_port(host, port) == shown


def test_now_ms_is_whole_milliseconds() -> None:
    assert isinstance(now_ms(), int) and now_ms() > 1_600_000_000_000
