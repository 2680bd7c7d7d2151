"""What the player sees and does: the original's frames and play trace beside the copy's.

Whole-frame scores hide what matters (a label drawn at a third of its size moved a whole-frame SSIM by 0.006),
and the two engines draw the same content a little apart (text hinting, the default theme's widgets, outlines).
So a pair of frames is read through the scene tree that drew it. Each drawn node of the original (its rect on
screen, from the trace written at that frame) is found in the copy and compared by what both engines agree on:
where it is drawn and how large, its text and its font size, whether it shows. The pixels of a node whose look
is its content (a sprite, a texture or colour rect) are compared by SSIM inside its rect, and what no text or
widget covers (backgrounds, tile maps, particles, 3D) by SSIM per tile of a grid. Pixels count only below a
noise floor measured on identical content drawn by both engines (PIXEL_FLOOR, TILE_FLOOR), and nothing counts
where the engine's own two runs already differ. The play traces are compared the same way, frame by frame:
the first frame where a node of the copy leaves the original beyond both engines' run-to-run noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

# Noise floors, measured with `python bench/frames_noise.py` (the numbers and their scenes are in bench/README.md):
# sprites, colour rects and backgrounds that both engines draw from the same content score at least 0.97 (mean
# SSIM in a node's rect or a tile, grey, at most 640 px wide); a lost font size, a missing sprite or a moved
# node scores below 0.6. The floors sit between, nearer the noise.
PIXEL_FLOOR = 0.85
TILE_FLOOR = 0.80
GRID = (16, 9)
WIDTH = 640              # frames are kept and compared at most this wide (a 1080p PNG costs an engine 0.3 s)
MOVED_PX = 3.0           # a rect whose corner moved more than this (frame pixels, or 1% of the width) moved
SIZE_RATIO = 1.15        # a rect this much larger or smaller in width or height was resized
FONT_RATIO = 1.10        # a font size this much apart
MARGIN = 4               # pixels around a widget or text that its engine's style may draw on
BLEED = 6                # pixels SSIM's window (11 wide) spreads a difference past where it is
TYPING = 4               # letters a typing effect a frame or two apart may differ by
BURST_MAX = 3            # the original's frames this near a kept frame are its alignments in time
TRACE_TOL = 1.0          # play traces: a 2D node this far (canvas pixels) from the original has left it
TRACE_TOL_3D = 0.01      # ... a 3D node (units)
CONTENT = ("Sprite", "Sprite2D", "TextureRect", "ColorRect", "NinePatchRect", "TextureProgress",
           "TextureProgressBar", "TextureButton")
TEXT = ("Label", "Button", "LineEdit", "RichTextLabel", "CheckBox", "CheckButton", "OptionButton", "MenuButton",
        "LinkButton", "ToolButton")


@dataclass
class Drawn:
    """One node in one trace snapshot (run_tool3/4.gd's `N` line)."""

    path: str
    cls: str
    visible: bool
    where: tuple[float, ...]
    rect: tuple[float, float, float, float] | None
    text: str
    font: str
    anim: str
    script: str


@dataclass
class Snapshot:
    frame: int
    scene: str
    size: tuple[float, float]          # the viewport's visible rect: what the canvas coordinates span
    nodes: dict[str, Drawn] = field(default_factory=dict)
    _names: dict[str, list[Drawn]] | None = None

    def counterpart(self, node: Drawn) -> Drawn | None:
        """The node drawing what `node` draws: the same path, else the only node of that name, else the only
        one with its text (a port that moved a node under another parent still draws it)."""
        found = self.nodes.get(node.path)
        if found is not None:
            return found
        if self._names is None:
            self._names = {}
            for other in self.nodes.values():
                self._names.setdefault(other.path.rsplit("/", 1)[-1], []).append(other)
        same = self._names.get(node.path.rsplit("/", 1)[-1], [])
        if len(same) == 1:
            return same[0]
        same = [other for other in self.nodes.values() if node.text and other.text == node.text]
        return same[0] if len(same) == 1 else None


def _numbers(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",")) if text else ()


def normal_path(path: str) -> str:
    """A node path with the names the engine made up (`@Sprite@12`, `@@4`) written as `@`: their numbers differ."""
    return "/".join("@" if part.startswith("@") else part for part in path.split("/"))


