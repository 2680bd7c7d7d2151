"""Builds what the suite's session fixtures would otherwise build inside the first tests that need them,
the test corpus and the tiny chat model, both at once before the suite starts (`scripts/test.sh`).

Inside the suite, the first test needing the corpus builds it on one core while every other process that
needs it waits on its lock; here the corpus (one core, most of it Python) and the model (one thread of
PyTorch) are built side by side. Each is built once per key and kept in the test cache, so on a machine
that has both this only checks their keys. A build that fails here is reported and left to the tests,
which fail with its reason.

    python tests/prepare.py            # both, in two processes
    python tests/prepare.py corpus     # one of them: corpus | tiny-model
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import conftest  # noqa: E402 - the fixtures' own builders, with their keys and locks

BUILDS = {"corpus": conftest.built_corpus_home, "tiny-model": conftest.built_tiny_model}


def build(name: str) -> int:
    started = time.monotonic()
    try:
        where = BUILDS[name]()
    except BaseException as error:  # noqa: BLE001 - pytest.fail raises a BaseException; the tests report it
        print(f"prepare: {name} not built ({type(error).__name__}: {error}); the tests that need it will say why",
              flush=True)
        return 1
    print(f"prepare: {name} ready in {time.monotonic() - started:.0f} s: {where}", flush=True)
    return 0


def main(names: list[str]) -> int:
    if conftest.test_cache() is None:
        print("prepare: GD_ASSETS_TEST_CACHE=off, nothing is kept between processes: the tests build what they need")
        return 0
    if len(names) == 1:
        return build(names[0])
    children = [subprocess.Popen([sys.executable, __file__, name]) for name in names]
    return max(child.wait() for child in children)


if __name__ == "__main__":
    wanted = sys.argv[1:] or list(BUILDS)
    unknown = [name for name in wanted if name not in BUILDS]
    if unknown:
        sys.exit(f"prepare: unknown {', '.join(unknown)}; expected {' | '.join(BUILDS)}")
    sys.exit(main(wanted))
