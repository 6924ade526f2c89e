"""Command-line argument types shared by the benchmarks."""

from __future__ import annotations

import argparse


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number above 0."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value
