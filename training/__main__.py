"""``python -m cluedo_env.training --config configs/NAME.yaml [--backend sb3|rllib]``: train a player.

The backend is picked by :mod:`cluedo_env.training.dispatch`.
"""

import sys

from cluedo_env.training.dispatch import main

from cluedo_env.errors import run_cli

if __name__ == "__main__":
    sys.exit(run_cli(main))
