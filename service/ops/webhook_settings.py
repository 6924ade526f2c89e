"""How webhook deliveries are retried and leased: `FIFTYK_WEBHOOKS`, parsed.

The setting is a comma-separated list of `name=value` overrides of the defaults below, e.g.
`attempts=20,backoff=2,max_backoff=600,timeout=5` (docs/integrating.md, "Webhooks"):

- `attempts`: POSTs of one event before it goes to the dead letters (default 12);
- `backoff`: seconds before the first retry; each retry doubles it (default 1);
- `max_backoff`: the longest pause between two attempts, in seconds (default 300);
- `timeout`: seconds an endpoint has to answer one POST (default 10);
- `lease`: seconds a replica's claim on an endpoint lasts without renewal (default 30);
- `poll`: seconds between looks for new endpoints and events when idle (default 1);
- `private`: 1 lets endpoints be on private networks (RFC 1918, unique local IPv6, shared
  address space: a platform inside the operator's network), 0 refuses them (default 0).
  Loopback is reached only by a URL that names it; link-local addresses never.
- `niceness`: the CPU priority of the delivery process (service.webhooks.process), 0 to 19
  (default 0, an equal of the commands): when every core is busy, a higher niceness leaves
  more to the commands and lets deliveries lag more (at 5, under `bench webhooks` on two
  busy cores, a PostgreSQL referee's endpoint fell behind by seconds).
- `loopback`: 1 lets endpoints be on loopback (a URL naming `localhost`, `127.0.0.1`, `::1`),
  0 refuses them. Unset, it follows the server's own address: allowed on a server bound to
  loopback (development), refused on one bound off loopback, where a loopback endpoint
  would let the platform reach the referee's own host.

Each pause is drawn uniformly between 0 and its ceiling ("full jitter"), so endpoints that
failed together do not retry together. The defaults retry for about half an hour.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields, replace

MAX_ATTEMPTS = 1_000
MAX_NICENESS = 19  # the kernel's lowest priority
MAX_SECONDS = 86_400.0
FLAGS = {"0": False, "1": True}


class WebhookSettingsError(ValueError):
    """A `FIFTYK_WEBHOOKS` value that cannot be used; the message says why."""


@dataclass(frozen=True)
class WebhookSettings:
    """Retry, timeout and lease settings of webhook deliveries."""

    attempts: int = 12
    backoff: float = 1.0
    max_backoff: float = 300.0
    timeout: float = 10.0
    lease: float = 30.0
    poll: float = 1.0
    batch: int = 100
    private: bool = False
    niceness: int = 0
    loopback: bool | None = None  # None: as the server's bind (service.ops.config)

    def pause(self, attempt: int, rng: random.Random) -> float:
        """The pause after failed attempt `attempt` (1, 2, ...): exponential, full jitter."""
        ceiling = min(self.max_backoff, self.backoff * 2 ** min(attempt - 1, 64))
        return rng.uniform(0, ceiling)


def parse_webhook_settings(text: str) -> WebhookSettings:
    """Settings from `name=value,...` (empty: the defaults)."""
    settings = WebhookSettings()
    known = {f.name: f.type for f in fields(WebhookSettings)}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in known or name == "batch":
            raise WebhookSettingsError(
                f"{item!r}: expected name=value with a name among attempts, backoff,"
                " max_backoff, timeout, lease, poll, private, loopback, niceness")
        if name in ("private", "loopback"):
            if value.strip() not in FLAGS:
                raise WebhookSettingsError(f"{name}={value!r}: expected 0 or 1")
            settings = replace(settings, **{name: FLAGS[value.strip()]})
            continue
        if name == "niceness":
            if not value.strip().isdigit() or int(value) > MAX_NICENESS:
                raise WebhookSettingsError(f"niceness={value!r}: expected 0 to {MAX_NICENESS}")
            settings = replace(settings, niceness=int(value))
            continue
        try:
            number: float = int(value) if name == "attempts" else float(value)
        except ValueError:
            raise WebhookSettingsError(f"{name}={value!r} is not a number") from None
        limit = MAX_ATTEMPTS if name == "attempts" else MAX_SECONDS
        if not 0 < number <= limit:
            raise WebhookSettingsError(f"{name}={value} is not in (0, {limit:g}]")
        settings = replace(settings, **{name: number})  # type: ignore[arg-type]  # by name
    if settings.lease <= settings.timeout:
        raise WebhookSettingsError("lease must be longer than timeout: a worker renews its"
                                   " lease between attempts")
    return settings


__all__ = ["WebhookSettings", "WebhookSettingsError", "parse_webhook_settings"]
