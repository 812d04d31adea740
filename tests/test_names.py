"""Bot names: what is refused, and which names are the same name."""

from __future__ import annotations

import re

import pytest

from merknera.names import (
    LONGEST_NAME,
    Claim,
    NameRefusedError,
    check_bot_name,
    check_name,
    name_key,
    name_shape,
)


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
    ("x" * 101, "The bot name is 101 characters long; at most 100 are allowed"),
    ("\u0430" * 60_001, "The bot name is 60001 characters long; at most 100 are allowed"),
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
    "x" * 100,
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


@pytest.mark.parametrize("raw", [" " + "o" * LONGEST_NAME + " ", "Ada Lovelace"])
def test_an_owners_name_has_the_bot_names_limits(raw: str) -> None:
    assert check_name(raw, "owner name") == raw.strip()
    with pytest.raises(NameRefusedError, match="The owner name is 101 characters long"):
        check_name("o" * (LONGEST_NAME + 1), "owner name")
    with pytest.raises(NameRefusedError, match=re.escape("The owner name contains a control")):
        check_name("Ada\tL", "owner name")


@pytest.mark.parametrize(("given", "resolved"), [
    (Claim(None), Claim(None)),
    (Claim(None, "s3cret-s3cret"), Claim(None)),
    (Claim(" bob "), Claim("bob")),
    (Claim("bob", "s3cret-s3cret"), Claim("bob", "s3cret-s3cret")),
    (Claim("bob#s3cret-s3cret"), Claim("bob", "s3cret-s3cret")),
    (Claim(" bob #s3 cret#2-long"), Claim("bob", "s3 cret#2-long")),
    (Claim("bob#s3cret-s3cret", "s3cret-s3cret"), Claim("bob", "s3cret-s3cret")),
    (Claim("#s3cret-s3cret"), Claim("", "s3cret-s3cret")),
], ids=["anonymous", "anonymous with a secret", "a name", "a secret of its own",
        "after the name", "the first #", "both the same", "no name before it"])
def test_a_claim_parts_the_name_from_its_secret(given: Claim, resolved: Claim) -> None:
    assert given.resolved() == resolved
