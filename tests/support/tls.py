"""A throwaway certificate authority for the TLS tests (the ``openssl`` command's)."""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path


def throwaway_ca(directory: Path) -> tuple[Path, Path, Path]:
    """A certificate authority made for one test, and a certificate it signed for
    ``localhost`` and 127.0.0.1: (the CA's certificate, the server's certificate, its key).
    """
    ca_key, ca_cert = directory / "ca.key", directory / "ca.pem"
    key, request = directory / "server.key", directory / "server.csr"
    cert = directory / "server.pem"
    names = directory / "names.ext"
    names.write_text("subjectAltName = DNS:localhost, IP:127.0.0.1\n")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(ca_key), "-out",
            str(ca_cert), "-days", "2", "-subj", "/CN=Merknera test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(request),
            "-subj", "/CN=localhost")
    openssl("x509", "-req", "-in", str(request), "-CA", str(ca_cert), "-CAkey", str(ca_key),
            "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(names))
    return ca_cert, cert, key


def trusting(authority: Path) -> ssl.SSLContext:
    """A client's TLS context that trusts ``authority``'s certificates only."""
    return ssl.create_default_context(cafile=str(authority))
