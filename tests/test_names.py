"""Bot names: what is refused, and which names are the same name."""

from __future__ import annotations

import re

import pytest

from merknera.names import NameRefusedError, check_bot_name, name_key, name_shape


@pytest.mark.parametrize(("raw", "why"), [
    ("ali\u200bce", "an invisible formatting character (U+200B ZERO WIDTH SPACE)"),
    ("ali\u202ece", "an invisible formatting character (U+202E RIGHT-TO-LEFT OVERRIDE)"),
    ("ali\u2066ce", "an invisible formatting character (U+2066 LEFT-TO-RIGHT ISOLATE)"),
    ("ali\x85ce", "a control character (U+0085)"),                   # C1 control
    ("ali\x9bce", "a control character (U+009B)"),
    ("ali\x07ce", "a control character (U+0007)"),
    ("ali\u00a0ce", "a space other than the plain space (U+00A0 NO-BREAK SPACE)"),
    ("ali\u3000ce", "a space other than the plain space (U+3000 IDEOGRAPHIC SPACE)"),
    ("ali\u2028ce", "a line separator (U+2028 LINE SEPARATOR)"),
    ("ali\ue000ce", "a private-use character (U+E000)"),
    ("\u0430lice", "mixes Cyrillic and Latin letters"),                # Cyrillic а
    ("Ρaypal", "mixes Greek and Latin letters"),                        # Greek Rho
    ("   ", "The bot name is empty"),
])
def test_names_that_are_refused(raw: str, why: str) -> None:
    with pytest.raises(NameRefusedError, match=re.escape(why)):
        check_bot_name(raw)


@pytest.mark.parametrize("raw", [
    "Perfect Polly", "That's Numberwang", "<script>alert(1)</script>", "bot-2.0_beta",
    "Сова",            # one script: Cyrillic
    "日本のボット",      # Han and Hiragana and Katakana: Japanese
    "Go 碁 bot",        # Latin with Han
    "한국 bot",          # Hangul with Latin
    "café au lait",    # a Latin letter with its accent
])
def test_names_that_are_accepted(raw: str) -> None:
    assert check_bot_name(raw).text == raw


@pytest.mark.parametrize(("first", "second"), [
    ("alice", "Alice"), ("alice", "ALICE"), ("alice", "ａｌｉｃｅ"),   # case, width
    ("alice", "a1ice"), ("alice", "aIice"),                            # look-alike letters
    ("bot0", "botO"), ("My Bot", "My  Bot"), ("ﬁsh", "fish"),           # a ligature
])
def test_names_that_are_the_same_name(first: str, second: str) -> None:
    assert name_key(first) == name_key(second) or name_shape(first) == name_shape(second)


@pytest.mark.parametrize(("first", "second"), [
    ("alice", "alicia"), ("kai", "kal"), ("bot1", "bot2"), ("Polly", "Pete"),
])
def test_names_that_are_different_names(first: str, second: str) -> None:
    assert name_key(first) != name_key(second)
    assert name_shape(first) != name_shape(second)
