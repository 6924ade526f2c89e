"""fiftyk-referee: the authoritative referee for 五十K.

The import root of the distribution. Its subpackages live in the repository's top-level
folders (setuptools maps them): `fiftyk_referee.domain` is `domain/` (the games, pure
Python), `fiftyk_referee.service` is `service/` (the application, the gRPC edge, the CLI).
"""
