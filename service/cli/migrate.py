"""`fiftyk migrate`: create the event store's tables, then exit.

One run per release, before the servers start (a Kubernetes Job, `deploy/k8s/migrate-job.yaml`),
so server pods run with `FIFTYK_CREATE_SCHEMA=false` and a database user without DDL rights,
and replicas never race to create the schema. Creating is idempotent: a second run changes
nothing. It reads the same configuration as `fiftyk serve` and waits as long for the database
(`FIFTYK_DB_STARTUP_WAIT_SECONDS`). The tables of the lobby and of the webhook endpoints are
created too (`service/platform/lobby.py`, `service/platform/webhook_store.py`). The standings
projection's tables are not among them: the server does not run the projection until something
reads it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from fiftyk_referee.service.ops.config import Config, ConfigError, add_arguments

# The server extra's packages are imported when the command runs (see `cli.main`).
NEEDS_SERVER_EXTRA = True


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `migrate`."""
    parser = sub.add_parser(
        "migrate", help="create the database tables, then exit",
        description="Create the event store's tables (idempotent), for a deployment whose"
        " servers run with FIFTYK_CREATE_SCHEMA=false.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def migrate(config: Config) -> str:
    """Create every table the server needs in the configured store; return where."""
    # Imported here (as by `fiftyk serve`): the store needs the server extra, and `cli.main`
    # turns its absence into a one-line install hint.
    from fiftyk_referee.service.core.application import Referee
    from fiftyk_referee.service.core.store import describe, persistence_env, wait_for_database
    from fiftyk_referee.service.platform.lobby import Lobby
    from fiftyk_referee.service.platform.webhook_store import WebhookStore

    database = config.database
    wait_for_database(database, wait_seconds=config.db_startup_wait_seconds,
                      timeout_seconds=config.db_timeout_seconds)
    # Constructing the application creates the event store's tables, the lobby and the
    # webhook store theirs.
    app = Referee(persistence_env(database, pool_size=1, create_schema=True,
                                  timeout_seconds=config.db_timeout_seconds))
    try:
        Lobby(app)
        WebhookStore(app)
    finally:
        app.close()
    return (describe(database) if database.kind == "postgresql"
            else f"SQLite file {database.sqlite_path}")


def run(args: argparse.Namespace) -> int:
    """Load the configuration, create the schema, report it in one line."""
    try:
        # Whatever the servers are told, this command exists to create the tables.
        config = dataclasses.replace(Config.load(args=args), create_schema=True)
    except ConfigError as error:
        print(f"fiftyk migrate: {error}", file=sys.stderr)
        return 2
    from fiftyk_referee.service.core.store import DatabaseUnreachable

    try:
        where = migrate(config)
    except DatabaseUnreachable as error:
        print(f"fiftyk migrate: {error}", file=sys.stderr)
        return 1
    print(f"fiftyk migrate: the tables exist in {where}")
    return 0
