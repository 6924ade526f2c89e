"""Running and watching the referee: configuration, limits, logs, metrics, TLS, the supervisor."""
