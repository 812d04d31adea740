"""The TLS the platform's listeners speak: one server context from a certificate and key."""

from __future__ import annotations

import ssl

from merknera.config import TlsFiles


class TlsError(OSError):
    """A certificate or key that cannot be served, named with its files."""


def server_context(files: TlsFiles) -> ssl.SSLContext:
    """A server's TLS context (Python's defaults for serving: TLS 1.2 and later) with the
    certificate (chain) and key of ``files``.

    :raises TlsError: when either cannot be read, or the key is not the certificate's.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(files.cert, files.key)
    except OSError as exc:  # ssl.SSLError too
        reason = exc.strerror or str(exc)
        raise TlsError(f"cannot serve TLS with the certificate {files.cert} and the key "
                       f"{files.key}: {reason}") from None
    return context
