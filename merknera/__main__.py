"""``python -m merknera`` is the ``merknera`` command."""

import sys

from merknera.cli import main

sys.exit(main())
