"""``python -m rcrn`` is the ``rcrn`` command."""

import sys

from rcrn.cli import main

sys.exit(main())
