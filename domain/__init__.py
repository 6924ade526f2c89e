"""The games: the game protocol (game.py), the games hosted now (games.py), viewers, the
table, and one package per game (`domain/<game>/`). Pure Python, no I/O."""
