"""``python -m training --config configs/NAME.yaml [--backend sb3|rllib]``: train a player.

The backend is picked by :mod:`training.dispatch`.
"""

import sys

from cluedo_env.errors import run_cli
from training.dispatch import main

if __name__ == "__main__":
    sys.exit(run_cli(main))
