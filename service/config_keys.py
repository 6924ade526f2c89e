"""The environment variables that configure the server: the one list deploy files may use."""

from __future__ import annotations

DATABASE_URL = "FIFTYK_DATABASE_URL"
HOST = "FIFTYK_HOST"
PORT = "FIFTYK_PORT"
METRICS_PORT = "FIFTYK_METRICS_PORT"
LOG_LEVEL = "FIFTYK_LOG_LEVEL"
TOKEN_SECRET = "FIFTYK_TOKEN_SECRET"
AUDIT_KEY = "FIFTYK_AUDIT_KEY"
PLATFORM_KEY = "FIFTYK_PLATFORM_KEY"
CREATE_SCHEMA = "FIFTYK_CREATE_SCHEMA"
DB_POOL_SIZE = "FIFTYK_DB_POOL_SIZE"
LOCK_TIMEOUT_MS = "FIFTYK_LOCK_TIMEOUT_MS"

CONFIG_ENV_VARS: tuple[str, ...] = (
    DATABASE_URL,
    HOST,
    PORT,
    METRICS_PORT,
    LOG_LEVEL,
    TOKEN_SECRET,
    AUDIT_KEY,
    PLATFORM_KEY,
    CREATE_SCHEMA,
    DB_POOL_SIZE,
    LOCK_TIMEOUT_MS,
)
# Values that must come from a secret store, never from a ConfigMap or an image.
SECRET_ENV_VARS: tuple[str, ...] = (DATABASE_URL, TOKEN_SECRET, AUDIT_KEY, PLATFORM_KEY)
