"""升级/拖拉机 at the edge: its gRPC converters, its command-line side and demo bots, its web
renderer."""
