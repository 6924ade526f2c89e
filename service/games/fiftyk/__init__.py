"""五十K at the edge: its gRPC converters, its command-line side, its web renderer."""
