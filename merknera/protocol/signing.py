"""Signatures on the platform's calls to bots (PROTOCOL.md section 1).

Every call carries ``X-Merknera-Timestamp`` (unix seconds) and ``X-Merknera-Signature:
sha256=<hex>``, the HMAC-SHA256 of ``"<timestamp>.<body>"`` keyed with the bot's secret (the
hex string the platform returned at registration, as UTF-8 bytes).
"""

from __future__ import annotations

import hmac
import secrets

TIMESTAMP_HEADER = "X-Merknera-Timestamp"
SIGNATURE_HEADER = "X-Merknera-Signature"


def new_secret() -> str:
    """A fresh bot secret: 32 random bytes as hex."""
    return secrets.token_hex(32)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Merknera-Signature`` value for a body sent at ``timestamp``."""
    # hmac.digest: the one-shot form, computed in C without an HMAC object.
    return "sha256=" + hmac.digest(secret.encode("utf-8"),
                                   timestamp.encode("ascii") + b"." + body, "sha256").hex()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """Whether ``signature`` is the platform's signature of ``body`` at ``timestamp``."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)
