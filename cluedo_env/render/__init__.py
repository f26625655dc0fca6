"""Rendering a game for people: text (``ansi``), an image (``rgb_array``) and a window (``human``).

Everything here reads a snapshot dict (``docs/snapshot.md``: ``Game.to_dict()`` of the reference
engine or ``VectorEngine.export_game(i)``), so one renderer serves both engines. The snapshot is
never modified.

API::

    render_ansi(snapshot, viewer=None, *, color=False) -> str
    render_rgb(snapshot, viewer=None, scale=DEFAULT_SCALE) -> np.ndarray   # (H, W, 3) uint8
    frame_shape(has_board=True, scale=DEFAULT_SCALE) -> (H, W, 3)
    HumanWindow(title="Cluedo", scale=DEFAULT_SCALE).show(snapshot_or_frame, viewer=None); .close()
    demo_snapshot(seed=3, steps=200) -> dict   # a mid-game position of the reference engine

``python -m cluedo_env.render docs/example_board.png`` prints the demo position as text and
writes its image (that is how ``docs/example_board.png`` is made).

The package is split by job, and this module only re-exports the public names:

* :mod:`~cluedo_env.render.events`: the words and labels every view shares (seat names, the lines for
  suggestions, accusations, history and the result, room contents, token letters, colours);
* :mod:`~cluedo_env.render.text`: ``render_ansi``;
* :mod:`~cluedo_env.render.image`: ``render_rgb``, ``frame_shape``, ``DEFAULT_SCALE``;
* :mod:`~cluedo_env.render.window`: ``HumanWindow``, ``NoDisplayError``, ``display_available``;
* :mod:`~cluedo_env.render.demo`: ``demo_snapshot``; ``__main__``: the command above;
* :mod:`~cluedo_env.render.html`: the offline HTML replay page of a game record.

Image shape (fixed for a given scale; ``scale`` is the side of one board square in pixels):

* classic board: ``(25 * scale, 40 * scale, 3)``: the 24 x 25 board on the left, a status panel
  ``16 * scale`` wide on the right. Default scale 28: (700, 1120, 3).
* card-only game (rules ``board: none``): the status panel alone, ``(25 * scale, 16 * scale, 3)``.

Scales from 8 up work; text is comfortable to read from about 24. A frame takes about 10 ms of CPU
at the default scale (the board layer is drawn once per scale and reused).

Privacy (R-G7): the card shown to refute a suggestion is written only when ``viewer`` is the
suggester or the player who showed that card. With ``viewer=None`` (a spectator) or any other seat,
the output says only *who* showed a card. A viewer's own hand is listed for that viewer (R-S6); the
envelope is never drawn (an accusation that was correct names it, and that is public, R-A3).

Drawing uses pillow on a board layer cached per scale, with the DejaVu fonts that matplotlib ships
(no display, no pyplot, no global state; safe to call from several threads). Only
:class:`HumanWindow` touches pyplot, and only when constructed.

Human mode needs a display: without one (Linux/BSD with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY``,
or a non-interactive matplotlib backend such as Agg), constructing :class:`HumanWindow` raises
:class:`NoDisplayError`, a ``RuntimeError`` that says to use ``rgb_array`` or ``ansi`` instead.
"""

from __future__ import annotations

from cluedo_env.render.demo import demo_snapshot
from cluedo_env.render.events import SUSPECT_COLORS, SUSPECT_LETTERS, WEAPON_SHORT
from cluedo_env.render.image import DEFAULT_SCALE, frame_shape, render_rgb
from cluedo_env.render.text import render_ansi
from cluedo_env.render.window import HumanWindow, NoDisplayError, display_available

__all__ = [
    "DEFAULT_SCALE",
    "HumanWindow",
    "NoDisplayError",
    "SUSPECT_COLORS",
    "SUSPECT_LETTERS",
    "WEAPON_SHORT",
    "demo_snapshot",
    "display_available",
    "frame_shape",
    "render_ansi",
    "render_rgb",
]
