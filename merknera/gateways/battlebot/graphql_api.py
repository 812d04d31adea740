"""Battlebot's later registration: its GraphQL mutation ``registerBot`` (research a.10),
served with GraphQL's reference implementation (graphql-core), so that any document a
GraphQL client may send for it (variables, aliases, fragments, ``__typename``) is read as
GraphQL reads it, and anything else is refused with GraphQL's own errors.

The endpoint is anonymous and graphql-core runs on the event loop, so every document is
bounded before the costly steps: its length before it is parsed, its tokens while it is
parsed, its shape (:class:`Shape`: fields once fragments are expanded, depth, aliases, the
widest selection) before it is validated, and the fields resolved while it is executed
(:class:`Budget`).  A registration needs a few of each.  Introspection is off (its standard
query alone resolves a thousand fields, the most costly request here by far): the schema,
:data:`SDL`, is served as text at ``GET /graphql``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLResolveInfo,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
    build_schema,
    execute,
    parse,
    specified_rules,
    validate,
)

from merknera.games import JSON, JSONObject
from merknera.gateways.battlebot.accounts import Registered, shown_owner
from merknera.gateways.battlebot.wire import GAMES, BattlebotGame
from merknera.store.db import StoreUnavailableError

SDL = """
"Battlebot's games here."
enum GameType { GAME_TYPES }

"A registered bot (its password is shown only by registerBot)."
type Bot {
  name: ID!
  owner: String!
  gameType: GameType!
  dateRegistered: String!
}

type Registration {
  "The bot's password, for its WebSocket login: shown only now."
  password: String!
  bot: Bot!
}

type Query {
  gameTypes: [GameType!]!
  bots(gameType: GameType!): [Bot!]!
}

