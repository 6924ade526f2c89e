"""The one configuration module: environment variables (`FIFTYK_*`) overridden by CLI flags.

`Config.load(env, args)` reads both, then `validate()` checks the whole. Secrets come only
from the environment (a flag would show them in the process list). Development defaults for
the token secret and the role keys keep a laptop setup to zero steps, and are refused as soon
as the server binds anything but a loopback address; a secret that is set is checked for
length and distinctness on every address (a loopback bind behind a proxy is not private).

TLS: with `FIFTYK_TLS_CERT_FILE` and `FIFTYK_TLS_KEY_FILE` every port (gRPC and metrics)
speaks TLS (`service.ops.tls`). The quickstart stays plaintext on loopback; any other bind
address refuses to start without TLS unless `FIFTYK_TRUSTED_NETWORK=true` (or
`--trusted-network`) says a proxy, mesh or private network protects the traffic.

The database URL selects the store: a libpq URL (`postgresql://user:password@host:port/dbname`
or `postgres://`, with several `host:port` pairs and any libpq parameter) or a libpq keyword
string (`host=h1,h2 dbname=fiftyk target_session_attrs=read-write`) selects PostgreSQL; a file
path, `sqlite:///path`, or nothing selects SQLite, by default `fiftyk.sqlite` in the data
directory (`FIFTYK_DATA_DIR`, default `./data`). Refused, with the reason: what would hand
the event store a server that cannot take its writes (`target_session_attrs=read-only`, a
replication connection, several hosts with `target_session_attrs=any`).

Its length (about 800 lines) is every setting's parsing and checks in one module, so the
environment has exactly one reader.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.limits import (
    LimitSpecError,
    Rate,
    TransportLimits,
    WatchLimits,
    parse_peer_rate,
    parse_rate_limits,
    parse_transport_limits,
    parse_watch_limits,
)
from fiftyk_referee.service.ops.tls import TlsFiles
from fiftyk_referee.service.ops.webhook_settings import (
    WebhookSettings,
    WebhookSettingsError,
    parse_webhook_settings,
)
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, SignatureError, Signer
from fiftyk_referee.service.trust.witness import WitnessKeys

DATA_DIR_ENV = "FIFTYK_DATA_DIR"
DEFAULT_DATA_DIR = Path("data")
SQLITE_FILE_NAME = "fiftyk.sqlite"
POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_SCHEME = "sqlite"
DEFAULT_POSTGRES_PORT = 5432

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 50051
DEFAULT_METRICS_PORT = 9464
WEB_OFF = -1  # the web table's port is off unless configured
DEFAULT_LOG_LEVEL = "INFO"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_LOCK_TIMEOUT_MS = 5000
MAX_LOCK_TIMEOUT_MS = 600_000
MIB = 1 << 20
DEFAULT_MAX_MESSAGE_BYTES = 1 * MIB
MIN_MAX_MESSAGE_BYTES = 4096
MAX_MAX_MESSAGE_BYTES = 256 * MIB
DEFAULT_INTEGRITY_CHECK_SECONDS = 300  # a full read of the ledger's hands every 5 minutes
DEFAULT_TURN_SWEEP_SECONDS = 1.0
MAX_TURN_SWEEP_SECONDS = 60.0
DEFAULT_TOKEN_TTL_SECONDS = 7 * 24 * 3600
MIN_TOKEN_TTL_SECONDS = 60
MAX_TOKEN_TTL_SECONDS = 365 * 24 * 3600
DEFAULT_SHUTDOWN_GRACE_SECONDS = 5.0
# Below the shortest client deadline docs/integrating.md recommends (5 s), so a call caught
# by an outage or a failover ends UNAVAILABLE with RetryInfo, not DEADLINE_EXCEEDED.
DEFAULT_DB_TIMEOUT_SECONDS = 3
MAX_DB_TIMEOUT_SECONDS = 300
DEFAULT_DB_STARTUP_WAIT_SECONDS = 30
MAX_DB_STARTUP_WAIT_SECONDS = 3600
DEFAULT_DB_PROBE_SECONDS = 1.0
MAX_DB_PROBE_SECONDS = 60.0
MAX_POOL_SIZE = 1000
MAX_PROCESSES = 64
MAX_PORT = 65535
MIN_SECRET_LENGTH = 16

# Development-only secrets: accepted on loopback, refused on any other address.
DEV_TOKEN_SECRET = "fiftyk-dev-token-secret-loopback-only"
DEV_AUDIT_KEY = "fiftyk-dev-audit-key-loopback-only"
DEV_PLATFORM_KEY = "fiftyk-dev-platform-key-loopback-only"
_DEV_SECRETS = {
    "token_secret": (keys.TOKEN_SECRET, DEV_TOKEN_SECRET),
    "audit_key": (keys.AUDIT_KEY, DEV_AUDIT_KEY),
    "platform_key": (keys.PLATFORM_KEY, DEV_PLATFORM_KEY),
    "signing_key": (keys.SIGNING_KEY, DEV_SIGNING_KEY),
}

# Words the example files put in place of a secret (deploy/.env.example): a value holding
# one was copied, not chosen, and is refused on any address.
PLACEHOLDER_MARKERS = ("change-me", "changeme", "replace-me", "replaceme")


def is_placeholder(value: str) -> bool:
    """Whether a secret still holds an example file's placeholder."""
    lowered = value.lower()
    return any(marker in lowered for marker in PLACEHOLDER_MARKERS)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the setting and the fix."""


def default_workers() -> int:
    """Threads that run application calls: 2 x CPUs + 2 (blocking database I/O overlaps)."""
    return 2 * (os.cpu_count() or 1) + 2


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
MAX_HOST_NAME_LENGTH = 253


def bare_host(host: str) -> str:
    """The address without the brackets of an IPv6 literal (`[::1]` -> `::1`)."""
    name = host.strip()
    if name.startswith("[") and name.endswith("]"):
        return name[1:-1]
    return name


def host_port(host: str, port: int) -> str:
    """`host:port` as gRPC and clients write it: IPv6 literals in brackets (`[::1]:50051`)."""
    name = bare_host(host)
    return f"[{name}]:{port}" if ":" in name else f"{name}:{port}"


def host_problem(host: str) -> str | None:
    """Why `host` cannot be a bind address (None if it can): an IP literal or a host name."""
    name = bare_host(host)
    if not name:
        return "the bind address is empty"
    try:
        ipaddress.ip_address(name)
        return None
    except ValueError:
        pass
    labels = name.rstrip(".").split(".")
    if (len(name) > MAX_HOST_NAME_LENGTH or not all(_HOST_LABEL.fullmatch(x) for x in labels)
            or labels[-1].isdigit()):  # 999.1.1.1 is a mistyped address, not a name
        return (f"{host!r} is neither an IP address (127.0.0.1, ::, [::1]) nor a host name"
                " (write the port in FIFTYK_PORT)")
    return None


def is_loopback(host: str) -> bool:
    """Whether binding `host` only accepts connections from this machine."""
    name = bare_host(host)
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # any other host name may resolve to a public address


@dataclass(frozen=True)
class Database:
    """Where events are stored: a SQLite file, or a PostgreSQL database given as libpq
    connection parameters (every host of a high-availability cluster, TLS settings, ...)."""

    kind: Literal["sqlite", "postgresql"]
    sqlite_path: Path | None = None
    # The libpq keywords and values, as parsed from the URL or keyword string (may hold the
    # password, hence not in the repr).
    params: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def param(self, keyword: str, default: str = "") -> str:
        """One libpq parameter as given, or `default`."""
        return dict(self.params).get(keyword, default)

    @property
    def host(self) -> str:
        """The host list as libpq reads it (`h1,h2`; a socket directory is a host too)."""
        return self.param("host", "localhost")

    @property
    def port(self) -> str:
        """The port list, one per host (empty entries mean the default port)."""
        return self.param("port", str(DEFAULT_POSTGRES_PORT))

    @property
    def user(self) -> str:
        """The database user ("" lets libpq take PGUSER or the OS user's name)."""
        return self.param("user")

    @property
    def password(self) -> str:
        """The password given in the URL ("" lets libpq take PGPASSWORD or a password file)."""
        return self.param("password")

    @property
    def dbname(self) -> str:
        """The database name."""
        return self.param("dbname")

    @property
    def addresses(self) -> str:
        """`host:port` for every host, comma-separated, for messages."""
        hosts = self.host.split(",")
        ports = self.port.split(",")
        if len(ports) == 1:
            ports = ports * len(hosts)
        return ",".join(f"{host or 'localhost'}:{port or DEFAULT_POSTGRES_PORT}"
                        for host, port in zip(hosts, ports, strict=False))


# libpq's target_session_attrs values, by whether they can hand the event store a server
# that refuses writes.
WRITABLE_SESSION_ATTRS = frozenset({"read-write", "primary"})
READ_ONLY_SESSION_ATTRS = frozenset({"read-only", "standby", "prefer-standby"})
# Turned on by any value but these (libpq accepts these spellings of "off").
REPLICATION_OFF = frozenset({"", "0", "off", "false", "no"})
# `key=value ...`: a libpq keyword string (a file path never starts like this and parses).
_KEYWORD_STRING = re.compile(r"\s*[a-z_]+\s*=")


def _looks_like_keywords(text: str) -> bool:
    return bool(_KEYWORD_STRING.match(text))


def _libpq_params(text: str) -> dict[str, str]:
    """The parameters of a PostgreSQL URL or keyword string, parsed by libpq itself."""
    # Imported here: the client-only install has no psycopg, and never parses a database URL.
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        parsed = conninfo_to_dict(text)
    except psycopg.ProgrammingError as error:
        raise ConfigError(f"{keys.DATABASE_URL}: {' '.join(str(error).split())}") from None
    return {key: str(value) for key, value in parsed.items() if value is not None}


def _postgres_problems(params: Mapping[str, str]) -> list[str]:
    """What in these parameters would break the event store, each with the reason."""
    problems: list[str] = []
    if not params.get("dbname"):
        problems.append("the PostgreSQL URL names no database")
    ports = params.get("port", "").split(",")
    if not all(port.isdigit() or port == "" for port in ports):
        problems.append("the port is not a number")
    hosts = params.get("host", "").split(",")
    if len(ports) > 1 and len(ports) != len(hosts):
        problems.append(f"{len(hosts)} host(s) but {len(ports)} ports: give one port, or one"
                        " per host")
    attrs = params.get("target_session_attrs", "")
    if attrs in READ_ONLY_SESSION_ATTRS:
        problems.append(f"target_session_attrs={attrs} would connect to a server that refuses"
                        " writes, and the event store writes; use read-write")
    elif attrs == "any" and len(hosts) > 1:
        problems.append("target_session_attrs=any with several hosts may connect to a standby,"
                        " which refuses writes; use read-write (the default with several hosts)")
    if params.get("replication", "").lower() not in REPLICATION_OFF:
        problems.append("replication connections cannot run the event store's queries;"
                        " remove the replication parameter")
    return problems


def parse_database_url(url: str, data_dir: Path) -> Database:
    """Resolve a database URL, libpq keyword string, path or nothing to a `Database`.

    PostgreSQL takes every libpq form: `postgresql://` URLs with several `host:port` pairs
    and any libpq parameter (`target_session_attrs`, `sslmode`, `sslrootcert`, ...), or a
    keyword string (`host=h1,h2 dbname=fiftyk ...`). With several hosts and no
    `target_session_attrs`, `read-write` is added: the store must reach the primary.
    """
    text = url.strip()
    if not text:
        return Database("sqlite", sqlite_path=data_dir / SQLITE_FILE_NAME)
    if "://" in text:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme == SQLITE_SCHEME:
            path = unquote(parts.netloc + parts.path)
            if not path or path == "/":
                raise ConfigError(f"{keys.DATABASE_URL}: sqlite:///PATH needs a file path")
            return Database("sqlite", sqlite_path=Path(path).expanduser())
        if scheme not in POSTGRES_SCHEMES:
            raise ConfigError(
                f"{keys.DATABASE_URL}: unsupported scheme {parts.scheme!r};"
                " use postgresql://user:password@host:port/dbname (or a libpq keyword"
                " string), or a SQLite file path"
            )
    elif not _looks_like_keywords(text):
        return Database("sqlite", sqlite_path=Path(text).expanduser())
    params = _libpq_params(text)
    problems = _postgres_problems(params)
    if problems:
        raise ConfigError(f"{keys.DATABASE_URL}: " + "; ".join(problems))
    if "," in params.get("host", "") and "target_session_attrs" not in params:
        params["target_session_attrs"] = "read-write"
    return Database("postgresql", params=tuple(sorted(params.items())))


def _read_key_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{keys.SIGNING_KEY_FILE}: cannot read {path}:"
                          f" {error.strerror}") from None


