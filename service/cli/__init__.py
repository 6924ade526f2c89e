"""The `fiftyk` command line: one module per command, and the text it shows people."""