type Mutation {
  registerBot(gameType: GameType!, name: ID!, owner: String!): Registration!
}
""".replace("GAME_TYPES", " ".join(game.game_type for game in GAMES))

Register = Callable[[BattlebotGame, str, str, str], Awaitable[Registered]]
"""Registers a bot of the GraphQL era: game, name, owner, and the requesting client (whose
registrations are counted)."""
ListBots = Callable[[BattlebotGame, int], Awaitable[list[JSONObject]]]
"""The bots of a game (at most so many), each ``{bot_id, owner, date_registered}``."""


LONGEST_DOCUMENT = 4096
"""Characters of a document read at most (a registration with variables and ``__typename``
has about 300)."""
MOST_TOKENS = 100
"""Lexical tokens parsed at most (such a registration has 48)."""
MOST_ERRORS = 10
"""Validation errors reported at most: validation stops at the next."""


@dataclass(frozen=True)
class Shape:
    """A document's size as execution sees it: fields counted once for every place a
    fragment is spread."""

    fields: int
    depth: int
    """The most fields nested in one another."""
    aliases: int
    widest: int
    """The most fields selected side by side (validation compares them pairwise)."""

    def too_big(self, limit: Shape) -> str | None:
        """Which bound of ``limit`` this shape passes, in words; None within them all."""
        for name, what in (("fields", "fields (fragments counted where spread)"),
                           ("depth", "levels of nested fields"), ("aliases", "aliases"),
                           ("widest", "fields side by side in one selection")):
            has, most = getattr(self, name), getattr(limit, name)
            if has > most:
                return f"The document has {has} {what}; at most {most} are allowed"
        return None


LARGEST = Shape(fields=60, depth=6, aliases=8, widest=16)
"""The largest document served (a registration asking for every field of its answer, with
``__typename`` on each object: 9 fields, 3 levels, 5 side by side)."""
MOST_RESOLVED = 1500
"""Fields resolved at most in one answer (``bots`` of :data:`MOST_BOTS` with every field
and ``__typename``: 1,201); an answer that needs more is refused, not cut."""
MOST_BOTS = 200
"""Bots ``bots`` lists at most; a game with more is refused (``GET /bots/<game>`` lists
them all)."""


def shape_of(document: DocumentNode) -> Shape:
    """The document's :class:`Shape`, in one pass over it: its operations with their
    fragments expanded, and every fragment as written, spread or not (validation looks at
    each, and refuses the unused).  A fragment is measured once, however often it is
    spread; a spread of an unknown fragment, or of one inside itself, counts nothing:
    validation refuses those."""
    fragments = {node.name.value: node for node in document.definitions
                 if isinstance(node, FragmentDefinitionNode)}
    measured: dict[str, tuple[int, int, int, int]] = {}
    widest = 0

    def measure(selections: SelectionSetNode | None,
                open_fragments: frozenset[str]) -> tuple[int, int, int, int]:
        """(fields, depth, aliases, width) of a selection set."""
        nonlocal widest
        fields = depth = aliases = width = 0
        for node in selections.selections if selections is not None else ():
            if isinstance(node, FieldNode):
                inner = measure(node.selection_set, open_fragments)
                fields, depth = fields + 1 + inner[0], max(depth, 1 + inner[1])
                aliases, width = aliases + (node.alias is not None) + inner[2], width + 1
                continue
            if isinstance(node, InlineFragmentNode):
                inner = measure(node.selection_set, open_fragments)
            elif isinstance(node, FragmentSpreadNode):
                name = node.name.value
                if name in open_fragments or name not in fragments:
                    continue
                if name not in measured:
                    measured[name] = measure(fragments[name].selection_set,
                                             open_fragments | {name})
                inner = measured[name]
            else:
                continue
            fields, depth = fields + inner[0], max(depth, inner[1])
            aliases, width = aliases + inner[2], width + inner[3]
        widest = max(widest, width)
        return fields, depth, aliases, width

    found = [measure(definition.selection_set, frozenset())
             for definition in document.definitions
             if isinstance(definition, OperationDefinitionNode)]
    found += [measure(fragment.selection_set, frozenset({name}))  # never spread: as written
              for name, fragment in fragments.items() if name not in measured]
    return Shape(sum(f[0] for f in found), max((f[1] for f in found), default=0),
                 sum(f[2] for f in found), widest)


class Budget:
    """graphql-core middleware that counts the fields resolved for one answer and stops
    resolving past :data:`MOST_RESOLVED` (the answer is then refused as a whole)."""

    def __init__(self, most: int = MOST_RESOLVED) -> None:
        self.left = most
        self.most = most
        self.spent = False

    def resolve(self, next_: Callable[..., Any], root: Any, info: GraphQLResolveInfo,
                **args: Any) -> Any:
        """Resolve one field while the budget lasts; None (nothing below it) after."""
        self.left -= 1
        if self.left < 0:
            self.spent = True
            return None
        return next_(root, info, **args)


class GraphQLApi:
    """The schema and its resolvers."""

    def __init__(self, register: Register, list_bots: ListBots) -> None:
        self.schema: GraphQLSchema = build_schema(SDL)
        self._register = register
        self._list_bots = list_bots

    async def execute(self, query: str, variables: dict[str, Any] | None,
                      operation: str | None, client: str) -> JSONObject:
        """The response to one GraphQL request of ``client``: ``{"data": ...}`` and, if
        any, ``{"errors": [...]}``, as GraphQL over HTTP has them."""
        if len(query) > LONGEST_DOCUMENT:
            return _errors([GraphQLError(
                f"The document is {len(query)} characters long; at most {LONGEST_DOCUMENT} "
                "are read")])
        try:
            document = parse(query, max_tokens=MOST_TOKENS)
        except GraphQLError as exc:
            return _errors([exc])
        too_big = shape_of(document).too_big(LARGEST)
        if too_big is not None:
            return _errors([GraphQLError(too_big)])
        invalid = validate(self.schema, document,
                           [*specified_rules, OneRootField, NoIntrospection],
                           max_errors=MOST_ERRORS)
        if invalid:
            return _errors(invalid)
        budget = Budget()
        outcome = execute(self.schema, document, root_value=self, context_value=client,
                          variable_values=variables, operation_name=operation,
                          middleware=[budget])
        result: ExecutionResult = await outcome if isinstance(outcome, Awaitable) else outcome
        for error in result.errors or ():
            if isinstance(error.original_error, StoreUnavailableError):
                raise error.original_error  # the listener's 503, as on its other routes
        if budget.spent:
            return _errors([GraphQLError(
                f"The answer would resolve more than {budget.most} fields; ask for less")])
        response: JSONObject = {"data": result.data}
        if result.errors:
            response.update(_errors(result.errors))
        return response

    # -- resolvers (graphql-core's default resolver calls these on the root value) ---------

    def gameTypes(self, info: object) -> list[str]:  # noqa: N802 (the schema's name)
        return [game.game_type for game in GAMES]

    async def bots(self, info: object, gameType: str) -> list[JSONObject]:  # noqa: N803
        game = _game(gameType)
        rows = await self._list_bots(game, MOST_BOTS + 1)
        if len(rows) > MOST_BOTS:
            raise GraphQLError(f"{gameType} has more than {MOST_BOTS} bots, more than one "
                               f"answer here lists: GET /bots/{game.path_name} lists them all")
        return [_bot_fields(row, game) for row in rows]

    async def registerBot(self, info: Any, gameType: str, name: str,  # noqa: N802, N803
                          owner: str) -> JSONObject:
        game = _game(gameType)
        done = await self._register(game, name, owner, str(info.context))
        return {"password": done.credential,
                "bot": {"name": done.bot.name, "owner": shown_owner(done.bot.owner),
                        "gameType": game.game_type, "dateRegistered": done.bot.created_at}}


class OneRootField(ValidationRule):
    """One field at the root of an operation: a request registers one bot at most (and
    reads one list), whatever aliases it uses, so the per-request limits hold."""

    def enter_operation_definition(self, node: OperationDefinitionNode,
                                   *_args: object) -> None:
        selections = node.selection_set.selections
        if len(selections) != 1 or not isinstance(selections[0], FieldNode):
            self.report_error(GraphQLError(
                "An operation may ask for one field at its root (send one registration "
                "per request)", node))


class NoIntrospection(ValidationRule):
    """Introspection is off: the schema is :data:`SDL`, served at ``GET /graphql``."""

    def enter_field(self, node: FieldNode, *_args: object) -> None:
        if node.name.value in ("__schema", "__type"):
            self.report_error(GraphQLError(
                f"Introspection ({node.name.value}) is off here; GET /graphql gives the "
                "schema", node))


def _errors(errors: list[GraphQLError]) -> JSONObject:
    # A formatted error is a JSON object (message, locations, path): a round trip through
    # the codec gives it the JSON type it has.
    found: JSONObject = {"errors": json.loads(json.dumps([e.formatted for e in errors]))}
    return found


def _game(game_type: str) -> BattlebotGame:
    # The schema's enum has admitted only these names.
    return next(game for game in GAMES if game.game_type == game_type)


def _bot_fields(row: JSONObject, game: BattlebotGame) -> JSONObject:
    fields: dict[str, JSON] = {"name": row["bot_id"], "owner": row["owner"],
                               "gameType": game.game_type,
                               "dateRegistered": row["date_registered"]}
    return fields