def read_trace(path: Path) -> dict[int, Snapshot]:
    """trace.tsv of a played run: per traced frame, the drawn nodes by normalised path."""
    out: dict[int, Snapshot] = {}
    current: Snapshot | None = None
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
        parts = line.split("\t")
        if parts[0] == "F" and len(parts) >= 4:
            size = _numbers(parts[3])
            current = out.setdefault(int(parts[1]), Snapshot(int(parts[1]), parts[2].removeprefix("res://"),
                                                              (size[0], size[1]) if len(size) == 2 else (0.0, 0.0)))
        elif parts[0] == "N" and len(parts) >= 12 and current is not None:
            rect = _numbers(parts[7])
            key = normal_path(parts[1])
            current.nodes.setdefault(key, Drawn(
                key, parts[2], parts[3] == "1", _numbers(parts[4]), rect if len(rect) == 4 else None, parts[8],
                parts[9], parts[10], parts[12].removeprefix("res://") if len(parts) > 12 else ""))
    return out


def _internal3(path: str) -> bool:
    """Godot 3 lists the children engine classes add for themselves (`_v_scroll`); Godot 4 hides them."""
    return any(part.startswith("_") for part in path.split("/"))


def _font_size(font: str) -> tuple[str, float] | None:
    kind, _, size = font.partition(":")
    return (kind, float(size)) if size.replace(".", "", 1).isdigit() else None


def same_text(a: str, b: str) -> bool:
    """The same text, or the same text typed a frame or two apart (one a prefix of the other, a few letters off)."""
    short, long = sorted((a, b), key=len)
    return a == b or (bool(short) and long.startswith(short) and len(long) - len(short) <= TYPING)


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    return math.dist(a, b) if len(a) == len(b) and a else 0.0


# --- the play traces ----------------------------------------------------------------------------------------------


def _own_noise(runs: Sequence[dict[int, Snapshot]], frame: int, path: str) -> tuple[float, bool, bool]:
    """How far a node's own runs of one engine lie apart at a frame: distance, and whether its visibility or
    text differ between them."""
    seen = [run[frame].nodes.get(path) for run in runs if frame in run]
    seen = [s for s in seen if s is not None]
    if len(seen) < 2:
        return 0.0, False, False
    return (max(_distance(seen[0].where, s.where) for s in seen[1:]),
            any(s.visible != seen[0].visible for s in seen[1:]), any(s.text != seen[0].text for s in seen[1:]))


def compare_traces(original: Sequence[dict[int, Snapshot]], copy: Sequence[dict[int, Snapshot]],
                   limit: int = 20, laid_out: Callable[[str], bool] = lambda cls: False) -> dict:
    """The first traced frame where a node of the copy leaves the original beyond both engines' own noise
    (position, visibility, text, animation; a node missing), with the nodes that leave it there, and every
    node that ever leaves it with its first frame. `original` and `copy` are each engine's runs (the first
    is compared, the others give the noise). A node whose class `laid_out` (a Control, placed by its
    containers and the engine's default theme, which Godot 4 draws larger) is not judged by its position here:
    the frames judge where it is drawn."""
    frames = sorted(set(original[0]) & set(copy[0]))
    noise: dict[str, float] = {}        # running maximum: once an engine's own runs part, they stay apart
    noisy_state: set[str] = set()
    first: dict[str, dict] = {}
    for frame in frames:
        mine, theirs = original[0][frame], copy[0][frame]
        for path, node in mine.nodes.items():
            if _internal3(path):
                continue
            own_o = _own_noise(original, frame, path)
            own_c = _own_noise(copy, frame, path)
            noise[path] = max(noise.get(path, 0.0), own_o[0], own_c[0])
            if own_o[1] or own_o[2] or own_c[1] or own_c[2]:
                noisy_state.add(path)
            if path in first:
                continue
            other = theirs.counterpart(node)
            what = []
            if other is None and "/@" in f"/{path}":
                continue   # a child the engine made for itself (Godot 4 hides those it keeps internal)
            if other is None:
                what.append("missing in the copy")
            else:
                tol = (TRACE_TOL_3D if len(node.where) == 3 else TRACE_TOL) + noise[path]
                if _distance(node.where, other.where) > tol and not laid_out(node.cls):
                    what.append(f"at {_point(other.where)} where the original is at {_point(node.where)}")
                if path not in noisy_state:
                    if node.visible != other.visible:
                        what.append("shown" if other.visible else "hidden")
                    if not same_text(node.text, other.text):
                        what.append(f"text {other.text!r} where the original has {node.text!r}")
                if node.anim.split(":")[0] != other.anim.split(":")[0] and path not in noisy_state:
                    what.append(f"animation {other.anim or '(none)'} where the original plays {node.anim or '(none)'}")
            if what:
                first[path] = {"frame": frame, "node": path, "class": node.cls, "script": node.script,
                               "differs": "; ".join(what)}
    ordered = sorted(first.values(), key=lambda d: (d["frame"], d["node"]))
    start = ordered[0]["frame"] if ordered else None
    return {"frames_compared": len(frames), "last_frame": frames[-1] if frames else None,
            "first_divergence": start, "nodes_at_first": [d for d in ordered if d["frame"] == start][:limit],
            "nodes_diverging": len(ordered), "diverging": ordered[:limit],
            "within_noise_until": (max((f for f in frames if f < start), default=None) if start is not None
                                   else (frames[-1] if frames else None))}


