"""The core and its edges: use cases, command runner, cache and store; gRPC, metrics, CLI."""
