"""The games' edges, one package per game: its gRPC converters, its command-line text and
demo, its web renderer (`renderer.js`)."""
