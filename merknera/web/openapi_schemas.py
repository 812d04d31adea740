"""The component schemas of the OpenAPI document (:mod:`merknera.web.openapi`): the shapes
of the JSON API's answers, and the enums they share with the paths."""

from __future__ import annotations

from merknera.games import REGISTRY
from merknera.openapi import JSONSchema
from merknera.protocol.bot_protocols import BotProtocol
from merknera.store.games import GameStatus
from merknera.web.play import PLAYABLE
from merknera.web.replay import KEYFRAME_EVERY

GAME: JSONSchema = {"type": "string", "enum": sorted(REGISTRY)}
PLAYABLE_GAME: JSONSchema = {"type": "string", "enum": list(PLAYABLE)}
STAMP: JSONSchema = {"type": "string", "format": "date-time"}


def ref(name: str) -> JSONSchema:
    """A reference to the component schema ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


SCHEMAS: dict[str, JSONSchema] = {
    "Error": {"type": "object", "required": ["error"],
              "properties": {"error": {"type": "string", "description": "What was wrong"}}},
    "Rating": {"type": "object", "description": "OpenSkill Plackett-Luce rating",
               "properties": {"mu": {"type": "number"}, "sigma": {"type": "number"},
                              "conservative": {"type": "number",
                                               "description": "mu - 3 sigma (ranks bots)"},
                              "low": {"type": "number", "description": "mu - 1.96 sigma"},
                              "high": {"type": "number", "description": "mu + 1.96 sigma"},
                              "rated_games": {"type": "integer"}}},
    "Bot": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "version": {"type": "string"},
        "game": GAME, "owner": {"type": "string"},
        "status": {"type": "string", "enum": ["ONLINE", "OFFLINE", "SUPERSEDED", "DISABLED"]},
        "language": {"type": "string"}, "website": {"type": "string"},
        "description": {"type": "string"}, "created_at": {"type": "string"},
        "protocol": {"type": "string", "enum": [p.value for p in BotProtocol],
                     "description": "how the platform calls the bot"},
        "self_name": {"type": ["string", "null"],
                      "description": "the name the bot gives itself (Squelch's /bot/info)"},
        "candidate": {"type": "boolean",
                      "description": "a version on trial: it plays only challenges and duels"},
        "last_seen_at": {"type": ["string", "null"]}, "played": {"type": "integer"},
        "won": {"type": "integer"}, "drawn": {"type": "integer"}, "lost": {"type": "integer"},
        "score": {"type": "number", "description": "percent: a win 1, a draw 1/2"},
        "rating": ref("Rating")}},
    "Seat": {"type": "object", "properties": {
        "seat": {"type": "integer"}, "bot_id": {"type": "integer"}, "name": {"type": "string"},
        "version": {"type": "string"},
        "protocol": {"type": "string", "description": "How the bot plays: jsonrpc, "
                     "squelch-rest, battlebot-salt, battlebot-graphql, or guest (a player "
                     "without an account: a hexagons client, a Kalaha board, a person)"},
        "result": {"type": ["string", "null"], "enum": ["WIN", "DRAW", "LOSS", "NONE", None]},
        "rank": {"type": ["integer", "null"]}, "score": {"type": ["number", "null"]}}},
    "GameSummary": {"type": "object", "properties": {
        "id": {"type": "integer"}, "game": GAME,
        "status": {"type": "string", "enum": list(GameStatus.__members__)},
        "outcome": {"type": ["string", "null"], "enum": ["WIN", "DRAW", "NO_RESULT", None]},
        "reason": {"type": ["string", "null"]}, "detail": {"type": ["string", "null"]},
        "created_at": {"type": "string"}, "started_at": {"type": ["string", "null"]},
        "finished_at": {"type": ["string", "null"]},
        "origin": {"type": "string", "enum": ["REGISTRATION", "LADDER", "TOURNAMENT", "MATCH",
                                              "CHALLENGE", "DUEL"],
                   "description": "What made the game: a registration's round robin, the "
                                  "ladder, a tournament, a gateway's match, a challenge, a "
                                  "duel"},
        "rated": {"type": "boolean", "description": "Whether it changes ratings"},
        "seats": {"type": "array", "items": ref("Seat")}}},
    "Move": {"type": "object", "description": "One call for a move: a move or a fault",
             "properties": {
                 "seq": {"type": "integer"}, "seat": {"type": "integer",
                                                      "description": "-1 for chance"},
                 "move": {},
                 "request": {"description": "The call as sent: only to the owner of the bot "
                                            "called and to the admin (else null)"},
                 "reply": {"description": "The bot's reply as received: only to its owner "
                                          "and to the admin (else null)"},
                 "reply_excerpt": {"type": ["string", "null"],
                                   "description": "The start of a faulty reply, for anybody "
                                                  "once the game is over"},
                 "latency_ms": {"type": ["number", "null"]},
                 "fault": {"type": ["string", "null"]},
                 "fault_detail": {"type": ["string", "null"]},
                 "created_at": {"type": "string"}}},
    "Play": {"type": "object", "description": "A game a person plays in the browser",
             "properties": {
                 "game": PLAYABLE_GAME, "name": {"type": "string"},
                 "game_id": {"type": "integer"}, "url": {"type": "string"},
                 "token": {"type": ["string", "null"]},
                 "seat": {"type": "integer", "description": "Your seat"},
                 "players": {"type": "array", "items": {"type": "object", "properties": {
                     "seat": {"type": "integer"}, "name": {"type": "string"},
                     "bot_id": {"type": "integer"}, "version": {"type": "string"},
                     "you": {"type": "boolean"}}}},
                 "rated": {"type": "boolean"},
                 "turn_limit": {"type": "number", "description": "Seconds you have a move"},
                 "view": {"description": "What a bot in your seat would be shown (NextMove's "
                                         "params); null before the game opens"},
                 "board": {"description": "The position as replays draw it"},
                 "to_move": {"type": ["integer", "null"]},
                 "your_turn": {"type": "boolean"},
                 "legal": {"type": "array", "description": "Your legal moves, on your turn"},
                 "moves": {"type": "array", "items": {"type": "object", "properties": {
                     "seat": {"type": ["integer", "null"]}, "move": {},
                     "text": {"type": "string"}}}},
                 "over": {"type": "boolean"},
                 "outcome": {"type": ["string", "null"],
                             "enum": ["won", "lost", "draw", "none", None]},
                 "reason": {"type": ["string", "null"]},
                 "detail": {"type": ["string", "null"]},
                 "secret": {"type": ["string", "null"],
                            "description": "The secret made for a name played for the "
                                           "first time without one (told once)"}}},
    "Frame": {"type": "object",
              "description": "A row of the move log and the state after it: whole ('state') "
                             "on a keyframe, else as the JSON Patch from the state of the "
                             "frame before ('patch'). A frame has one of the two.",
              "oneOf": [{"required": ["state"]}, {"required": ["patch"]}],
              "properties": {
                  "seq": {"type": "integer"}, "seat": {"type": "integer"}, "move": {},
                  "text": {"type": "string"}, "latency_ms": {"type": ["number", "null"]},
                  "fault": {"type": ["string", "null"]},
                  "fault_detail": {"type": ["string", "null"]}, "at": {"type": "string"},
                  "state": {"description": "The spectator's view after this row, whole: "
                                           f"every {KEYFRAME_EVERY}th frame of the game, "
                                           "every frame with states=full, and the first "
                                           "frame a live stream sends"},
                  "patch": {"type": "array", "items": ref("PatchOperation"),
                            "description": "JSON Patch (RFC 6902) that turns the previous "
                                           "frame's state (or the replay's starting state) "
                                           "into this one; [] after a fault, which changes "
                                           "nothing"}}},
    "NodeCount": {"type": "object", "required": ["count"], "additionalProperties": False,
                  "description": "What anybody may know of the nodes",
                  "properties": {"count": {"type": "integer", "minimum": 0,
                                           "description": "The live nodes"}}},
    "Nodes": {"type": "object", "required": ["count", "this", "lease_seconds", "nodes"],
              "description": "The live nodes, for the admin",
              "properties": {
                  "count": {"type": "integer", "minimum": 0, "description": "The live nodes"},
                  "this": {"type": "string", "description": "The node that answered"},
                  "lease_seconds": {"type": "number"},
                  "nodes": {"type": "array", "items": {"type": "object", "required": [
                      "id", "address", "pid", "started_at", "seen_at", "coordinator",
                      "playing", "games"], "properties": {
                      "id": {"type": "string"},
                      "address": {"type": "string",
                                  "description": "Its own URL (host name and port)"},
                      "pid": {"type": "integer"}, "started_at": STAMP, "seen_at": STAMP,
                      "coordinator": {"type": "boolean", "description":
                                      "Runs the ladder, the tournaments and the pinger"},
                      "playing": {"type": "integer", "description": "Its games, all counted"},
                      "games": {"type": "array", "items": {"type": "integer"},
                                "description": "Ids of its games (the first 100)"}}}}}},
    "PatchOperation": {"type": "object", "required": ["op", "path"],
                       "description": "One operation of a JSON Patch; any RFC 6902 library "
                                      "applies them",
                       "properties": {
                           "op": {"type": "string", "enum": ["add", "remove", "replace"]},
                           "path": {"type": "string",
                                    "description": "A JSON Pointer (RFC 6901); a last "
                                                   "segment '-' appends to an array"},
                           "value": {"description": "For add and replace"}}},
}
"""The document's ``components.schemas``."""
