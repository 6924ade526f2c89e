"""Webhook deliveries: every public event POSTed, signed, to the platform's endpoints.

The referee's outbound edge, beside the gRPC edge and the web table: the dispatcher
(`dispatcher.py`) runs a worker per endpoint over the global feed, in feed order, at least
once; each POST goes through the bounded HTTP transport (`transport.py`) and carries the
endpoint's signature (`signing.py`); all of it runs in a process of its own, which the
server starts, watches and stops (`process.py`). A delivery's body is the event as
`ReadEvents` shows it (the gRPC edge's JSON), which is why this folder sits above the edge.
The endpoints themselves, their positions, leases and dead letters are kept by
`service/platform/webhook_store.py` (the RPCs that register them read and change only that),
and which URLs and addresses are allowed is `service/platform/webhook_addresses.py`.
"""
