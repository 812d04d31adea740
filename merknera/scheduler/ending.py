"""The end of a game: its outcome stored with the final state, the result queued for
rating, the event and the finish hooks, and Complete to every seat."""

from __future__ import annotations

from typing import TYPE_CHECKING

from merknera.events import GameFinished
from merknera.games import JSONObject, Outcome, SeatResult, Termination
from merknera.scheduler.play import Play, completion_lines, rates
from merknera.seats import Call
from merknera.store import games

if TYPE_CHECKING:
    from merknera.scheduler.runner import GameRunner


async def finish(runner: GameRunner, play: Play, outcome: Outcome) -> None:
    """End a game that was played (or forfeited) with ``outcome``."""
    arena, game, game_id = runner.arena, play.game, runner.game_id
    if not await runner.log.written():
        return
    seats = [runner.bot(seat) for seat in range(play.seats)]
    results = [outcome.result_for(seat) for seat in range(play.seats)]
    log_lines = completion_lines(game_id, seats, results, outcome.detail)
    rated = rates(play, outcome)
    if not await games.finish(arena.db, game_id, outcome, game.state_to_json(play.state),
                              log_lines, arena.leases.node, rated):
        return
    if rated:
        arena.rater.poke()  # its result is queued for rating
    at_fault = tuple(
        bot.id for seat, bot in enumerate(seats)
        if play.strikes[seat] > 0 or (outcome.termination.is_forfeit
                                      and results[seat] is SeatResult.LOSS))
    finished = GameFinished(
        game_id, game.mnemonic, tuple(f"{b.name} ({b.version})" for b in seats),
        tuple(results), outcome.termination, outcome.detail,
        outcome.scores, tuple(bot.id for bot in seats), at_fault)
    arena.events.publish(finished)
    arena.after_game(finished)
    for seat, session in enumerate(runner.sessions):
        params: JSONObject = {"winner": results[seat] is SeatResult.WIN}
        params.update(game.complete_params(play.state, seat, outcome))
        session.notify(Call(game.calls.complete, params))


async def finish_without_play(runner: GameRunner, termination: Termination,
                              detail: str) -> None:
    """End a game that could not be played at all (nobody is rated)."""
    await games.finish(runner.arena.db, runner.game_id, Outcome.no_result(termination, detail),
                       None, node=runner.arena.leases.node)
