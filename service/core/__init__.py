"""The core: the use cases and what runs them — commands, runner, cache, store, feed, turn clock.

A command is data (`commands.py`); the use cases (`application.py`) load an aggregate, let
the domain decide and name what changed; the runner (`runner.py`) saves it in one
transaction with the command's receipt; the cache (`cache.py`) serves reads and private
copies; the store (`store.py`) turns a database into the event store's settings. The feed hub
(`feed.py`) and the turn clock (`turn_clock.py`) follow the global feed. The core knows games
only through the game protocol (`domain/game.py`) and the registry.
"""
