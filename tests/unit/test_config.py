"""Configuration: environment, flag overrides, database URLs and the loopback-only dev secrets."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from fiftyk_referee.service.ops.config import (
    DATA_DIR_ENV,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEV_AUDIT_KEY,
    DEV_TOKEN_SECRET,
    Config,
    ConfigError,
    add_arguments,
    default_workers,
    host_port,
    is_loopback,
    parse_database_url,
)
from fiftyk_referee.service.ops.config_keys import CONFIG_ENV_VARS
from fiftyk_referee.service.ops.limits import Rate

REAL_SECRETS = {
    "FIFTYK_TOKEN_SECRET": "token-secret-0123456789abcdef",
    "FIFTYK_AUDIT_KEY": "audit-key-0123456789abcdef",
    "FIFTYK_PLATFORM_KEY": "platform-key-0123456789abcdef",
    "FIFTYK_SIGNING_KEY": "5e" * 32,
}


def parse_flags(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_defaults_serve_sqlite_in_the_data_directory_on_loopback() -> None:
    config = Config.load({})
    assert config.host == "127.0.0.1"
    assert config.port == 50051
    assert config.metrics_port == 9464
    assert config.web_port == -1  # the web table is off unless asked for
    assert config.log_level == "INFO"
    assert config.create_schema is True
    assert config.lock_timeout_ms == 5000
    assert config.max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES == 1 << 20
    assert config.database.kind == "sqlite"
    assert config.database.sqlite_path == Path("data") / "fiftyk.sqlite"
    assert config.uses_dev_secrets


def test_the_pool_matches_the_worker_threads_unless_set() -> None:
    assert default_workers() == 2 * (os.cpu_count() or 1) + 2
    assert Config.load({}).pool_size == default_workers()
    assert Config.load({"FIFTYK_DB_POOL_SIZE": "7"}).pool_size == 7
    assert Config.load({}, parse_flags("--workers", "3")).pool_size == 3


def test_every_documented_env_var_is_read(tmp_path: Path) -> None:
    for name in ("cert.pem", "key.pem", "clients.pem"):
        (tmp_path / name).write_text("PEM")
    (tmp_path / "witnesses.txt").write_text("# witnesses\nalice " + "ab" * 32 + "\n")
    env = {
        "FIFTYK_DATABASE_URL": "postgresql://u:p@db:6543/referee",
        "FIFTYK_HOST": "0.0.0.0",
        "FIFTYK_PORT": "6000",
        "FIFTYK_METRICS_PORT": "0",
        "FIFTYK_WEB_PORT": "8080",
        "FIFTYK_LOG_LEVEL": "debug",
        "FIFTYK_CREATE_SCHEMA": "false",
        "FIFTYK_DB_POOL_SIZE": "12",
        "FIFTYK_LOCK_TIMEOUT_MS": "2500",
        "FIFTYK_PROCESSES": "3",
        "FIFTYK_DB_TIMEOUT_SECONDS": "7",
        "FIFTYK_DB_STARTUP_WAIT_SECONDS": "9",
        "FIFTYK_TLS_CERT_FILE": str(tmp_path / "cert.pem"),
        "FIFTYK_TLS_KEY_FILE": str(tmp_path / "key.pem"),
        "FIFTYK_TLS_CLIENT_CA_FILE": str(tmp_path / "clients.pem"),
        "FIFTYK_TLS_PLATFORM_NAMES": "platform-a, platform-b",
        "FIFTYK_TRUSTED_NETWORK": "false",
        "FIFTYK_RATE_LIMITS": "player.command=10/20",
        "FIFTYK_WATCH_LIMITS": "seat=3",
        "FIFTYK_TRANSPORT_LIMITS": "streams=64,request=2.5",
        "FIFTYK_SIGNING_KEY_FILE": "",
        "FIFTYK_INTEGRITY_CHECK_SECONDS": "60",
        "FIFTYK_WEBHOOKS": "attempts=5,backoff=0.5",
        "FIFTYK_REFLECTION": "true",
        "FIFTYK_TRUSTED_PROXIES": "10.0.0.7, 10.1.0.0/16",
        "FIFTYK_REFEREE_WITNESS_KEYS": str(tmp_path / "witnesses.txt"),
        **REAL_SECRETS,
    }
    assert set(env) == set(CONFIG_ENV_VARS)
    config = Config.load(env)
    assert (config.host, config.port, config.metrics_port) == ("0.0.0.0", 6000, 0)
    assert config.web_port == 8080
    assert config.log_level == "DEBUG"
    assert config.create_schema is False
    assert config.pool_size == 12
    assert config.lock_timeout_ms == 2500
    assert config.processes == 3
    assert (config.db_timeout_seconds, config.db_startup_wait_seconds) == (7, 9)
    assert config.tls is not None and config.tls.client_ca == tmp_path / "clients.pem"
    assert config.tls_platform_names == ("platform-a", "platform-b")
    assert config.trusted_network is False
    assert config.rates["player"]["command"] == Rate(10, 20)
    assert config.watches.seat == 3
    assert (config.transport.streams, config.transport.request) == (64, 2.5)
    assert (config.webhook_settings.attempts, config.webhook_settings.backoff) == (5, 0.5)
    assert [witness.name for witness in config.witness_keys] == ["alice"]
    assert config.token_secret == REAL_SECRETS["FIFTYK_TOKEN_SECRET"]
    assert config.audit_key == REAL_SECRETS["FIFTYK_AUDIT_KEY"]
    assert config.platform_key == REAL_SECRETS["FIFTYK_PLATFORM_KEY"]
    assert config.signing_key == REAL_SECRETS["FIFTYK_SIGNING_KEY"]
    assert config.integrity_check_seconds == 60
    assert config.reflection_enabled is True  # off on 0.0.0.0 but for the setting
    assert [str(n) for n in config.trusted_proxy_networks] == ["10.0.0.7/32", "10.1.0.0/16"]
    assert config.database.kind == "postgresql"
    assert not config.uses_dev_secrets


def test_empty_env_values_keep_the_defaults() -> None:
    config = Config.load({"FIFTYK_PORT": "", "FIFTYK_TOKEN_SECRET": "  "})
    assert config.port == 50051
    assert config.token_secret == DEV_TOKEN_SECRET


def test_flags_override_the_environment() -> None:
    env = {"FIFTYK_PORT": "6000", "FIFTYK_HOST": "127.0.0.2", "FIFTYK_CREATE_SCHEMA": "true"}
    flags = parse_flags("--port", "0", "--no-create-schema", "--database-url", "x.db",
                        "--log-level", "warning", "--max-message-bytes", "65536")
    config = Config.load(env, flags)
    assert config.port == 0
    assert config.host == "127.0.0.2"
    assert config.create_schema is False
    assert config.database.sqlite_path == Path("x.db")
    assert config.log_level == "WARNING"
    assert config.max_message_bytes == 65536


def test_flags_that_are_not_given_leave_the_environment_alone() -> None:
    assert Config.load({"FIFTYK_PORT": "6000"}, parse_flags()).port == 6000


def test_secrets_cannot_be_passed_as_flags() -> None:
    with pytest.raises(SystemExit):
        parse_flags("--token-secret", "x")


@pytest.mark.parametrize(("name", "value"), [
    ("FIFTYK_PORT", "fifty"), ("FIFTYK_DB_POOL_SIZE", "1.5"), ("FIFTYK_CREATE_SCHEMA", "maybe"),
])
def test_unparsable_env_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Config.load({name: value})


@pytest.mark.parametrize(("env", "needle"), [
    ({"FIFTYK_PORT": "70000"}, "FIFTYK_PORT"),
    ({"FIFTYK_METRICS_PORT": "-1"}, "FIFTYK_METRICS_PORT"),
    ({"FIFTYK_PORT": "7000", "FIFTYK_METRICS_PORT": "7000"}, "both 7000"),
    ({"FIFTYK_WEB_PORT": "-2"}, "FIFTYK_WEB_PORT"),
    ({"FIFTYK_PORT": "7000", "FIFTYK_WEB_PORT": "7000"}, "also the gRPC or metrics port"),
    ({"FIFTYK_LOG_LEVEL": "chatty"}, "FIFTYK_LOG_LEVEL"),
    ({"FIFTYK_DB_POOL_SIZE": "0"}, "FIFTYK_DB_POOL_SIZE"),
    ({"FIFTYK_LOCK_TIMEOUT_MS": "0"}, "a lock wait must end"),
    ({"FIFTYK_DATABASE_URL": "mysql://db/x"}, "unsupported scheme"),
    ({"FIFTYK_DATABASE_URL": "postgresql://db:5432/"}, "names no database"),
])
def test_out_of_range_settings_are_refused_with_the_setting_named(
    env: dict[str, str], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle):
        Config.load(env)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as raised:
        Config.load({"FIFTYK_PORT": "70000", "FIFTYK_LOG_LEVEL": "chatty"})
    assert "FIFTYK_PORT" in str(raised.value)
    assert "FIFTYK_LOG_LEVEL" in str(raised.value)


# -- secrets and the bind address ------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
def test_development_secrets_are_accepted_on_loopback(host: str) -> None:
    assert is_loopback(host)
    assert Config.load({"FIFTYK_HOST": host}).uses_dev_secrets


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "referee.internal"])
def test_development_secrets_are_refused_off_loopback(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ConfigError) as raised:
        Config.load({"FIFTYK_HOST": host})
    message = str(raised.value)
    for name in REAL_SECRETS:
        assert f"{name} is the development default" in message


def test_one_development_secret_left_is_enough_to_refuse() -> None:
    env = {**REAL_SECRETS, "FIFTYK_HOST": "0.0.0.0"}
    del env["FIFTYK_AUDIT_KEY"]
    with pytest.raises(ConfigError, match="FIFTYK_AUDIT_KEY is the development default"):
        Config.load(env)


def test_real_secrets_allow_any_address() -> None:
    config = Config.load({**REAL_SECRETS, "FIFTYK_HOST": "0.0.0.0",
                          "FIFTYK_TRUSTED_NETWORK": "true"})
    assert config.host == "0.0.0.0"


def test_short_or_shared_secrets_are_refused_off_loopback() -> None:
    short = {**REAL_SECRETS, "FIFTYK_HOST": "0.0.0.0", "FIFTYK_PLATFORM_KEY": "short"}
    with pytest.raises(ConfigError, match="FIFTYK_PLATFORM_KEY is shorter than"):
        Config.load(short)
    shared = {**REAL_SECRETS, "FIFTYK_HOST": "0.0.0.0",
              "FIFTYK_AUDIT_KEY": REAL_SECRETS["FIFTYK_PLATFORM_KEY"]}
    with pytest.raises(ConfigError, match="must differ"):
        Config.load(shared)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_a_set_secret_that_is_short_or_shared_is_refused_on_loopback_too(host: str) -> None:
    # A loopback bind behind a proxy or port-forward is reachable: no exemption for it.
    with pytest.raises(ConfigError, match="FIFTYK_PLATFORM_KEY is shorter than"):
        Config.load({"FIFTYK_HOST": host, "FIFTYK_PLATFORM_KEY": "k"})
    with pytest.raises(ConfigError, match="must differ"):
        Config.load({"FIFTYK_HOST": host, "FIFTYK_AUDIT_KEY": "the-same-long-secret-123",
                     "FIFTYK_PLATFORM_KEY": "the-same-long-secret-123"})
    assert Config.load({"FIFTYK_HOST": host}).uses_dev_secrets  # the defaults still start


def test_an_empty_secret_is_refused_even_on_loopback() -> None:
    with pytest.raises(ConfigError, match="FIFTYK_AUDIT_KEY is empty"):
        Config(audit_key="").validate()


def test_secrets_stay_out_of_repr_and_summary() -> None:
    config = Config.load({**REAL_SECRETS,
                          "FIFTYK_DATABASE_URL": "postgresql://u:hunter2@db/referee"})
    shown = repr(config) + repr(config.summary()) + repr(config.database)
    for secret in [*REAL_SECRETS.values(), "hunter2"]:
        assert secret not in shown
    assert config.summary()["database"] == "postgresql://u@db:5432/referee"
    assert Config.load({}).summary()["audit_key"] == "development default"
    assert DEV_AUDIT_KEY not in repr(Config.load({}).summary())


# -- database URLs and the event store environment -------------------------------------------


def test_a_postgresql_url_is_parsed_with_escapes_and_default_port() -> None:
    database = parse_database_url("postgresql://ref%40user:p%3Ass@db.local/fifty%20k",
                                  Path("data"))
    assert database.kind == "postgresql"
    assert (database.user, database.password) == ("ref@user", "p:ss")
    assert (database.host, database.port, database.dbname) == ("db.local", "5432", "fifty k")


def test_a_postgres_url_may_use_a_socket_directory_as_host() -> None:
    database = parse_database_url("postgres:///referee?host=/var/run/postgresql", Path("d"))
    assert (database.host, database.dbname) == ("/var/run/postgresql", "referee")


@pytest.mark.parametrize(("url", "path"), [
    ("", Path("/srv/fk/fiftyk.sqlite")),
    ("games.sqlite", Path("games.sqlite")),
    ("/tmp/x/games.db", Path("/tmp/x/games.db")),
    ("sqlite:///tmp/games.db", Path("/tmp/games.db")),
])
def test_a_path_or_nothing_selects_sqlite(url: str, path: Path) -> None:
    database = parse_database_url(url, Path("/srv/fk"))
    assert database.kind == "sqlite"
    assert database.sqlite_path == path


def test_the_data_directory_comes_from_its_env_var_or_flag() -> None:
    env = {DATA_DIR_ENV: "/var/lib/fiftyk"}
    assert Config.load(env).database.sqlite_path == Path("/var/lib/fiftyk/fiftyk.sqlite")
    flags = parse_flags("--data-dir", "/opt/fk")
    assert Config.load(env, flags).database.sqlite_path == Path("/opt/fk/fiftyk.sqlite")


PG_AUTOCTL_URI = ("postgres://127.0.0.1:16001,127.0.0.1:16002/fiftyk"
                  "?target_session_attrs=read-write&sslmode=prefer")


def test_the_uri_pg_auto_failover_prints_is_taken_as_it_is() -> None:
    database = Config.load({"FIFTYK_DATABASE_URL": PG_AUTOCTL_URI}).database
    assert database.kind == "postgresql"
    assert database.addresses == "127.0.0.1:16001,127.0.0.1:16002"
    assert database.param("target_session_attrs") == "read-write"
    assert database.param("sslmode") == "prefer"


@pytest.mark.parametrize("url", [
    "host=db1,db2 port=5432 dbname=fiftyk user=referee sslmode=verify-full"
    " sslrootcert=/etc/ssl/db-ca.pem",
    "postgresql://referee@db1:5432,db2:5433/fiftyk?sslmode=require&connect_timeout=4",
    "postgresql://referee@fiftyk-rw.db.svc/fiftyk?sslmode=verify-ca&application_name=r1",
    "postgresql:///fiftyk?host=/var/run/postgresql&target_session_attrs=primary",
])
def test_every_libpq_form_of_a_cluster_is_accepted(url: str) -> None:
    database = parse_database_url(url, Path())
    assert database.kind == "postgresql" and database.dbname == "fiftyk"


def test_several_hosts_without_session_attributes_are_asked_for_the_primary() -> None:
    database = parse_database_url("host=db1,db2 dbname=fiftyk", Path())
    assert database.param("target_session_attrs") == "read-write"
    single = parse_database_url("host=db1 dbname=fiftyk", Path())
    assert single.param("target_session_attrs") == ""


@pytest.mark.parametrize(("url", "reason"), [
    ("postgresql://u@h1,h2/db?target_session_attrs=standby", "refuses writes"),
    ("postgresql://u@h/db?target_session_attrs=read-only", "refuses writes"),
    ("postgresql://u@h1,h2/db?target_session_attrs=any", "may connect to a standby"),
    ("postgresql://u@h/db?replication=database", "replication connections"),
    ("postgresql://u@h/db?no_such_option=1", "invalid URI query parameter"),
    ("host=h dbname=db no_such_option=1", "invalid connection option"),
    ("postgresql://u@h1:5432,h2:5433,h3:5434/db?port=1,2", "ports"),
    ("postgresql://u@h:notaport/db", "the port is not a number"),
    ("postgresql://u@h", "no database"),
])
def test_what_would_break_the_event_store_is_refused_with_the_reason(url: str,
                                                                      reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        Config.load({"FIFTYK_DATABASE_URL": url})


@pytest.mark.parametrize(("given", "bare", "address"), [
    ("::", "::", "[::]:50051"),
    ("[::1]", "::1", "[::1]:50051"),
    ("::1", "::1", "[::1]:50051"),
    ("127.0.0.1", "127.0.0.1", "127.0.0.1:50051"),
    ("referee.internal", "referee.internal", "referee.internal:50051"),
])
def test_ipv6_literals_are_accepted_with_or_without_brackets(
    given: str, bare: str, address: str,
) -> None:
    config = Config.load({"FIFTYK_HOST": given, "FIFTYK_TRUSTED_NETWORK": "true",
                          **REAL_SECRETS})
    assert config.host == bare
    assert host_port(config.host, 50051) == address


@pytest.mark.parametrize("host", ["bad host", "999.1.1.1", "127.0.0.1:80", "[::1", "-x.org",
                                  "::g", "a" * 300])
def test_a_bad_bind_address_is_a_configuration_error(host: str) -> None:
    with pytest.raises(ConfigError, match="FIFTYK_HOST"):
        Config.load({"FIFTYK_HOST": host, **REAL_SECRETS})


def test_off_loopback_plaintext_is_refused_unless_the_network_is_declared_trusted() -> None:
    with pytest.raises(ConfigError, match="without TLS"):
        Config.load({**REAL_SECRETS, "FIFTYK_HOST": "0.0.0.0"})
    assert Config.load({**REAL_SECRETS, "FIFTYK_HOST": "0.0.0.0"},
                       parse_flags("--trusted-network")).trusted_network
    assert Config.load({"FIFTYK_HOST": "127.0.0.1"}).tls is None  # the quickstart


def test_off_loopback_tls_needs_no_trust(tmp_path: Path) -> None:
    for name in ("cert.pem", "key.pem"):
        (tmp_path / name).write_text("PEM")
    config = Config.load({**REAL_SECRETS, "FIFTYK_HOST": "::"}, parse_flags(
        "--tls-cert-file", str(tmp_path / "cert.pem"),
        "--tls-key-file", str(tmp_path / "key.pem")))
    assert config.tls is not None and config.tls.cert == tmp_path / "cert.pem"


@pytest.mark.parametrize(("env", "problem"), [
    ({"FIFTYK_TLS_CERT_FILE": "{d}/cert.pem"}, "go together"),
    ({"FIFTYK_TLS_CERT_FILE": "{d}/cert.pem", "FIFTYK_TLS_KEY_FILE": "{d}/absent.pem"},
     "FIFTYK_TLS_KEY_FILE: .*absent.pem is not a readable file"),
    ({"FIFTYK_TLS_CLIENT_CA_FILE": "{d}/cert.pem"}, "needs TLS"),
    ({"FIFTYK_TLS_PLATFORM_NAMES": "platform"}, "needs client certificates"),
])
def test_incomplete_tls_settings_are_refused(tmp_path: Path, env: dict[str, str],
                                             problem: str) -> None:
    (tmp_path / "cert.pem").write_text("PEM")
    with pytest.raises(ConfigError, match=problem):
        Config.load({name: value.format(d=tmp_path) for name, value in env.items()})


def test_malformed_limits_are_configuration_errors() -> None:
    with pytest.raises(ConfigError, match=r"FIFTYK_RATE_LIMITS: 'player\.read=fast'"):
        Config.load({"FIFTYK_RATE_LIMITS": "player.read=fast"})
    with pytest.raises(ConfigError, match="FIFTYK_WATCH_LIMITS"):
        Config.load({"FIFTYK_WATCH_LIMITS": "seat=0"})


@pytest.mark.parametrize(("host", "setting", "served"), [
    ("127.0.0.1", None, True), ("::1", None, True), ("localhost", None, True),
    ("0.0.0.0", None, False), ("10.0.0.5", None, False),
    ("0.0.0.0", "--reflection", True), ("127.0.0.1", "--no-reflection", False),
])
def test_reflection_is_served_on_loopback_by_default_and_elsewhere_when_turned_on(
    host: str, setting: str | None, served: bool,
) -> None:
    flags = parse_flags("--host", host, "--trusted-network", *([setting] if setting else []))
    assert Config.load(REAL_SECRETS, flags).reflection_enabled is served


def test_a_malformed_trusted_proxy_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"FIFTYK_TRUSTED_PROXIES: 'proxy\.local' is not"):
        Config.load({"FIFTYK_TRUSTED_PROXIES": "10.0.0.7,proxy.local"})
    flags = parse_flags("--trusted-proxies", "10.0.0.7,fd00::/8")
    assert len(Config.load({}, flags).trusted_proxy_networks) == 2


def test_a_witness_keys_file_that_does_not_read_stops_the_start_with_the_line_at_fault(
        tmp_path: Path) -> None:
    listed = tmp_path / "witnesses.txt"
    listed.write_text("alice " + "ab" * 32 + "\nbob not-a-key\n")
    with pytest.raises(ConfigError, match=r"FIFTYK_REFEREE_WITNESS_KEYS: .*line 2:"):
        Config.load({"FIFTYK_REFEREE_WITNESS_KEYS": str(listed)})
    with pytest.raises(ConfigError, match="cannot read"):
        Config.load({"FIFTYK_REFEREE_WITNESS_KEYS": str(tmp_path / "missing.txt")})
