"""Battlebot's later registration: its GraphQL mutation ``registerBot`` (research a.10),
served with GraphQL's reference implementation (graphql-core), so that any document a
GraphQL client may send for it (variables, aliases, fragments, ``__typename``) is read as
GraphQL reads it, and anything else is refused with GraphQL's own errors.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from graphql import (
    ExecutionResult,
    FieldNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
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
ListBots = Callable[[BattlebotGame], Awaitable[list[JSONObject]]]
"""The bots of a game, each ``{bot_id, owner, date_registered}``."""


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
        try:
            document = parse(query)
        except GraphQLError as exc:
            return _errors([exc])
        invalid = validate(self.schema, document, [*specified_rules, OneRootField])
        if invalid:
            return _errors(invalid)
        outcome = execute(self.schema, document, root_value=self, context_value=client,
                          variable_values=variables, operation_name=operation)
        result: ExecutionResult = await outcome if isinstance(outcome, Awaitable) else outcome
        response: JSONObject = {"data": result.data}
        if result.errors:
            response.update(_errors(result.errors))
        return response

    # -- resolvers (graphql-core's default resolver calls these on the root value) ---------

    def gameTypes(self, info: object) -> list[str]:  # noqa: N802 (the schema's name)
        return [game.game_type for game in GAMES]

    async def bots(self, info: object, gameType: str) -> list[JSONObject]:  # noqa: N803
        game = _game(gameType)
        return [_bot_fields(row, game) for row in await self._list_bots(game)]

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
