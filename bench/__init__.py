"""The benchmark lab (dev-only, not installed): `./scripts/bench BENCHMARK ...`.

Benchmarks you run and report, not timed tests: medians over repeats, a readable table,
optionally JSON. Run from a checkout after `./scripts/test` has installed the dev extra.
"""
