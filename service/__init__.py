"""The core at the top (use cases, runner, cache, store); its edges in grpc/, web/, cli/, ops/."""
