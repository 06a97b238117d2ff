"""``python -m onestep_theory`` entry point."""

from .cli import main

raise SystemExit(main())