def _point(where: Sequence[float]) -> str:
    return "(" + ", ".join(f"{v:g}" for v in where) + ")"


# --- the frames -----------------------------------------------------------------------------------------------------


def _grey(path: Path, size: tuple[int, int] | None = None) -> tuple[np.ndarray, tuple[int, int]]:
    """A frame as grey floats in [0, 1], resized to `size` when given; and its own size."""
    with Image.open(path) as image:
        own = image.size
        image = image.convert("L")
        if size is not None and image.size != size:
            image = image.resize(size, Image.BILINEAR)
        return np.asarray(image, dtype=np.float32) / 255.0, own


def ssim_map(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """SSIM per pixel (scikit-image's, Gaussian-weighted as in Wang et al.)."""
    from skimage.metrics import structural_similarity

    _score, full = structural_similarity(a, b, data_range=1.0, gaussian_weights=True, sigma=1.5,
                                         use_sample_covariance=False, full=True)
    return full


def _snapshot(trace: dict[int, Snapshot], frame: int) -> Snapshot | None:
    at = [f for f in trace if f <= frame]
    return trace[max(at)] if at else None


def _box(rect: Sequence[float], snapshot: Snapshot, shape: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """A canvas rect in the pixels of a compared frame (height, width), clipped; None when off screen."""
    if not snapshot.size[0] or not snapshot.size[1]:
        return None
    sx, sy = shape[1] / snapshot.size[0], shape[0] / snapshot.size[1]
    x0, y0 = max(0, int(rect[0] * sx)), max(0, int(rect[1] * sy))
    x1, y1 = min(shape[1], int(math.ceil((rect[0] + rect[2]) * sx))), min(shape[0], int(math.ceil((rect[1] + rect[3]) * sy)))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


@dataclass
class FramePair:
    """One frame of the original beside the copy's: the whole-frame SSIM, and what differs where."""

    frame: int
    scene: str
    ssim: float
    worst: float                                  # the lowest score of a region or tile compared
    findings: list[dict] = field(default_factory=list)   # {kind, node?, box, score?, what}
    image: str = ""

    @property
    def matches(self) -> bool:
        return not self.findings


def _region_findings(node: Drawn, other: Drawn | None, box: tuple[int, int, int, int],
                     other_box: tuple[int, int, int, int] | None, scores: np.ndarray, noisy: np.ndarray | None,
                     width: int) -> tuple[list[dict], float | None]:
    """What differs in one node's rect: drawn or not, where and how large, its text and font, its pixels."""
    found: list[dict] = []

    def add(kind: str, what: str, score: float | None = None) -> None:
        found.append({"kind": kind, "node": node.path, "class": node.cls, "script": node.script, "box": list(box),
                      **({"copy_box": list(other_box)} if other_box else {}), "what": what,
                      **({"score": round(score, 3)} if score is not None else {})})

    if other is None or not other.visible or other_box is None:
        add("not drawn", "missing in the copy" if other is None else "hidden in the copy" if not other.visible
            else "draws nothing in the copy" if other.rect is None else "off screen in the copy")
        return found, None
    moved = max(abs(box[0] - other_box[0]), abs(box[1] - other_box[1]))
    if moved > max(MOVED_PX, 0.01 * width):
        add("moved", f"drawn {moved} px away ({other_box[0]}, {other_box[1]} for {box[0]}, {box[1]})")
    for axis, name in ((0, "width"), (1, "height")):
        a, b = box[2 + axis] - box[axis], other_box[2 + axis] - other_box[axis]
        if min(a, b) > 0 and max(a, b) / min(a, b) > SIZE_RATIO:
            add("resized", f"{name} {b} px for {a}")
    if node.cls in TEXT or other.cls in TEXT:
        if not same_text(node.text, other.text):
            add("text", f"text {other.text!r} for {node.text!r}")
        mine, theirs = _font_size(node.font), _font_size(other.font)
        if mine and theirs and not (mine[0] == theirs[0] == "default") and \
                max(mine[1], theirs[1]) / max(min(mine[1], theirs[1]), 1) > FONT_RATIO:
            add("font", f"font size {theirs[1]:g} for {mine[1]:g}" + (" (the engine's default)" if theirs[0] == "default"
                                                                     else ""))
    score = None
    if node.cls in CONTENT:
        x0, y0, x1, y1 = box
        inside = scores[y0:y1, x0:x1]
        if noisy is not None:
            inside = inside[~noisy[y0:y1, x0:x1]]
        if inside.size:
            score = float(inside.mean())
            if score < PIXEL_FLOOR:
                add("pixels", f"drawn differently (SSIM {score:.2f} in its rect, noise floor {PIXEL_FLOOR})", score)
    return found, score


def compare_frame(frame: int, original: Path, copy: Path, original_trace: dict[int, Snapshot],
                  copy_trace: dict[int, Snapshot], twin: Path | None = None, nearby: Sequence[Path] = ()) -> FramePair:
    """One frame of the original (`original`, a PNG) beside the copy's; `twin` is the same frame of the original's
    second run: where the two runs of the original differ, the copy is not judged; `nearby` are the original's
    frames just before and after: each pixel is judged at its best alignment in time (a blink, a typing effect
    or a tween one frame apart is no difference)."""
    with Image.open(original) as image:
        full = image.size
    scale = min(1.0, WIDTH / full[0])
    size = (max(1, round(full[0] * scale)), max(1, round(full[1] * scale)))
    a, _ = _grey(original, size)
    b, copy_size = _grey(copy, size)
    scores = ssim_map(a, b)
    for other in nearby:
        scores = np.maximum(scores, ssim_map(_grey(other, size)[0], b))
    noisy = None
    if twin is not None and twin.is_file() and twin.read_bytes() != original.read_bytes():
        noisy = ssim_map(a, _grey(twin, size)[0]) < 0.99
    mine, theirs = _snapshot(original_trace, frame), _snapshot(copy_trace, frame)
    findings: list[dict] = []
    if copy_size != full:
        findings.append({"kind": "window", "box": [0, 0, size[0], size[1]],
                         "what": f"the copy's frame is {copy_size[0]}x{copy_size[1]} for {full[0]}x{full[1]}"})
    covered = np.zeros(scores.shape, dtype=bool)     # text and widgets: their pixels are the engines' own
    region_scores = []
    if mine is not None:
        for path, node in mine.nodes.items():
            if not node.visible or node.rect is None or _internal3(path):
                continue
            box = _box(node.rect, mine, scores.shape)
            if box is None or (box[2] - box[0]) * (box[3] - box[1]) < 36 or \
                    (box[2] - box[0]) * (box[3] - box[1]) > 0.6 * scores.size:
                continue
            other = theirs.counterpart(node) if theirs is not None else None
            other_box = _box(other.rect, theirs, scores.shape) if other is not None and other.rect else None
            found, score = _region_findings(node, other, box, other_box, scores, noisy, size[0])
            findings += found
            if score is not None:
                region_scores.append(score)
            if node.cls not in CONTENT:  # with a margin: widgets draw their borders and shadows past their rect
                for b in (box, other_box) if other_box else (box,):
                    covered[max(0, b[1] - MARGIN):b[3] + MARGIN, max(0, b[0] - MARGIN):b[2] + MARGIN] = True
    for row in range(GRID[1]):
        for column in range(GRID[0]):
            y0, y1 = row * scores.shape[0] // GRID[1], (row + 1) * scores.shape[0] // GRID[1]
            x0, x1 = column * scores.shape[1] // GRID[0], (column + 1) * scores.shape[1] // GRID[0]
            keep = ~covered[y0:y1, x0:x1]
            if noisy is not None:
                keep &= ~noisy[y0:y1, x0:x1]
            if keep.sum() < 0.5 * keep.size:
                continue
            score = float(scores[y0:y1, x0:x1][keep].mean())
            region_scores.append(score)
            if score < TILE_FLOOR and not _explained(findings, (x0, y0, x1, y1)):
                findings.append({"kind": "tile", "box": [x0, y0, x1, y1], "score": round(score, 3),
                                 "what": f"drawn differently (SSIM {score:.2f} in this tile, noise floor {TILE_FLOOR})"})
    return FramePair(frame, mine.scene if mine else "", round(float(scores.mean()), 4),
                     round(min(region_scores), 4) if region_scores else 1.0, findings)


def _explained(findings: Sequence[dict], box: Sequence[int]) -> bool:
    """Whether a tile lies on (or within SSIM's window of) a node already found to differ: its pixels are that
    node's difference."""
    for f in findings:
        for key in ("box", "copy_box"):
            other = f.get(key)
            if f.get("node") and other and other[0] - BLEED < box[2] and box[0] < other[2] + BLEED and \
                    other[1] - BLEED < box[3] and box[1] < other[3] + BLEED:
                return True
    return False


def picture(pair: FramePair, original: Path, copy: Path, out: Path) -> None:
    """original | copy | difference, each at the compared size, the regions that differ outlined in red."""
    with Image.open(original) as image:
        full = image.size
    scale = min(1.0, WIDTH / full[0])
    size = (max(1, round(full[0] * scale)), max(1, round(full[1] * scale)))
    a = Image.open(original).convert("RGB").resize(size)
    b = Image.open(copy).convert("RGB").resize(size)
    diff = np.abs(np.asarray(a, dtype=np.int16) - np.asarray(b, dtype=np.int16)).max(axis=2)
    heat = Image.fromarray(np.clip(diff * 4, 0, 255).astype(np.uint8)).convert("RGB")
    sheet = Image.new("RGB", (size[0] * 3 + 8, size[1]), (255, 255, 255))
    for i, panel in enumerate((a, b, heat)):
        sheet.paste(panel, (i * (size[0] + 4), 0))
    draw = ImageDraw.Draw(sheet)
    for f in pair.findings:
        for i, key in ((0, "box"), (1, "copy_box"), (2, "box")):
            box = f.get(key) or f.get("box")
            if box:
                x = i * (size[0] + 4)
                draw.rectangle([x + box[0], box[1], x + box[2] - 1, box[3] - 1], outline=(255, 40, 40), width=2)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)


def compare_plays(original: Sequence[Path], copy: Sequence[Path], out: Path, limit: int = 12,
                  laid_out: Callable[[str], bool] = lambda cls: False) -> dict:
    """Every kept frame and the traces of the original's plays (folders, first one compared) beside the
    copy's; the pictures of the worst frames go to `out`. Returns the figures and the frames, worst first.
    `laid_out`: whether a Godot 3 class is a Control (compare_traces)."""
    original_traces = [read_trace(p / "trace.tsv") for p in original]
    copy_traces = [read_trace(p / "trace.tsv") for p in copy]
    shots = sorted({int(p.stem[1:]) for p in original[0].glob("f*.png")} &
                   {int(p.stem[1:]) for p in copy[0].glob("f*.png")})
    pairs = []
    for frame in shots:
        name = f"f{frame:06d}.png"
        twin = original[1] / name if len(original) > 1 else None
        nearby = [p for d in range(-BURST_MAX, BURST_MAX + 1) if d
                  for p in (original[0] / f"b{frame + d:06d}.png", original[0] / f"f{frame + d:06d}.png") if p.is_file()]
        pairs.append(compare_frame(frame, original[0] / name, copy[0] / name, original_traces[0], copy_traces[0], twin,
                                   nearby))
    worst = sorted(pairs, key=lambda p: (p.matches, -len(p.findings), p.worst, p.frame))
    for pair in worst[:limit]:
        if pair.matches:
            break
        name = f"f{pair.frame:06d}.png"
        picture(pair, original[0] / name, copy[0] / name, out / name)
        pair.image = str(out / name)
    matched = sum(p.matches for p in pairs)
    kinds: dict[str, int] = {}
    nodes: dict[str, set[str]] = {}
    for p in pairs:
        for f in p.findings:
            kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
            if f.get("node"):
                nodes.setdefault(f["node"], set()).add(f["kind"])
    return {"frames_compared": len(pairs), "frames_matching": matched,
            "frames_matching_share": round(matched / len(pairs), 4) if pairs else None,
            "findings": kinds, "nodes_differing": len(nodes),
            "nodes": [{"node": n, "kinds": sorted(k)} for n, k in sorted(nodes.items())][:limit * 4],
            "noise_floor": {"pixels": PIXEL_FLOOR, "tiles": TILE_FLOOR},
            "frames": [{"frame": p.frame, "scene": p.scene, "ssim": p.ssim, "worst": p.worst, "matches": p.matches,
                        "findings": p.findings, "image": p.image} for p in worst],
            "trace": compare_traces(original_traces, copy_traces, laid_out=laid_out)}


def attach_manual(seen: dict, manual: dict[str, list[str]], renamed: dict[str, str]) -> None:
    """Each difference gets the manual items left in what draws it (`behind`): those of the node's script, else,
    for a font size, the scene's font items, else the scene's items naming the node. `manual` is each original
    file's manual items; `renamed` maps original paths to the copy's."""
    back = {new: old for old, new in renamed.items()}

    def items(path: str, about: Callable[[str], bool] = lambda what: True) -> list[dict]:
        original = back.get(path, path)
        return [{"path": original, "what": what} for what in manual.get(original, []) if about(what)][:3] \
            if path else []

    for frame in seen["frames"]:
        for finding in frame["findings"]:
            name = finding.get("node", "").rsplit("/", 1)[-1]
            about = (lambda what: "Font" in what) if finding["kind"] == "font" else \
                (lambda what, name=name: bool(name) and (f'"{name}"' in what or f"`{name}`" in what))
            finding["behind"] = items(finding.get("script", "")) or items(frame["scene"], about)
    for node in seen["trace"]["diverging"]:
        node["behind"] = items(node.get("script", ""))


# --- figures ------------------------------------------------------------------------------------------------------


def seen_figures(seen: dict | None, plays: dict[str, list], missing: str = "") -> dict:
    """The played run's figures for `status`, the report and the UI."""
    copy_plays = plays.get("copy", [])
    out = {"frames_missing": missing or None, "plays": {side: len(p) for side, p in plays.items()},
           "play_seconds": round(sum(p.seconds for side in plays.values() for p in side if not p.cached), 1),
           "plays_cached": sum(p.cached for side in plays.values() for p in side),
           "play_ended": copy_plays[0].ended if copy_plays else None,
           "play_original_ended": plays["original"][0].ended if plays.get("original") else None}
    if seen:
        trace = seen["trace"]
        out.update({k: seen[k] for k in ("frames_compared", "frames_matching", "frames_matching_share", "findings",
                                         "nodes_differing")})
        out.update({"trace_frames": trace["last_frame"], "first_divergence": trace["first_divergence"],
                    "nodes_diverging": trace["nodes_diverging"], "within_noise_until": trace["within_noise_until"]})
    return out


def seen_lines(f: dict) -> list[str]:
    """`frames matching the original: 4 of 6 (67%)`, and where the play leaves it."""
    if f.get("frames_missing") and not f.get("frames_compared"):
        return [f"frames and play: {f['frames_missing']}"]
    if "frames_compared" not in f:
        return []
    share = f["frames_matching_share"]
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(f["findings"].items(), key=lambda kv: -kv[1]))
    out = [f"frames matching the original (played with the same input): {f['frames_matching']} of "
           f"{f['frames_compared']}" + (f" ({share:.0%})" if share is not None else "") +
           (f"; differences: {kinds}, in {f['nodes_differing']} nodes" if kinds else "")]
    if f["first_divergence"] is None:
        out.append(f"play trace: within the engines' own noise for all {f['trace_frames'] or 0} frames")
    else:
        out.append(f"play trace: leaves the original at frame {f['first_divergence']} ({f['nodes_diverging']} nodes "
                   f"diverge in all)")
    cost = f"{f['play_seconds']} s" + (f", {f['plays_cached']} plays kept from before" if f["plays_cached"] else "")
    out.append(f"plays: {f['plays'].get('copy', 0)} of the copy, {f['plays'].get('original', 0)} of the original ({cost})")
    return out
