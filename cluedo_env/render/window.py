"""The game in a window (``render_mode="human"``): :class:`HumanWindow` and :func:`display_available`.

One job: show frames from :mod:`cluedo_env.render.image` in a matplotlib window updated in place,
and refuse clearly (:class:`NoDisplayError`) where no window can be shown. It is separate because it
is the only part of rendering that touches pyplot and a display: importing the other modules never
needs one, and pyplot is imported only when a window is constructed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from cluedo_env.render.image import DEFAULT_SCALE, render_rgb


class NoDisplayError(RuntimeError):
    """render_mode='human' was asked for where no window can be shown."""


def display_available() -> bool:
    """Whether a window can be opened: on Linux/BSD this needs ``DISPLAY`` or ``WAYLAND_DISPLAY``."""
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


_NON_INTERACTIVE = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template", "module://matplotlib_inline.backend_inline"}


class HumanWindow:
    """A matplotlib window showing the rgb frame, updated in place (for ``render_mode="human"``).

    Raises :class:`NoDisplayError` on construction where no window can be shown (no display, or a
    non-interactive matplotlib backend); it never falls back silently. Use it from the main thread.
    Closing the window by hand is fine: the next :meth:`show` opens a new one.
    """

    def __init__(self, title: str = "Cluedo", scale: int = DEFAULT_SCALE, pause: float = 0.001) -> None:
        if not display_available():
            raise NoDisplayError(
                "render_mode='human' needs a display, and none was found (DISPLAY and WAYLAND_DISPLAY are unset); "
                "use render_mode='rgb_array' or 'ansi', or run under a display (e.g. xvfb-run)"
            )
        import matplotlib.pyplot as plt  # only here: importing cluedo_env.render must not need a display

        backend = str(plt.get_backend()).lower()
        if backend in _NON_INTERACTIVE:
            raise NoDisplayError(
                f"render_mode='human' needs an interactive matplotlib backend, but the backend is {backend!r} "
                "(set MPLBACKEND to TkAgg or QtAgg, or use render_mode='rgb_array' or 'ansi')"
            )
        self._plt = plt
        self.title = title
        self.scale = scale
        self.pause = pause
        self._fig: Any = None
        self._image: Any = None

    def show(self, frame: dict[str, Any] | np.ndarray, viewer: int | None = None) -> None:
        """Draw a snapshot (rendered with :func:`render_rgb`) or a ready (H, W, 3) frame."""
        plt = self._plt
        if isinstance(frame, dict):
            frame = render_rgb(frame, viewer, self.scale)
        if self._fig is None or not plt.fignum_exists(self._fig.number) or self._image.get_array().shape != frame.shape:
            self.close()
            dpi = 100
            self._fig = plt.figure(self.title, figsize=(frame.shape[1] / dpi, frame.shape[0] / dpi), dpi=dpi)
            ax = self._fig.add_axes((0, 0, 1, 1))
            ax.set_axis_off()
            self._image = ax.imshow(frame, interpolation="nearest")
            self._fig.show()
        else:
            self._image.set_data(frame)
        self._fig.canvas.draw_idle()
        self._fig.canvas.flush_events()
        self._fig.canvas.start_event_loop(self.pause)

    def close(self) -> None:
        if self._fig is not None:
            self._plt.close(self._fig)
            self._fig, self._image = None, None
