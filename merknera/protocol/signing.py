"""Signatures on the platform's calls to bots (docs/bots/protocol.md section 1).

Every call carries ``X-Merknera-Timestamp`` (unix seconds) and ``X-Merknera-Signature:
sha256=<hex>``, the HMAC-SHA256 of ``"<timestamp>.<body>"`` keyed with the bot's secret (the
hex string the platform returned at registration, as UTF-8 bytes).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import _Hash  # typeshed's name for hashlib's hash objects

TIMESTAMP_HEADER = "X-Merknera-Timestamp"
SIGNATURE_HEADER = "X-Merknera-Signature"

_BLOCK = 64
"""SHA-256's block size: HMAC pads its key to it (RFC 2104)."""
_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))

KEYS_KEPT = 4096
"""Bot secrets whose keyed hashes are kept (about 0.5 KB each)."""


def new_secret() -> str:
    """A fresh bot secret: 32 random bytes as hex."""
    return secrets.token_hex(32)


def sha256_hex(text: str) -> str:
    """The SHA-256 of ``text`` (UTF-8) in lower-case hex: how a credential that the platform
    only checks (a Battlebot password, a guest's secret) is kept."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Compare two credentials in constant time (so that the time taken tells nothing of
    how much of a guess was right)."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@functools.lru_cache(maxsize=KEYS_KEPT)
def _keyed(secret: str) -> tuple[_Hash, _Hash]:
    """HMAC's inner and outer hashes of one secret, each having taken in its padded key."""
    key = secret.encode("utf-8")
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    return hashlib.sha256(key.translate(_INNER_PAD)), hashlib.sha256(key.translate(_OUTER_PAD))


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Merknera-Signature`` value for a body sent at ``timestamp``."""
    # HMAC written out (RFC 2104) over hashes keyed once per secret, rather than
    # hmac.digest: CPython's one-shot HMAC lets go of the GIL on every call, however short
    # the message, and on the event loop's thread that handed the GIL to the store's
    # writer thread at every call to a bot, to be waited for back.  hashlib's copy, update
    # and digest keep it (update lets go only for 2 KiB and more, where that pays).
    keyed_inner, keyed_outer = _keyed(secret)
    inner = keyed_inner.copy()
    inner.update(timestamp.encode("ascii"))
    inner.update(b".")
    inner.update(body)
    outer = keyed_outer.copy()
    outer.update(inner.digest())
    return "sha256=" + outer.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """Whether ``signature`` is the platform's signature of ``body`` at ``timestamp``."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature)
