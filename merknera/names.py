"""Bot names: what may be in one, and when two are the same name.

Every name a bot or its owner is known by comes in through here, whatever the wire (``/rpc``,
Battlebot's registrations, guests of the gateways and of the play page), so the same rules
hold everywhere: at most :data:`LONGEST_NAME` characters, checked before anything else.

A name is shown on every page, so a name that looks like another's is an impersonation:
``аlice`` with a Cyrillic ``а`` next to ``alice``, ``alice`` with a zero-width space, a
right-to-left override that shows the name backwards.  So:

* characters that show nothing or move other characters (control, format, private-use
  and unassigned code points, and every separator but the plain space) are refused;
* a name may not mix scripts (Latin and Cyrillic, say), except the mixes a language
  writes in (Japanese: Han, Hiragana, Katakana; Chinese and Korean with Han), each with
  Latin;
* two names are the same name when they are equal after NFKC normalisation and case
  folding (``Alice``, ``ALICE`` and ``ａｌｉｃｅ`` are one name) with every character
  replaced by a representative of the characters Unicode lists as confusable with it
  (UTS #39's confusables, from the ``confusable-homoglyphs`` package's data: ``a1ice``),
  or equal in that way without the case folding (``aIice``, with a capital I).
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a surrogate code point",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Zs": "a space other than the plain space",
}
_NEUTRAL_SCRIPTS = frozenset({"COMMON", "INHERITED"})
_SCRIPT_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
"""Scripts that one name may mix (UTS #39's highly restrictive level)."""
_SPACES = re.compile(r" +")

LONGEST_NAME = 100
"""Characters in a bot's or an owner's name, at most (what Merknera's registration took)."""


class NameRefusedError(ValueError):
    """A name that may not be used, and why (a message for the bot's author)."""


@dataclass(frozen=True)
class BotName:
    """A bot name that passed the checks, and the key it is compared by."""

    text: str
    key: str
    """:func:`name_key`"""
    shape: str
    """:func:`name_shape`"""


def check_text(text: str, what: str) -> None:
    """Refuse characters that show nothing or reorder what follows them.

    :raises NameRefusedError: naming the character, its code point and ``what`` held it.
    """
    for char in text:
        category = unicodedata.category(char)
        if char != " " and category in _REFUSED_CATEGORIES:
            name = unicodedata.name(char, "")
            label = f"U+{ord(char):04X}{' ' + name if name else ''}"
            raise NameRefusedError(
                f"The {what} contains {_REFUSED_CATEGORIES[category]} ({label}); "
                "use letters, digits, punctuation and plain spaces")


def check_name(raw: str, what: str) -> str:
    """A name as given (spaces at the ends taken off): :func:`check_length`'s, and no
    character :func:`check_text` refuses.

    :raises NameRefusedError: saying what is wrong with it (``what``: "bot name",
        "owner name").
    """
    text = check_length(raw, what)
    check_text(text, what)
    return text


def check_length(raw: str, what: str) -> str:
    """A name as given (spaces at the ends taken off), not empty and at most
    :data:`LONGEST_NAME` characters: the one check even a name stored before the finer
    rules passes (it is looked up, not made).

    :raises NameRefusedError: saying what is wrong with it.
    """
    text = raw.strip(" ")
    if not text:
        raise NameRefusedError(f"The {what} is empty")
    if len(text) > LONGEST_NAME:
        raise NameRefusedError(f"The {what} is {len(text)} characters long; at most "
                               f"{LONGEST_NAME} are allowed")
    return text


def scripts(text: str) -> frozenset[str]:
    """The scripts of the letters in ``text`` (digits, punctuation and marks have none)."""
    from confusable_homoglyphs import categories

    found = {categories.alias(char) for char in set(text)}
    return frozenset(found - _NEUTRAL_SCRIPTS - {"Unknown"})


def check_bot_name(raw: str) -> BotName:
    """A bot name as given (spaces at the ends taken off), checked, with its key.

    :raises NameRefusedError: saying what is wrong with it.
    """
    text = check_name(raw, "bot name")
    used = scripts(unicodedata.normalize("NFKC", text))
    if len(used) > 1 and not any(used <= mix for mix in _SCRIPT_MIXES):
        listed = " and ".join(script.title() for script in sorted(used))
        raise NameRefusedError(
            f'The bot name "{text}" mixes {listed} letters, which can look alike; '
            "write it in one script")
    return BotName(text, name_key(text), name_shape(text))


def name_key(text: str) -> str:
    """The key two names are compared by, case aside: the confusables skeleton of the
    NFKC-normalised, case-folded name (equal keys: the same name).  Never raises."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return _skeleton(folded)


def name_shape(text: str) -> str:
    """The key two names are compared by as they look, case and all: UTS #39's skeleton
    of the NFKC-normalised name, which tells that "aIice" (a capital I) looks like
    "alice" although their case-folded forms differ.  Never raises."""
    return _skeleton(unicodedata.normalize("NFKC", text))


def prepare() -> None:
    """Load the Unicode tables names are checked with (once: it takes a while), so that
    the first registration does not pay for it inside its write transaction."""
    check_bot_name("prepare")


def _skeleton(text: str) -> str:
    representative = _representatives()
    return _SPACES.sub(" ", "".join(representative.get(char, char) for char in text).strip())


@functools.cache
def _representatives() -> dict[str, str]:
    """Each confusable character's representative: the least code point among the
    characters it is confusable with, directly or through others."""
    from confusable_homoglyphs import confusables

    parent: dict[str, str] = {}

    def root(char: str) -> str:
        while parent.get(char, char) != char:
            parent[char] = parent.get(parent[char], parent[char])
            char = parent[char]
        return char

    for char, glyphs in confusables.confusables_data.items():
        for glyph in glyphs:
            other = glyph["c"]
            if len(char) == 1 and len(other) == 1:
                first, second = sorted((root(char), root(other)))
                if first != second:
                    parent[second] = first
    return {char: root(char) for char in parent}


CLAIM_SEPARATOR = "#"
"""What parts a guest's name from its secret where the secret can go nowhere else: a
MebiPenny client sends only ``{"name": ...}``, so its player writes ``bob#s3cret``."""
SHORTEST_SECRET = 8
"""Characters of a guest's secret, at least (a secret is guessed a guess at a time, and
wrong guesses slow their sender down: see :meth:`merknera.gateways.tables.Tables.guest`)."""
LONGEST_SECRET = 200
"""Characters of a guest's secret, at most."""


@dataclass(frozen=True)
class Claim:
    """What a player gave to play as a guest: a name (None: none, to play as
    :data:`ANONYMOUS`) and perhaps a secret of its own (a field of the request); the name
    may carry the secret instead, as ``bob#s3cret``."""

    name: str | None
    secret: str | None = None

    def resolved(self) -> Claim:
        """The name and the secret apart (the secret after the name's first
        :data:`CLAIM_SEPARATOR`, if it has one), the name's end spaces taken off.

        :raises NameRefusedError: for an empty secret, one too long, or two secrets.
        """
        if self.name is None:
            return Claim(None)  # the anonymous player's: a secret is of no use
        name, marked, in_name = self.name.partition(CLAIM_SEPARATOR)
        secret = self.secret
        if marked:
            if secret is not None and secret != in_name:
                raise NameRefusedError("The secret is given twice (after the name's "
                                       f"{CLAIM_SEPARATOR} and on its own), and not the same")
            secret = in_name
        if secret is not None and not SHORTEST_SECRET <= len(secret) <= LONGEST_SECRET:
            raise NameRefusedError(f"A guest's secret is {SHORTEST_SECRET} to {LONGEST_SECRET} "
                                   f"characters long, not {len(secret)}")
        return Claim(name.strip(), secret)


class ClaimFieldError(ValueError):
    """A request's ``name`` or ``secret`` that is not what a claim is made of, and why."""


class Unnamed(enum.Enum):
    """What a request that gives no ``name`` is, as each gateway's document says."""

    REFUSED = "refused"
    """No claim: a name must be given (a hexagons player's join)."""
    LEFT_OUT = "left out"
    """Anonymous when the name is left out; null is no name (the play API)."""
    LEFT_OUT_OR_NULL = "left out or null"
    """Anonymous when the name is left out or null (a Kalaha board)."""


def read_claim(fields: Mapping[str, object], unnamed: Unnamed) -> Claim:
    """The claim of a request's ``name`` and ``secret`` fields (the name's own secret,
    :func:`merknera.gateways.guests.guest`), as given: anonymous when there is no name, as
    ``unnamed`` says.

    :raises ClaimFieldError: for a name that is not a non-empty string, or a secret that is
        not a string.
    """
    name, secret = fields.get("name"), fields.get("secret")
    anonymous = unnamed is not Unnamed.REFUSED and (
        "name" not in fields or (name is None and unnamed is Unnamed.LEFT_OUT_OR_NULL))
    if not anonymous and (not isinstance(name, str) or not name.strip()):
        raise ClaimFieldError("name must be a non-empty string" + (
            "" if unnamed is Unnamed.REFUSED else ", or left out to play anonymously"))
    if secret is not None and not isinstance(secret, str):
        raise ClaimFieldError("secret must be a string (the name's)")
    return Claim(name if isinstance(name, str) and not anonymous else None, secret)


ANONYMOUS = "anonymous"
"""The name of the guest that plays for people who give no name (a Kalaha board that anyone
may move on): nobody may register it, or a name spelt like it."""


def is_anonymous_name(name: BotName) -> bool:
    """Whether ``name`` is :data:`ANONYMOUS`, however it is spelt."""
    return name.key == name_key(ANONYMOUS) or name.shape == name_shape(ANONYMOUS)
