"""Battlebot's GraphQL endpoint (merknera.gateways.battlebot.graphql_api) bounds every
document before the costly steps: its length before parsing, its tokens while parsing, its
shape (fields with fragments expanded, depth, aliases, the widest selection) before
validation, and the fields resolved during execution; introspection is off.  Each costly
shape of the security issue is refused with its reason; registrations' documents pass.
The registration itself is played against a real platform in tests/e2e."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import parse

from merknera.games import JSONObject
from merknera.gateways.battlebot.accounts import Registered
from merknera.gateways.battlebot.graphql_api import (
    LARGEST,
    LONGEST_DOCUMENT,
    MOST_BOTS,
    MOST_RESOLVED,
    MOST_TOKENS,
    GraphQLApi,
    Shape,
    shape_of,
)
from merknera.gateways.battlebot.wire import BattlebotGame

APOLLO_REGISTRATION = """
mutation Register($gameType: GameType!, $name: ID!, $owner: String!) {
  registerBot(gameType: $gameType, name: $name, owner: $owner) {
    password
    bot { name owner gameType dateRegistered __typename }
    __typename
  }
}"""


def nested_fragments(levels: int) -> str:
    """Each fragment spreads the next twice: 2 ** levels fields once expanded, in a
    document of a few hundred characters (a "fragment bomb")."""
    parts = ["query { bots(gameType: NUMBERWANG) { ...F0 } }"]
    for level in range(levels):
        parts.append(f"fragment F{level} on Bot {{ ...F{level + 1} ...F{level + 1} }}")
    parts.append(f"fragment F{levels} on Bot {{ name }}")
    return "\n".join(parts)


def aliased_introspection(outer: int, inner: int) -> str:
    """The issue's 80 x 80 alias introspection document (3.3 KB, an 8.3 MB answer): one
    root field, ``__schema``, with 80 aliases of its ``types``, each spreading a fragment
    of 80 aliases of a type's ``fields``."""
    types = " ".join(f"a{i}: types {{ ...F }}" for i in range(outer))
    fields = " ".join(f"b{j}: fields {{ name }}" for j in range(inner))
    return f"{{ __schema {{ {types} }} }} fragment F on __Type {{ {fields} }}"


@pytest.mark.parametrize(("query", "shape"), [
    ("{ gameTypes }", Shape(1, 1, 0, 1)),
    (APOLLO_REGISTRATION, Shape(fields=9, depth=3, aliases=0, widest=5)),
    (nested_fragments(3), Shape(fields=9, depth=2, aliases=0, widest=8)),
    ("query { a: bots(gameType: NUMBERWANG) { ...F ... on Bot { n: name } } } "
     "fragment F on Bot { ...F owner }", Shape(fields=3, depth=2, aliases=2, widest=2)),
    ("{ bots(gameType: NUMBERWANG) { ...Missing } }", Shape(1, 1, 0, 1)),
], ids=["one field", "a registration as Apollo sends it", "fragments spread twice",
        "an alias, an inline fragment, a fragment in itself", "an unknown fragment"])
def test_a_documents_shape_counts_fragments_where_they_are_spread(query: str,
                                                                  shape: Shape) -> None:
    assert shape_of(parse(query)) == shape


def test_the_limits_hold_a_registration_with_room_to_spare() -> None:
    assert shape_of(parse(APOLLO_REGISTRATION)).too_big(LARGEST) is None
    assert len(APOLLO_REGISTRATION) < LONGEST_DOCUMENT / 4
    assert 3000 < len(aliased_introspection(80, 80)) < 3600  # the 3.3 KB


async def no_registration(game: BattlebotGame, name: str, owner: str,
                          client: str) -> Registered:
    raise AssertionError("no document here may register a bot")


def bots_listed(count: int) -> Any:
    """The store's bots of a game, ``count`` of them (at most as many as are asked for)."""
    async def bots(game: BattlebotGame, most: int) -> list[JSONObject]:
        return [{"bot_id": f"bot{i}", "owner": "o", "date_registered": "2026-11-28"}
                for i in range(min(count, most))]
    return bots


async def answer(query: str, bots: int = 3) -> JSONObject:
    return await GraphQLApi(no_registration, bots_listed(bots)).execute(query, None, None,
                                                                         "127.0.0.2")


