"""The referee's service side, in folders by concern; `server.py` is the one composition root.

- `core/`: the use cases and what runs them (commands, runner, cache, store, feed, turn clock);
- `trust/`: hash chain, ledger, signatures, evidence, verifier, integrity audit, receipts;
- `platform/`: lobby, active tables, spectators, webhooks;
- `grpc/`: the gRPC edge (servicer, auth, errors, interceptors) and the client;
- `cli/`: the `fiftyk` command line; `web/`: the web table;
- `ops/`: configuration, limits, metrics, logs, TLS, the process supervisor;
- `errors.py`: the service's error vocabulary, which every folder shares.
"""
