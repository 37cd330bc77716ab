"""Allows `python -m mini_claude`."""

from mini_claude.cli import main

raise SystemExit(main())
