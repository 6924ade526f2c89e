"""斗地主 (Dou Dizhu) at the edge: its gRPC converters, its command-line side and demo bots,
its web renderer."""
