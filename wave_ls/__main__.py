"""``python -m wave_ls`` is the same as the ``wave-ls`` command."""

from wave_ls.cli.main import main

raise SystemExit(main())
