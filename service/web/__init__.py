"""The web table: a hand drawn in a browser, replayed or followed live.

`document` builds the replay document the page draws (a hand's public events, the match
around it, and a transcript's own deal inputs); `page` writes the page as one offline HTML
file; `gateway` (server only) serves the page and its HTTP API on the referee's web port.
The page itself is plain JavaScript and CSS in `static/`; each installed game brings its
renderer in its own package (`GameBundle.renderer`), registered by the game's name.
"""
