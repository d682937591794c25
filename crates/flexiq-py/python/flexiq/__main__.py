"""``python -m flexiq``: the same commands as the ``flexiq`` console script."""

import sys

from .cli import main

sys.exit(main())
