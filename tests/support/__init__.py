"""Helpers shared by tests (no stand-ins: they build real decks and drive real aggregates)."""
