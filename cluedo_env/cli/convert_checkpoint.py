"""``cluedo convert-checkpoint OLD.zip NEW.zip --trust-pickle``: an older checkpoint rewritten as data, once.

Checkpoints load without running code from the file (:mod:`cluedo_env.training.sb3.safe_checkpoint`); one written
before that format holds its settings only as pickles, and reading those runs any code they hold. This command reads
such a file with SB3's own loader, which is why it insists on ``--trust-pickle``: give it only a file you made
or got from someone you trust. The copy holds the same weights bit for bit (checked before the command returns).
"""

from __future__ import annotations

from collections.abc import Callable

from cluedo_env.errors import UsageError
from cluedo_env.files import check_writable_file
from cluedo_env.options import ArgumentParser

DESCRIPTION = "rewrite an older checkpoint (pickled settings) as one that loads without running code (once, trusted)"


def main(argv: list[str], output: Callable[[str], None] | None = None, prog: str = "cluedo convert-checkpoint") -> int:
    p = ArgumentParser(prog=prog, description=DESCRIPTION + ".")
    p.add_argument("old", metavar="OLD.zip", help="the checkpoint to convert (a MaskablePPO zip, no cluedo_env.json)")
    p.add_argument("new", metavar="NEW.zip", help="where to write the converted checkpoint (a new file)")
    p.add_argument("--trust-pickle", action="store_true",
                   help="required: reading OLD.zip unpickles it, which runs any code it holds; say you trust it")
    args = p.parse_args(argv)
    say = output or (lambda text: print(text, flush=True))
    if not args.trust_pickle:
        raise UsageError(f"converting {args.old} unpickles it, which runs any code the file holds (add --trust-pickle "
                         "if you trust the file: one you trained, or from a source you trust)")  # fmt: skip
    check_writable_file(args.new, "NEW.zip")
    try:
        from cluedo_env.training.sb3.convert_checkpoint import convert_checkpoint
    except ImportError as exc:
        raise UsageError(f"convert-checkpoint needs the training extra ({exc}) (pip install -e '.[train]')") from exc
    out = convert_checkpoint(args.old, args.new, trust_pickle=True)
    say(f"wrote {out}: the same weights, loadable as data (ckpt:{out})")
    return 0


__all__ = ["DESCRIPTION", "main"]
