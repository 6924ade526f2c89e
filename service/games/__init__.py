"""The games' edges, one package per game (`service/games/<game>/`): its bundle
(`bundle.py`, which its entry point names), its gRPC converters and generated messages, its
command-line text and demo, its web renderer (`renderer.js`). The core imports none of them:
it finds each game through its entry point (`service/core/bundles.py`)."""
