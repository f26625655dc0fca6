#!/usr/bin/env python
"""Write (and optionally serve) the replay viewer page of a game record.

    python scripts/replay_viewer.py RECORD.json --out replay.html            # write the page, open it in a browser
    python scripts/replay_viewer.py RECORD.json --out replay.html --serve 8000   # and serve it on localhost:8000
    python scripts/replay_viewer.py --demo --out replay.html                 # a seeded demo game, no record needed
    python scripts/replay_viewer.py --demo --out /tmp/r.html --screenshot docs/replay_viewer.png --step 120 --seat 0

The page is one self-contained HTML file (no network needed): left/right arrows, Home/End and the
buttons step through the game; the player selector shows that player's notebook at each step.
``--screenshot`` renders the page in headless Chromium (/usr/bin/chromium, driven by Playwright;
see scripts/install_browser.sh) at ``--step`` as seen by ``--seat`` and saves a PNG.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cluedo_env.errors import run_cli  # noqa: E402
from cluedo_env.options import ArgumentParser  # noqa: E402
from cluedo_env.record import RecordError  # noqa: E402
from cluedo_env.render.html import CHROMIUM, CHROMIUM_ARGS, demo_record, load_record, write_html  # noqa: E402


def screenshot(page_path: Path, png: Path, step: int | None, seat: int | None, width: int = 1400) -> Path:
    """Open ``page_path`` in headless Chromium at ``step`` for ``seat`` and save a full-page PNG."""
    from playwright.sync_api import sync_playwright

    fragment = "&".join(f"{k}={v}" for k, v in (("step", step), ("seat", seat)) if v is not None)
    url = page_path.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    png.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_timeout(400)  # let the token transitions finish
            page.screenshot(path=str(png), full_page=True)
        finally:
            browser.close()
    return png


def serve(path: Path, port: int) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(path.parent.resolve()))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(f"serving http://127.0.0.1:{port}/{path.name}  (Ctrl-C to stop)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            print("stopped")


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("record", nargs="?", help="game record JSON (schema cluedo_env.record/1)")
    ap.add_argument("--out", default="replay.html", help="HTML file to write (default: replay.html)")
    ap.add_argument("--title", default=None, help="page title")
    ap.add_argument("--demo", action="store_true", help="use a seeded demo game instead of a record file")
    ap.add_argument("--demo-seed", type=int, default=7, help="seed of the demo game (default 7)")
    ap.add_argument("--serve", type=int, metavar="PORT", help="serve the page on 127.0.0.1:PORT after writing it")
    ap.add_argument("--screenshot", type=Path, metavar="PNG", help="save a screenshot of the page (headless Chromium)")
    ap.add_argument("--step", type=int, default=None, help="step shown in the screenshot (default: 0)")
    ap.add_argument("--seat", type=int, default=None, help="notebook shown in the screenshot (default: seat 0)")
    args = ap.parse_args(argv)

    if args.demo == bool(args.record):
        ap.error("give a RECORD file or --demo (not both)")
    try:
        record = demo_record(seed=args.demo_seed) if args.demo else load_record(args.record)
        out = write_html(record, args.out, title=args.title)
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB, {len(record['steps'])} steps)")
    if args.screenshot:
        png = screenshot(out, args.screenshot, args.step, args.seat)
        print(f"wrote {png}")
    if args.serve is not None:
        serve(out, args.serve)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
