"""How far an analysis is, measured from the store while its runs write it: for the MCP server's
progress notifications and for the progress line `analyze` and `migrate` print on stderr."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

from gd_assets import orchestrate, store
from gd_assets.freshness import (
    current_evidence_inputs,
    judge_backend,
    stale_evidence,
    stale_judgements,
    stale_rewrites,
)


class AnalysisProgress:
    """How far an analysis is, by the freshness rule: per fragment, whether its evidence, judgement and
    rewrite are current (three steps each). Read from the store while the runs write it."""

    STAGES = ("evidence", "judgement", "rewrite", "verdict")

    def __init__(self, request: str | None, judge: str | None = None):
        self.inputs = current_evidence_inputs(request)
        self.judge = judge_backend(judge).identity()
        self.rewrites = orchestrate.current_rewrite_version()
        self.stage: str | None = None
        self.project: str | None = None
        self.fragments = 0   # counted once the project is sliced
        self.done = 0

    def on_stage(self, stage: str, project: str) -> None:
        self.stage, self.project = stage, project

    def measure(self) -> tuple[int, int, str]:
        """(done, total, message); `done` never goes back."""
        if self.project is None:
            return 0, 1, "reading and slicing the project"
        if not self.fragments:
            self.fragments = store.query("SELECT count(*) AS n FROM fragments WHERE project = ?",
                                         [self.project])["n"][0]
        n = self.fragments
        done = (3 * n - len(stale_evidence(self.project, self.inputs)) - len(stale_judgements(self.project, self.judge))
                - len(stale_rewrites(self.project, self.rewrites)))
        self.done = max(self.done, done)
        return self.done, max(3 * n, 1), f"{self.stage}: {self.done} of {3 * n} fragment steps current ({n} fragments)"


class TerminalProgress:
    """A progress line on `out` while the work runs: the stage, fragment steps current of all, the rate
    and the time left. On a terminal one line redrawn every second; elsewhere a plain line every
    `every` seconds (GD_ASSETS_PROGRESS_EVERY). Nothing is printed for work that ends before the first report."""

    def __init__(self, request: str | None = None, judge: str | None = None, out: TextIO | None = None,
                 every: float | None = None):
        self.progress = AnalysisProgress(request, judge)
        self.out = out or sys.stderr   # as it is now: in `gd-assets serve`, the client's
        self.tty = self.out.isatty()
        default = float(os.environ.get("GD_ASSETS_PROGRESS_EVERY") or (1.0 if self.tty else 10.0))
        self.every = every if every is not None else default
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._report, daemon=True, name="gd-assets progress")
        self.printed = False

    def on_stage(self, stage: str, project: str) -> None:
        self.progress.on_stage(stage, project)

    def __enter__(self) -> TerminalProgress:
        self.started = time.monotonic()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        if self.printed and self.tty:
            self.out.write("\n")
            self.out.flush()

    def _report(self) -> None:
        first = None
        while not self.stop.wait(self.every):
            try:
                done, total, message = self.progress.measure()
            except Exception:  # the store is busy or being replaced: the next poll reads it
                continue
            now = time.monotonic()
            first = first or (now, done)
            rate = (done - first[1]) / (now - first[0]) if now > first[0] else 0.0
            left = f", about {_duration((total - done) / rate)} left" if rate > 0 and done < total else ""
            line = f"{message}{f', {rate:.0f} steps/s' if rate else ''}{left}"
            self.out.write(f"\r{line[:160]:<160}" if self.tty else line + "\n")
            self.out.flush()
            self.printed = True


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
