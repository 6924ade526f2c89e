"""`python -m fiftyk_referee.service.cli`: the `fiftyk` command without its console script."""

from fiftyk_referee.service.cli.main import main

raise SystemExit(main())
