"""The console entry (`gd-assets`, `python -m gd_assets`): a command the data directory's warm server takes
runs there (`gd_assets.serve`), any other here (`gd_assets.cli`), decided before anything heavy is imported."""

from __future__ import annotations

import sys

from gd_assets import serve
from gd_assets.core import heap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    code = serve.hand_over(argv) if serve.servable(argv) else None
    if code is not None:
        return code
    heap.hold()   # `cli.main` settles the heap once its modules are imported
    from gd_assets import cli

    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
