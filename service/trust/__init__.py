"""Trust: what lets a sceptic check the referee — chain, ledger, signatures, evidence, audit.

The chained event store (`chain_store.py`) seals every stored event in its stream's hash
chain; the ledger (`ledger.py`) is the Merkle log of finished hands with signed checkpoints;
`signing.py` holds the referee's Ed25519 key; `evidence.py` builds a hand's evidence and
`verifier.py` checks it offline; `integrity.py` audits the store against what was signed;
`receipts.py` records the commands accepted under a request id.
"""
