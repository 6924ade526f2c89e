"""Running and watching the referee: configuration, TLS, logs, metrics, the process supervisor."""
