"""The 五十K game: cards, rules, aggregates and scoring. Pure Python, no I/O."""
