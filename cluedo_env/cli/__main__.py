"""``python -m cluedo_env.cli``: the ``cluedo`` command without the installed entry point."""

import sys

from cluedo_env.cli import main

if __name__ == "__main__":
    sys.exit(main())