def read_witness_keys(path: Path) -> WitnessKeys:
    """The witnesses listed in the file `FIFTYK_REFEREE_WITNESS_KEYS` names."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{keys.WITNESS_KEYS}: cannot read {path}:"
                          f" {getattr(error, 'strerror', None) or error}") from None
    try:
        return WitnessKeys.parse(text)
    except ValueError as error:
        raise ConfigError(f"{keys.WITNESS_KEYS}: {path}: {error}") from None


def _env_text(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value if value is not None and value.strip() != "" else None


def _parse_int(name: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ConfigError(f"{name}={text!r} is not an integer") from None


def _comma_list(text: str) -> tuple[str, ...]:
    return tuple(entry.strip() for entry in text.split(",") if entry.strip())


def _parse_bool(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name}={text!r} is not a boolean (use true or false)")


@dataclass(frozen=True)
class Config:
    """Every setting of the server, with its default."""

    database_url: str = field(default="", repr=False)  # may hold a password
    data_dir: Path = DEFAULT_DATA_DIR
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    metrics_port: int = DEFAULT_METRICS_PORT
    web_port: int = WEB_OFF  # the web table (service/web); 0 picks a port
    log_level: str = DEFAULT_LOG_LEVEL
    token_secret: str = field(default=DEV_TOKEN_SECRET, repr=False)
    audit_key: str = field(default=DEV_AUDIT_KEY, repr=False)
    platform_key: str = field(default=DEV_PLATFORM_KEY, repr=False)
    # The Ed25519 key that signs evidence, rulings and checkpoints (service/trust/signing.py):
    # FIFTYK_SIGNING_KEY (hex or PEM), or the PEM file FIFTYK_SIGNING_KEY_FILE names.
    signing_key: str = field(default=DEV_SIGNING_KEY, repr=False)
    # The witnesses whose cosignatures the referee accepts and keeps (service/trust/witness.py):
    # the file FIFTYK_REFEREE_WITNESS_KEYS names, of `NAME PUBLIC_KEY` lines; none by default.
    witness_keys: WitnessKeys = field(default_factory=WitnessKeys)
    create_schema: bool = True
    workers: int = field(default_factory=default_workers)
    db_pool_size: int | None = None  # None: one connection per worker thread
    lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    turn_sweep_seconds: float = DEFAULT_TURN_SWEEP_SECONDS
    # Seconds between integrity audits of the stored history (service/trust/integrity.py); 0: off.
    integrity_check_seconds: int = DEFAULT_INTEGRITY_CHECK_SECONDS
    token_ttl_seconds: int = DEFAULT_TOKEN_TTL_SECONDS
    shutdown_grace_seconds: float = DEFAULT_SHUTDOWN_GRACE_SECONDS
    # The longest a call waits for PostgreSQL before it fails UNAVAILABLE (STORE_UNAVAILABLE).
    db_timeout_seconds: int = DEFAULT_DB_TIMEOUT_SECONDS
    # At start, how long to wait for PostgreSQL to answer before giving up with one line.
    db_startup_wait_seconds: int = DEFAULT_DB_STARTUP_WAIT_SECONDS
    db_probe_seconds: float = DEFAULT_DB_PROBE_SECONDS  # health probe of the store
    tls_cert_file: Path | None = None  # PEM certificate chain: TLS on every port
    tls_key_file: Path | None = None
    tls_client_ca_file: Path | None = None  # set: callers must present a certificate
    tls_platform_names: tuple[str, ...] = ()  # client certificate names holding the platform
    trusted_network: bool = False  # plaintext off loopback, on the operator's word
    rate_limits: str = ""  # overrides of service.ops.limits.DEFAULT_RATES, or "off"
    watch_limits: str = ""  # overrides of service.ops.limits.WatchLimits
    transport_limits: str = ""  # overrides of service.ops.limits.TransportLimits
    webhooks: str = ""  # overrides of service.ops.webhook_settings.WebhookSettings
    # Server reflection (grpcurl without proto files); None: on for a loopback bind only.
    reflection: bool | None = None
    # Peers whose `x-forwarded-for` names the client a call is counted under (addresses or
    # networks): the proxies in front of the referee.
    trusted_proxies: tuple[str, ...] = ()
    processes: int = 1  # server processes sharing the port (one per core: the GIL)
    reuse_port: bool = False  # set for the processes `fiftyk serve --processes N` starts

    # -- loading ---------------------------------------------------------------------------

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """Settings from `FIFTYK_*` environment variables; unset or empty keeps the default."""
        source = os.environ if env is None else env
        values: dict[str, Any] = {}
        texts = {
            "database_url": keys.DATABASE_URL, "host": keys.HOST, "log_level": keys.LOG_LEVEL,
            "token_secret": keys.TOKEN_SECRET, "audit_key": keys.AUDIT_KEY,
            "platform_key": keys.PLATFORM_KEY, "rate_limits": keys.RATE_LIMITS,
            "watch_limits": keys.WATCH_LIMITS, "transport_limits": keys.TRANSPORT_LIMITS,
            "signing_key": keys.SIGNING_KEY, "webhooks": keys.WEBHOOKS,
        }
        for attr, name in texts.items():
            if (text := _env_text(source, name)) is not None:
                values[attr] = text.strip()
        ints = {"port": keys.PORT, "metrics_port": keys.METRICS_PORT, "web_port": keys.WEB_PORT,
                "db_pool_size": keys.DB_POOL_SIZE, "lock_timeout_ms": keys.LOCK_TIMEOUT_MS,
                "processes": keys.PROCESSES, "db_timeout_seconds": keys.DB_TIMEOUT_SECONDS,
                "db_startup_wait_seconds": keys.DB_STARTUP_WAIT_SECONDS,
                "integrity_check_seconds": keys.INTEGRITY_CHECK_SECONDS}
        for attr, name in ints.items():
            if (text := _env_text(source, name)) is not None:
                values[attr] = _parse_int(name, text)
        if (text := _env_text(source, keys.CREATE_SCHEMA)) is not None:
            values["create_schema"] = _parse_bool(keys.CREATE_SCHEMA, text)
        if (text := _env_text(source, keys.TRUSTED_NETWORK)) is not None:
            values["trusted_network"] = _parse_bool(keys.TRUSTED_NETWORK, text)
        if (text := _env_text(source, keys.REFLECTION)) is not None:
            values["reflection"] = _parse_bool(keys.REFLECTION, text)
        if (text := _env_text(source, keys.TRUSTED_PROXIES)) is not None:
            values["trusted_proxies"] = _comma_list(text)
        paths = {"tls_cert_file": keys.TLS_CERT_FILE, "tls_key_file": keys.TLS_KEY_FILE,
                 "tls_client_ca_file": keys.TLS_CLIENT_CA_FILE}
        for attr, name in paths.items():
            if (text := _env_text(source, name)) is not None:
                values[attr] = Path(text.strip()).expanduser()
        if (text := _env_text(source, keys.TLS_PLATFORM_NAMES)) is not None:
            values["tls_platform_names"] = tuple(
                name.strip() for name in text.split(",") if name.strip())
        if (text := _env_text(source, keys.SIGNING_KEY_FILE)) is not None:
            values["signing_key"] = _read_key_file(Path(text.strip()).expanduser())
        if (text := _env_text(source, keys.WITNESS_KEYS)) is not None:
            values["witness_keys"] = read_witness_keys(Path(text.strip()).expanduser())
        if (text := _env_text(source, DATA_DIR_ENV)) is not None:
            values["data_dir"] = Path(text.strip()).expanduser()
        return cls(**values)

    def with_args(self, args: argparse.Namespace) -> Config:
        """A copy with every flag of `add_arguments` that was given on the command line."""
        names = {f.name for f in dataclasses.fields(self)} - set(_DEV_SECRETS)
        given = {name: getattr(args, name) for name in names
                 if getattr(args, name, None) is not None}
        for name in ("data_dir", "tls_cert_file", "tls_key_file", "tls_client_ca_file"):
            if isinstance(given.get(name), str):
                given[name] = Path(given[name]).expanduser()
        if isinstance(given.get("trusted_proxies"), str):
            given["trusted_proxies"] = _comma_list(given["trusted_proxies"])
        return dataclasses.replace(self, **given)

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None,
             args: argparse.Namespace | None = None) -> Config:
        """Environment, then flags, then `validate()`: the one way the server gets its config."""
        config = cls.from_env(env)
        if args is not None:
            config = config.with_args(args)
        return config.normalized().validate()

    def normalized(self) -> Config:
        """A copy with the log level in upper case and the host without IPv6 brackets."""
        return dataclasses.replace(self, log_level=self.log_level.strip().upper(),
                                   host=bare_host(self.host))

    # -- derived values --------------------------------------------------------------------

    @property
    def database(self) -> Database:
        """The parsed database URL."""
        return parse_database_url(self.database_url, self.data_dir)

    @property
    def pool_size(self) -> int:
        """Database connections: as configured, else one per worker thread."""
        return self.db_pool_size if self.db_pool_size is not None else self.workers

    @property
    def rates(self) -> dict[str, dict[str, Rate | None]]:
        """Call rates per role and RPC class (None: unlimited)."""
        return parse_rate_limits(self.rate_limits)

    @property
    def peer_rate(self) -> Rate | None:
        """The rate of all calls from one peer address together (None: unlimited)."""
        return parse_peer_rate(self.rate_limits)

    @property
    def watches(self) -> WatchLimits:
        """Limits on open WatchTable streams."""
        return parse_watch_limits(self.watch_limits)

    @property
    def transport(self) -> TransportLimits:
        """Limits below authentication: streams, connections, pings, request arrival."""
        return parse_transport_limits(self.transport_limits)

    @property
    def reflection_enabled(self) -> bool:
        """Whether server reflection is served: as set, else only on a loopback bind."""
        return is_loopback(self.host) if self.reflection is None else self.reflection

    @property
    def trusted_proxy_networks(self) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network,
                                              ...]:
        """The trusted proxies as networks (ValueError names a malformed entry)."""
        networks = []
        for entry in self.trusted_proxies:
            try:
                networks.append(ipaddress.ip_network(entry.strip().strip("[]"), strict=False))
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or network (10.0.0.7,"
                                 " 10.0.0.0/24, fd00::/8)") from None
        return tuple(networks)

    @property
    def webhook_settings(self) -> WebhookSettings:
        """How webhook deliveries are retried, timed out and leased, and where they may go
        (loopback endpoints, unless the operator says otherwise, only on a loopback bind)."""
        settings = parse_webhook_settings(self.webhooks)
        if settings.loopback is None:
            settings = dataclasses.replace(settings, loopback=is_loopback(self.host))
        return settings

    @property
    def tls(self) -> TlsFiles | None:
        """The TLS files, when TLS is configured."""
        if self.tls_cert_file is None or self.tls_key_file is None:
            return None
        return TlsFiles(self.tls_cert_file, self.tls_key_file, self.tls_client_ca_file)

    @property
    def uses_dev_secrets(self) -> bool:
        """Whether any secret is still a development default."""
        return any(getattr(self, attr) == dev for attr, (_, dev) in _DEV_SECRETS.items())

    def summary(self) -> dict[str, object]:
        """The settings for a startup log line: secrets and the database password hidden."""
        database = self.database
        where = (str(database.sqlite_path) if database.kind == "sqlite"
                 else f"postgresql://{database.user}@{database.addresses}/{database.dbname}")
        secrets = {attr: "development default" if getattr(self, attr) == dev else "set"
                   for attr, (_, dev) in _DEV_SECRETS.items()}
        return {
            "database": where, "host": self.host, "port": self.port,
            "metrics_port": self.metrics_port, "web_port": self.web_port,
            "log_level": self.log_level,
            "create_schema": self.create_schema, "workers": self.workers,
            "db_pool_size": self.pool_size, "lock_timeout_ms": self.lock_timeout_ms,
            "db_timeout_seconds": self.db_timeout_seconds,
            "db_startup_wait_seconds": self.db_startup_wait_seconds,
            "tls": "off" if self.tls is None else str(self.tls_cert_file),
            "tls_client_certificates": self.tls_client_ca_file is not None,
            "trusted_network": self.trusted_network,
            "max_message_bytes": self.max_message_bytes,
            "transport_limits": self.transport_limits or "defaults",
            "reflection": self.reflection_enabled,
            "trusted_proxies": ",".join(self.trusted_proxies) or "none", **secrets,
        }

    # -- validation ------------------------------------------------------------------------

    def validate(self) -> Config:
        """Return self if usable, else raise ConfigError listing every problem."""
        problems = self._range_problems() + self._secret_problems() + self._tls_problems()
        try:
            self.database  # noqa: B018 - parsing is the check
        except ConfigError as error:
            problems.append(str(error))
        for name, parse in ((keys.RATE_LIMITS, lambda: self.rates),
                            (keys.WATCH_LIMITS, lambda: self.watches),
                            (keys.TRANSPORT_LIMITS, lambda: self.transport)):
            try:
                parse()
            except LimitSpecError as error:
                problems.append(f"{name}: {error}")
        try:
            self.trusted_proxy_networks  # noqa: B018 - parsing is the check
        except ValueError as error:
            problems.append(f"{keys.TRUSTED_PROXIES}: {error}")
        try:
            self.webhook_settings  # noqa: B018 - parsing is the check
        except WebhookSettingsError as error:
            problems.append(f"{keys.WEBHOOKS}: {error}")
        if problems:
            raise ConfigError("invalid configuration:\n  - " + "\n  - ".join(problems))
        return self

    def _range_problems(self) -> list[str]:
        problems: list[str] = []

        def need(ok: bool, text: str) -> None:
            if not ok:
                problems.append(text)

        need(0 <= self.port <= MAX_PORT, f"{keys.PORT}: port {self.port} is not 0..{MAX_PORT}")
        need(0 <= self.metrics_port <= MAX_PORT,
             f"{keys.METRICS_PORT}: port {self.metrics_port} is not 0..{MAX_PORT}")
        need(self.port == 0 or self.port != self.metrics_port,
             f"{keys.PORT} and {keys.METRICS_PORT} are both {self.port}")
        need(WEB_OFF <= self.web_port <= MAX_PORT,
             f"{keys.WEB_PORT}: port {self.web_port} is not {WEB_OFF} (off) or 0..{MAX_PORT}")
        need(self.web_port <= 0 or self.web_port not in (self.port, self.metrics_port),
             f"{keys.WEB_PORT} {self.web_port} is also the gRPC or metrics port")
        host_error = host_problem(self.host)
        need(host_error is None, f"{keys.HOST}: {host_error}")
        need(self.log_level.upper() in LOG_LEVELS,
             f"{keys.LOG_LEVEL}: {self.log_level!r} is not one of {', '.join(LOG_LEVELS)}")
        need(1 <= self.workers <= MAX_POOL_SIZE, f"workers must be 1..{MAX_POOL_SIZE}")
        need(1 <= self.processes <= MAX_PROCESSES,
             f"{keys.PROCESSES}: {self.processes} is not 1..{MAX_PROCESSES}")
        need(1 <= self.pool_size <= MAX_POOL_SIZE,
             f"{keys.DB_POOL_SIZE}: {self.pool_size} is not 1..{MAX_POOL_SIZE}")
        need(1 <= self.lock_timeout_ms <= MAX_LOCK_TIMEOUT_MS,
             f"{keys.LOCK_TIMEOUT_MS}: {self.lock_timeout_ms} is not 1..{MAX_LOCK_TIMEOUT_MS}"
             " (a lock wait must end)")
        need(MIN_MAX_MESSAGE_BYTES <= self.max_message_bytes <= MAX_MAX_MESSAGE_BYTES,
             f"max message bytes {self.max_message_bytes} is not"
             f" {MIN_MAX_MESSAGE_BYTES}..{MAX_MAX_MESSAGE_BYTES}")
        need(self.integrity_check_seconds >= 0,
             f"{keys.INTEGRITY_CHECK_SECONDS} is seconds between audits, or 0 for none")
        need(0 < self.turn_sweep_seconds <= MAX_TURN_SWEEP_SECONDS,
             f"turn sweep interval {self.turn_sweep_seconds}s is not in"
             f" (0, {MAX_TURN_SWEEP_SECONDS}]")
        need(MIN_TOKEN_TTL_SECONDS <= self.token_ttl_seconds <= MAX_TOKEN_TTL_SECONDS,
             f"token lifetime {self.token_ttl_seconds}s is not"
             f" {MIN_TOKEN_TTL_SECONDS}..{MAX_TOKEN_TTL_SECONDS}")
        need(self.shutdown_grace_seconds >= 0, "the shutdown grace period is negative")
        need(1 <= self.db_timeout_seconds <= MAX_DB_TIMEOUT_SECONDS,
             f"{keys.DB_TIMEOUT_SECONDS}: {self.db_timeout_seconds} is not"
             f" 1..{MAX_DB_TIMEOUT_SECONDS} (a call must not wait forever for the database)")
        need(0 <= self.db_startup_wait_seconds <= MAX_DB_STARTUP_WAIT_SECONDS,
             f"{keys.DB_STARTUP_WAIT_SECONDS}: {self.db_startup_wait_seconds} is not"
             f" 0..{MAX_DB_STARTUP_WAIT_SECONDS}")
        need(0 < self.db_probe_seconds <= MAX_DB_PROBE_SECONDS,
             f"database probe interval {self.db_probe_seconds}s is not in"
             f" (0, {MAX_DB_PROBE_SECONDS}]")
        return problems

    def _tls_problems(self) -> list[str]:
        problems: list[str] = []
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            problems.append(f"{keys.TLS_CERT_FILE} and {keys.TLS_KEY_FILE} go together:"
                            " set both or neither")
        if self.tls_client_ca_file is not None and self.tls is None:
            problems.append(f"{keys.TLS_CLIENT_CA_FILE} needs TLS ({keys.TLS_CERT_FILE},"
                            f" {keys.TLS_KEY_FILE})")
        if self.tls_platform_names and self.tls_client_ca_file is None:
            problems.append(f"{keys.TLS_PLATFORM_NAMES} needs client certificates"
                            f" ({keys.TLS_CLIENT_CA_FILE})")
        for name, path in ((keys.TLS_CERT_FILE, self.tls_cert_file),
                           (keys.TLS_KEY_FILE, self.tls_key_file),
                           (keys.TLS_CLIENT_CA_FILE, self.tls_client_ca_file)):
            if path is not None and not path.is_file():
                problems.append(f"{name}: {path} is not a readable file")
        if self.tls is None and not self.trusted_network and not is_loopback(self.host):
            problems.append(
                f"binding {self.host} without TLS: set {keys.TLS_CERT_FILE} and"
                f" {keys.TLS_KEY_FILE}, or {keys.TRUSTED_NETWORK}=true (--trusted-network)"
                " when a proxy, mesh or private network protects the traffic")
        return problems

    def _secret_problems(self) -> list[str]:
        problems = [f"{name} is empty" for attr, (name, _) in _DEV_SECRETS.items()
                    if not getattr(self, attr)]
        problems += [f"{name} is still the example file's placeholder; set a secret of your"
                     " own" for attr, (name, _) in _DEV_SECRETS.items()
                     if is_placeholder(getattr(self, attr))]
        try:
            password = self.database.password
        except ConfigError:
            password = ""  # the URL's own problem is reported by validate()
        if is_placeholder(password):
            problems.append(f"{keys.DATABASE_URL}: the database password is still the example"
                            " file's placeholder")
        try:
            Signer.from_text(self.signing_key)
        except SignatureError as error:
            problems.append(f"{keys.SIGNING_KEY}: {error}")
        # A secret the operator set is checked on every address: a loopback bind behind a
        # proxy, sidecar or port-forward is reachable from elsewhere.
        for attr, (name, dev) in _DEV_SECRETS.items():
            value = getattr(self, attr)
            if value == dev and not is_loopback(self.host):
                problems.append(
                    f"{name} is the development default, which only loopback hosts accept;"
                    f" set a real secret to bind {self.host}")
            elif value != dev and 0 < len(value) < MIN_SECRET_LENGTH:
                problems.append(f"{name} is shorter than {MIN_SECRET_LENGTH} characters")
        values = [getattr(self, attr) for attr in _DEV_SECRETS]
        if len(set(values)) != len(values):
            problems.append(
                f"{keys.TOKEN_SECRET}, {keys.AUDIT_KEY}, {keys.PLATFORM_KEY} and"
                f" {keys.SIGNING_KEY} must differ")
        return problems


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags that override the environment (secrets are environment-only)."""
    group = parser.add_argument_group("server configuration (flags override FIFTYK_* env)")
    group.add_argument("--database-url", metavar="URL",
                       help=f"postgresql://… (several hosts and libpq parameters welcome), a"
                            f" libpq keyword string, or a SQLite file path ({keys.DATABASE_URL});"
                            f" default: {SQLITE_FILE_NAME} in the data directory")
    group.add_argument("--data-dir", metavar="DIR",
                       help=f"data directory for the SQLite default ({DATA_DIR_ENV},"
                            f" default ./{DEFAULT_DATA_DIR})")
    group.add_argument("--host", help=f"bind address ({keys.HOST}, default {DEFAULT_HOST})")
    group.add_argument("--port", type=int,
                       help=f"gRPC port, 0 picks one ({keys.PORT}, default {DEFAULT_PORT})")
    group.add_argument("--metrics-port", type=int,
                       help=f"Prometheus port, 0 picks one ({keys.METRICS_PORT},"
                            f" default {DEFAULT_METRICS_PORT})")
    group.add_argument("--web-port", type=int,
                       help="the web table (replays, live tables) on this port, 0 picks one,"
                            f" {WEB_OFF} is off ({keys.WEB_PORT}, default off)")
    group.add_argument("--log-level", choices=[*LOG_LEVELS, *(n.lower() for n in LOG_LEVELS)],
                       help=f"{keys.LOG_LEVEL}, default {DEFAULT_LOG_LEVEL}")
    group.add_argument("--create-schema", action=argparse.BooleanOptionalAction, default=None,
                       help=f"create tables on start ({keys.CREATE_SCHEMA}, default true)")
    group.add_argument("--workers", type=int,
                       help="threads running application calls (default 2 x CPUs + 2)")
    group.add_argument("--db-pool-size", type=int,
                       help=f"database connections ({keys.DB_POOL_SIZE}, default: workers)")
    group.add_argument("--lock-timeout-ms", type=int,
                       help=f"longest wait for a database lock ({keys.LOCK_TIMEOUT_MS},"
                            f" default {DEFAULT_LOCK_TIMEOUT_MS})")
    group.add_argument("--db-timeout-seconds", type=int,
                       help="longest wait for PostgreSQL before a call fails UNAVAILABLE"
                            f" ({keys.DB_TIMEOUT_SECONDS}, default {DEFAULT_DB_TIMEOUT_SECONDS})")
    group.add_argument("--db-startup-wait-seconds", type=int,
                       help="at start, how long to wait for PostgreSQL to answer"
                            f" ({keys.DB_STARTUP_WAIT_SECONDS},"
                            f" default {DEFAULT_DB_STARTUP_WAIT_SECONDS})")
    group.add_argument("--max-message-bytes", type=int,
                       help=f"largest gRPC message (default {DEFAULT_MAX_MESSAGE_BYTES})")
    group.add_argument("--tls-cert-file", metavar="PEM",
                       help=f"certificate chain: TLS on every port ({keys.TLS_CERT_FILE});"
                            " reloaded when the file changes")
    group.add_argument("--tls-key-file", metavar="PEM",
                       help=f"private key of the certificate ({keys.TLS_KEY_FILE})")
    group.add_argument("--tls-client-ca-file", metavar="PEM",
                       help="require client certificates signed by this CA"
                            f" ({keys.TLS_CLIENT_CA_FILE})")
    group.add_argument("--trusted-network", action="store_true", default=None,
                       help="serve plaintext off loopback: a proxy, mesh or private network"
                            f" protects the traffic ({keys.TRUSTED_NETWORK})")
    group.add_argument("--rate-limits", metavar="SPEC",
                       help="call rates per role and RPC class, e.g."
                            " player.command=50/100,platform.create=off,peer=500/1000, or off"
                            f" ({keys.RATE_LIMITS})")
    group.add_argument("--watch-limits", metavar="SPEC",
                       help="open WatchTable streams, e.g. seat=4,key=256,table=64,server=2000"
                            f" ({keys.WATCH_LIMITS})")
    group.add_argument("--transport-limits", metavar="SPEC",
                       help="limits below authentication, e.g. streams=512,idle=300,request=10"
                            f" ({keys.TRANSPORT_LIMITS}; see docs/integrating.md)")
    group.add_argument("--reflection", action=argparse.BooleanOptionalAction, default=None,
                       help="serve gRPC server reflection, for grpcurl and other tools"
                            f" without the proto files ({keys.REFLECTION}; default: on for a"
                            " loopback bind, off otherwise)")
    group.add_argument("--trusted-proxies", metavar="LIST",
                       help="addresses or networks of the proxies in front of the server,"
                            " comma-separated: their x-forwarded-for header names the client"
                            " a call is counted under; nobody else's header counts"
                            f" ({keys.TRUSTED_PROXIES}; see deploy/README.md)")
    group.add_argument("--webhooks", metavar="SPEC",
                       help="webhook delivery: attempts, backoff, max_backoff, timeout,"
                            " lease, poll, private, loopback, niceness, e.g."
                            " attempts=20,backoff=2"
                            f" ({keys.WEBHOOKS})")
    group.add_argument("--processes", type=int,
                       help=f"server processes sharing the gRPC port, one per core"
                            f" ({keys.PROCESSES}, default 1; use PostgreSQL with several)")
    group.add_argument("--reuse-port", action="store_true", default=None,
                       help=argparse.SUPPRESS)  # set by --processes for its children
    group.add_argument("--integrity-check-seconds", type=int,
                       help=f"seconds between integrity audits of the stored history, 0 for"
                            f" none ({keys.INTEGRITY_CHECK_SECONDS}, default"
                            f" {DEFAULT_INTEGRITY_CHECK_SECONDS})")
    group.add_argument("--turn-sweep-seconds", type=float,
                       help="how often expired turn clocks are checked"
                            f" (default {DEFAULT_TURN_SWEEP_SECONDS})")


__all__ = [
    "DATA_DIR_ENV",
    "Config",
    "ConfigError",
    "Database",
    "add_arguments",
    "bare_host",
    "default_workers",
    "host_port",
    "host_problem",
    "is_loopback",
    "is_placeholder",
    "parse_database_url",
]
