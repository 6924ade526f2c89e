"""The application around the 五十K domain: event store, gRPC edge, metrics, CLI."""
