"""The games: the game protocol (game.py), the registry (games.py), viewers, the table, and
one package per game (fiftyk/, shengji/). Pure Python, no I/O."""
