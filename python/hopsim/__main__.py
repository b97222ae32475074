"""`python -m hopsim ...`: the `hopsim` command, for environments without its script on PATH."""

from .cli import main

main()
