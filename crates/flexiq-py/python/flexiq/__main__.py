"""``python -m flexiq``: the same commands as the ``flexiq`` console script."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
