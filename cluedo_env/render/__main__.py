"""``python -m cluedo_env.render [out.png]``: print the demo position as text and write its image.

One job: the command that makes ``docs/example_board.png``. It is separate because a package runs
its ``__main__`` module under ``python -m``, not code at the end of ``__init__``.
"""

from __future__ import annotations

import sys
import time

from PIL import Image

from cluedo_env.render.demo import demo_snapshot
from cluedo_env.render.image import render_rgb
from cluedo_env.render.text import render_ansi

snap = demo_snapshot()
print(render_ansi(snap, viewer=0))
t0 = time.perf_counter()
frame = render_rgb(snap, viewer=0)
print(f"render_rgb: {frame.shape}, {1000 * (time.perf_counter() - t0):.1f} ms (first frame)")
Image.fromarray(frame).save(sys.argv[1] if len(sys.argv) > 1 else "example_board.png")
