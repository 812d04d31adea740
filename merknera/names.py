"""Bot names: what may be in one, and when two are the same name.

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

import functools
import re
import unicodedata
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


def scripts(text: str) -> frozenset[str]:
    """The scripts of the letters in ``text`` (digits, punctuation and marks have none)."""
    from confusable_homoglyphs import categories

    found = {categories.alias(char) for char in text}
    return frozenset(found - _NEUTRAL_SCRIPTS - {"Unknown"})


def check_bot_name(raw: str) -> BotName:
    """A bot name as given (spaces at the ends taken off), checked, with its key.

    :raises NameRefusedError: saying what is wrong with it.
    """
    text = raw.strip(" ")
    if not text:
        raise NameRefusedError("The bot name is empty")
    check_text(text, "bot name")
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
    """Load the Unicode tables names are checked with (about 30 ms, once), so that the
    first registration does not pay for it inside its write transaction."""
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


ANONYMOUS = "anonymous"
"""The name of the guest that plays for people who give no name (a Kalaha board that anyone
may move on): nobody may register it, or a name spelt like it."""


def is_anonymous_name(name: BotName) -> bool:
    """Whether ``name`` is :data:`ANONYMOUS`, however it is spelt."""
    return name.key == name_key(ANONYMOUS) or name.shape == name_shape(ANONYMOUS)
