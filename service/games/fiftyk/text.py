"""五十K's hands told as text: its public events (`fiftyk.*`), trick by trick
(`fiftyk replay`)."""

from __future__ import annotations

from fiftyk_referee.service.cli.hand_text import (
    cards_text,
    pass_text,
    place_text,
    play_text,
    trick_text,
)
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb


class TrickAccount:
    """Turns a hand's public events (fiftyk.referee.v1.Event), in order, into a
    trick-by-trick account.

    Each trick is one line tagged with the event versions it spans; what happened during a
    trick (a seat going out, an announcement, a resignation) follows its trick's line, tagged
    with its own version.
    """

    def __init__(self) -> None:
        self.tricks = 0
        self._actions: list[str] = []
        self._notes: list[str] = []
        self._first = 0

    def lines(self, event: pb.Event) -> list[str]:
        """The lines this event completes (most events only extend the current trick)."""
        version = event.aggregate_version
        kind = event.WhichOneof("payload")
        if kind in ("fiftyk_cards_played", "fiftyk_passed"):
            if not self._actions:
                self._first = version
            self._actions.append(self._action(event))
            return []
        if kind == "fiftyk_trick_won":
            self.tricks += 1
            won = event.fiftyk_trick_won
            return self._close(version, trick_text(self.tricks, self._actions, won.seat,
                                                   won.points))
        if kind == "fiftyk_hand_ended" and self._actions:
            return self._close(version, trick_text(self.tricks + 1, self._actions, None, None)
                               + " (unfinished)")
        note = self._note(event)
        if note is None:
            return []
        tagged = f"[v{version}] {note}"
        if self._actions:
            self._notes.append(tagged)
            return []
        return [tagged]

    def _close(self, version: int, text: str) -> list[str]:
        lines = [f"[v{self._first}-v{version}] {text}", *self._notes]
        self._actions, self._notes = [], []
        return lines

    @staticmethod
    def _action(event: pb.Event) -> str:
        if event.HasField("fiftyk_passed"):
            passed = event.fiftyk_passed
            return pass_text(passed.seat,
                             by_referee=passed.reason == pb.FIFTYK_PASS_REASON_TIMEOUT)
        played = event.fiftyk_cards_played
        return play_text(played.seat, played.combination_type, list(played.cards),
                         by_referee=played.by_referee)

    @staticmethod
    def _note(event: pb.Event) -> str | None:
        kind = event.WhichOneof("payload")
        if kind == "fiftyk_cards_drawn":
            drawn = event.fiftyk_cards_drawn
            what = cards_text(drawn.cards) if drawn.cards else f"{drawn.count} cards"
            return f"seat {drawn.seat} draws {what}"
        if kind == "fiftyk_announced":
            announced = event.fiftyk_announced
            return f"seat {announced.seat} announces {announced.cards_left} cards left"
        if kind == "fiftyk_went_out":
            out = event.fiftyk_went_out
            return f"seat {out.seat} goes out ({place_text(out.place)})"
        if kind == "fiftyk_resigned":
            return f"seat {event.fiftyk_resigned.seat} resigns"
        return None


__all__ = ["TrickAccount"]