def errors_of(found: JSONObject) -> list[str]:
    assert "data" not in found or found["data"] is None, found
    errors = found["errors"]
    assert isinstance(errors, list)
    return [str(error["message"]) for error in errors if isinstance(error, dict)]


TYPENAMES = "{" + " ".join(["__typename"] * 5950) + "}"


@pytest.mark.parametrize(("query", "why"), [
    (TYPENAMES, f"The document is {len(TYPENAMES)} characters long; at most "
                f"{LONGEST_DOCUMENT} are read"),
    (aliased_introspection(80, 80),
     f"Syntax Error: Document contains more than {MOST_TOKENS} tokens. Parsing aborted."),
    (nested_fragments(7), f"The document has {2 ** 7 + 1} fields (fragments counted where "
                          f"spread); at most {LARGEST.fields} are allowed"),
    ("{ gameTypes } fragment F on Query { " + " ".join(["__typename"] * 80) + " }",
     f"The document has 81 fields (fragments counted where spread); at most "
     f"{LARGEST.fields} are allowed"),
    ("{ bots(gameType: NUMBERWANG) { " + " ".join(f"n{i}: name" for i in range(9)) + " } }",
     f"The document has 9 aliases; at most {LARGEST.aliases} are allowed"),
    ("{ bots(gameType: NUMBERWANG) { " + " ".join(["name"] * 17) + " } }",
     f"The document has 17 fields side by side in one selection; at most {LARGEST.widest} "
     "are allowed"),
    ("{ bots(gameType: NUMBERWANG) { ...A } } fragment A on Bot { ...B } "
     "fragment B on Bot { ...C } fragment C on Bot { ...D } fragment D on Bot { ...E } "
     "fragment E on Bot { ... on Bot { ... on Bot { name } } }", None),
    ("{ __schema { queryType { name } } }",
     "Introspection (__schema) is off here; GET /graphql gives the schema"),
    ('{ __type(name: "Bot") { name } }',
     "Introspection (__type) is off here; GET /graphql gives the schema"),
    ("{ gameTypes bots(gameType: NUMBERWANG) { name } }",
     "An operation may ask for one field at its root (send one registration per request)"),
], ids=["5,950 __typename", "80 x 80 aliased introspection", "a fragment bomb",
        "a fragment never spread", "aliases",
        "wide", "nested fragments (answered)", "__schema", "__type", "two root fields"])
async def test_a_costly_document_is_refused_with_its_reason(query: str,
                                                            why: str | None) -> None:
    found = await answer(query)
    if why is None:
        assert found == {"data": {"bots": [{"name": f"bot{i}"} for i in range(3)]}}
    else:
        assert errors_of(found)[0] == why


async def test_validation_reports_a_bounded_number_of_errors() -> None:
    query = "{ bots(gameType: NUMBERWANG) { " + " ".join(
        f"nope{i}" for i in range(LARGEST.widest)) + " } }"
    assert len(errors_of(await answer(query))) <= 11  # ten, and "too many errors"


async def test_an_answer_is_bounded_in_the_fields_it_resolves() -> None:
    query = "{ bots(gameType: NUMBERWANG) { name owner gameType dateRegistered } }"
    small = await answer(query, bots=10)
    assert small == {"data": {"bots": [{"name": f"bot{i}", "owner": "o",
                                        "gameType": "NUMBERWANG",
                                        "dateRegistered": "2026-11-28"}
                                       for i in range(10)]}}
    # More bots than one answer lists: refused before their fields are resolved.
    assert errors_of(await answer(query, bots=MOST_BOTS + 1)) == [
        f"NUMBERWANG has more than {MOST_BOTS} bots, more than one answer here lists: "
        "GET /bots/numberwang lists them all"]
    # As many bots as listed, each field asked for eight times over: too many fields.
    aliased = "{ bots(gameType: NUMBERWANG) { " + " ".join(
        f"n{i}: name" for i in range(LARGEST.aliases)) + " } }"
    assert MOST_BOTS * (LARGEST.aliases + 1) > MOST_RESOLVED
    assert errors_of(await answer(aliased, bots=MOST_BOTS)) == [
        f"The answer would resolve more than {MOST_RESOLVED} fields; ask for less"]
