"""The migration report: Markdown, and one self-contained HTML page (no external assets)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Mapping, Sequence

from gd_assets.core.places import place
from gd_assets.core.rewrite import fragment_diff

COLORS = {"godot3": "#d9534f", "godot4": "#3c8dbc", "neutral": "#bbbbbb"}


def _evidence(f: Mapping) -> list[dict]:
    value = f.get("evidence")
    return json.loads(value) if isinstance(value, str) else list(value or [])


def _manual(f: Mapping) -> list[dict]:
    value = f.get("manual")
    return json.loads(value) if isinstance(value, str) else list(value or [])


def _diff(f: Mapping) -> str:
    new = f.get("new_text")
    return fragment_diff(f, new) if new is not None and new != f["text"] else ""


_CODE = re.compile(r"`([^`\n]+)`")


def inline(text: str) -> str:
    """HTML of a sentence whose `backticked` parts are code."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text))


def markdown(summary: Mapping, fragments: Sequence[Mapping]) -> str:
    c = summary["counts"]
    lines = [f"# Migration report: {summary['project']}", "",
             f"**Verdict: {summary['verdict']}** (confidence {summary['confidence']:.2f})", "",
             summary["explanation"], "",
             f"{c['fragments']} fragments: {c['godot3']} Godot 3, {c['godot4']} Godot 4, {c['neutral']} neutral; "
             f"{c['migration_needed']} need migration.", "", "## Files", "",
             "| file | verdict | Godot 3 | Godot 4 | neutral | migration |", "|---|---|---|---|---|---|"]
    lines += [f"| {f['path']} | {f['verdict']} | {f['godot3']} | {f['godot4']} | {f['neutral']} | {f['migration_needed']} |"
              for f in summary["files"]]
    todo = [f for f in fragments if f["migration_needed"]]
    lines += ["", f"## Fragments that need migration ({len(todo)})", ""]
    for f in todo:
        lines += [f"### {place(f)}", "", f"`{f['key']}` — {f['signal']}, confidence {f['confidence']:.2f}", "",
                  f["rationale"], ""]
        ev = _evidence(f)
        if ev:
            lines += [f"- ({e['n']}) {e['table']}: {e['title']}" for e in ev] + [""]
        diff = _diff(f)
        if diff:
            lines += ["Godot 4 rewrite:", "", "```diff", diff, "```", ""]
        else:
            lines += ["```gdscript", f["text"], "```", ""]
        manual = _manual(f)
        if manual:
            lines += ["Left to do by hand:", ""] + [
                f"- lines {m['start_line']}-{m['end_line']} ({m['kind']}): {m['what']}. {m['why']}" for m in manual] + [""]
    return "\n".join(lines)


def _bar(f: Mapping) -> str:
    total = max(1, f["godot3"] + f["godot4"] + f["neutral"])
    parts = "".join(
        f'<span style="width:{100 * f[s] / total:.1f}%;background:{COLORS[s]}" title="{s}: {f[s]}"></span>'
        for s in ("godot3", "godot4", "neutral") if f[s])
    return f'<div class="bar">{parts}</div>'


def _diff_html(diff: str) -> str:
    out = []
    for line in diff.split("\n"):
        cls = "add" if line.startswith("+") and not line.startswith("+++") else (
            "del" if line.startswith("-") and not line.startswith("---") else "")
        out.append(f"<span class='{cls}'>{html.escape(line)}</span>" if cls else html.escape(line))
    return "\n".join(out)


def html_page(summary: Mapping, fragments: Sequence[Mapping]) -> str:
    esc = html.escape
    c = summary["counts"]
    rows = "".join(
        f"<tr><td>{esc(f['path'])}</td><td>{esc(f['verdict'])}</td><td>{_bar(f)}</td>"
        f"<td>{f['godot3']}</td><td>{f['godot4']}</td><td>{f['neutral']}</td><td>{f['migration_needed']}</td></tr>"
        for f in summary["files"])
    items = []
    for f in fragments:
        if not f["migration_needed"]:
            continue
        ev = "".join(f"<li>({e['n']}) {esc(e['table'])}: {inline(e['title'])}</li>" for e in _evidence(f))
        diff = _diff(f)
        body = (f"<p>Godot 4 rewrite:</p><pre class='diff'>{_diff_html(diff)}</pre>" if diff
                else f"<pre>{esc(f['text'])}</pre>")
        manual = "".join(f"<li>lines {m['start_line']}-{m['end_line']} ({esc(m['kind'])}): {inline(m['what'])}. "
                         f"{inline(m['why'])}</li>" for m in _manual(f))
        items.append(
            f"<section><h3>{esc(place(f))}</h3><p><code>{esc(f['key'])}</code> — {esc(f['signal'])}, "
            f"confidence {f['confidence']:.2f}</p><p>{inline(f['rationale'])}</p>"
            f"{'<ul>' + ev + '</ul>' if ev else ''}{body}"
            f"{'<p>Left to do by hand:</p><ul>' + manual + '</ul>' if manual else ''}</section>")
    style = ("body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3em;text-align:left}"
             ".bar{display:flex;width:14em;height:.9em;background:#eee}.bar span{display:block;height:100%}"
             "pre{background:#f6f6f6;padding:.6em;overflow:auto}section{border-top:1px solid #ccc;margin-top:1em}"
             ".diff .add{background:#e6ffec}.diff .del{background:#ffebe9}"
             "code{background:#f0f0f0;padding:0 .2em}")
    legend = " ".join(f'<span style="color:{v}">■</span> {k}' for k, v in COLORS.items())
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Migration report: {esc(summary['project'])}"
            f"</title><style>{style}</style></head><body><h1>Migration report: {esc(summary['project'])}</h1>"
            f"<p><b>Verdict: {esc(summary['verdict'])}</b> (confidence {summary['confidence']:.2f})</p>"
            f"<p>{inline(summary['explanation'])}</p><p>{c['fragments']} fragments: {c['godot3']} Godot 3, "
            f"{c['godot4']} Godot 4, {c['neutral']} neutral; {c['migration_needed']} need migration.</p>"
            f"<h2>Files</h2><p>{legend}</p><table><tr><th>file</th><th>verdict</th><th>signals</th><th>G3</th>"
            f"<th>G4</th><th>neutral</th><th>migration</th></tr>{rows}</table>"
            f"<h2>Fragments that need migration ({len(items)})</h2>{''.join(items)}</body></html>")


def verification_markdown(project: str, figures: Mapping, lines: Sequence[str], problems: Sequence[Mapping],
                          run: Mapping | None = None, limit: int = 400) -> str:
    """What Godot 4 said about the migrated copy: the figures, then each problem with where it comes from;
    with a game run, its errors and where it differs from the original's."""
    out = [f"# Godot 4 verification: {project}", "", f"Godot {figures['godot']}.", ""]
    out += [f"- {line}" for line in lines]
    if figures.get("causes"):
        out += ["", "## By cause", "", "| cause | problems |", "|---|---|"]
        out += [f"| {cause} | {n} |" for cause, n in figures["causes"].items()]
    through = figures.get("through") or {}
    roots = [p for p in figures.get("failing", {}) if p.endswith(".gd") and p not in through]
    if roots:  # fix these first: every other failing script fails through one of them
        out += ["", f"## Scripts failing on their own ({len(roots)}), the others through them", "",
                "| script | first error | scripts failing through it |", "|---|---|---|"]
        for path in roots:
            users = sorted(p for p, root in through.items() if root == path)
            shown = ", ".join(users[:8]) + (f" and {len(users) - 8} more" if len(users) > 8 else "")
            out.append(f"| {path} | {_cell(figures['failing'][path])} | {_cell(shown, 400)} |")
    if figures.get("asset_only"):
        out += ["", "Failing only for a missing binary asset (not the migration's): " +
                ", ".join(sorted(figures["asset_only"])) + "."]
    out += ["", f"## Problems ({len(problems)})", "", "| file | line | problem | fragment | cause |", "|---|---|---|---|---|"]
    for p in problems[:limit]:
        message = p["message"].replace("|", "\\|")[:200]
        out.append(f"| {p['path']} | {p['line'] or ''} | {message} | {p['fragment'] or ''} | {p['cause']} |")
    if len(problems) > limit:
        out.append(f"\n… {len(problems) - limit} more (`gd-assets verify {project} --json`)")
    if run is not None:
        out += run_markdown(run, limit)
        if run.get("seen"):
            out += seen_markdown(run["seen"], f"{project}.frames")
    return "\n".join(out) + "\n"


def _cell(text: object, width: int = 160) -> str:
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")[:width]


def run_markdown(run: Mapping, limit: int = 400) -> list[str]:
    """The game run's section: how it ran (the sandbox), the copy's runtime errors with their fragment, edit
    and whether the original had them, then where the copy's run differs from the original's."""
    copy = run["copy"]
    out = ["", "## The game run", "", f"Godot {copy['engine']}, {run['sandbox']}.", ""]
    if run["original"] is None:
        out += [f"The original did not run beside the copy: {run['original_missing'] or 'not asked'}.", ""]
    errors = run["errors"]
    out += [f"### Runtime errors of the copy ({len(errors)})", "",
            "| scene | file | line | error | fragment | edits | cause | the original's too |", "|---|---|---|---|---|---|---|---|"]
    for e in sorted(errors, key=lambda e: e.get("own", False))[:limit]:
        edits = ", ".join(x["rule"] for x in e.get("edits", []))
        out.append(f"| {_cell(e['scene'] or 'main')} | {_cell(e['path'])} | {e['line'] or ''} | {_cell(e['message'])} | "
                   f"{_cell(e['fragment'])} | {_cell(edits)} | {e['cause']} | {'yes' if e.get('own') else ''} |")
    comparison = run.get("comparison")
    if comparison:
        share = comparison["nodes_matched_share"]
        out += ["", "### Beside the original", "",
                f"- the original's nodes after {comparison['frames_original']} frames: {comparison['nodes_original']}; "
                f"the copy has {comparison['nodes_matched']} of them with the same class and script"
                + (f" ({share:.0%})" if share is not None else "") + f", and {comparison['nodes_copy']} nodes in all",
                f"- the original ended: {comparison['original_ended']}; the copy: {comparison['copy_ended']}"]
        for label, key, cols in (("Nodes missing", "nodes_missing", ("node", "class", "script")),
                                 ("Nodes of another class or script", "nodes_other", ("node", "original", "copy")),
                                 ("Visibility differs", "visibility_differs", ("node", "original", "copy")),
                                 ("Moved", "moved", ("node", "original", "copy"))):
            rows = comparison[key]
            if rows:
                out += ["", f"#### {label} ({comparison[key + '_count']})", "", "| " + " | ".join(cols) + " |",
                        "|" + "---|" * len(cols)]
                out += ["| " + " | ".join(_cell(r[c]) for c in cols) + " |" for r in rows]
        for label, key in (("Printed by the original only", "prints_only_original"),
                           ("Printed by the copy only", "prints_only_copy")):
            if comparison[key]:
                out += ["", f"#### {label}", "", "```", *comparison[key], "```"]
    return out


_SECTION_MARK = "<!-- godot4-verification -->"


def with_verification(report: str, godot: str, lines: Sequence[str], is_html: bool, seen: Mapping | None = None,
                      pictures: str = "") -> str:
    """A project's report with its Godot 4 verification section (replacing an earlier one), at the end; with
    `seen`, the worst frames of the played run, original | copy | difference (images under `pictures`)."""
    report = report.split(_SECTION_MARK, 1)[0].removesuffix("</body></html>")
    if is_html:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        return (f"{report}{_SECTION_MARK}<h2>Godot 4 verification</h2><p>Godot {html.escape(godot)} on a scratch "
                f"copy of the migrated project:</p><ul>{items}</ul>{seen_html(seen, pictures) if seen else ''}"
                "</body></html>")
    return (f"{report.rstrip()}\n\n{_SECTION_MARK}\n## Godot 4 verification\n\nGodot {godot} on a scratch copy of "
            "the migrated project:\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"
            + ("\n".join(seen_markdown(seen, pictures)) + "\n" if seen else ""))


def _finding(f: Mapping) -> str:
    where = f"{f['node']} ({f['class']})" if f.get("node") else "tile " + ",".join(str(v) for v in f["box"])
    behind = "; ".join(f"{b['path']}: {b['what']}" for b in f.get("behind", []))
    return f"{where}: {f['what']}" + (f" [manual: {behind}]" if behind else "")


def seen_markdown(seen: Mapping, pictures: str, limit: int = 12) -> list[str]:
    """The played run's section: the frames that differ most, each with what differs, then where the play
    trace leaves the original's."""
    out = ["", "## Seen and played beside the original", ""]
    worst = [f for f in seen["frames"] if not f["matches"]][:limit]
    if not worst:
        out.append(f"All {seen['frames_compared']} frames compared match the original within the engines' noise.")
    for f in worst:
        out += [f"### Frame {f['frame']} ({f['scene'] or 'no scene'}): SSIM {f['ssim']}, worst region {f['worst']}", ""]
        if f["image"]:
            out += [f"![original | copy | difference]({pictures}/{Path(f['image']).name})", ""]
        out += [f"- {_cell(_finding(x), 400)}" for x in f["findings"][:20]]
        out.append("")
    trace = seen["trace"]
    out += ["### The play trace", ""]
    if trace["first_divergence"] is None:
        out.append(f"Within the engines' own noise for all {trace['last_frame'] or 0} traced frames.")
    else:
        out += [f"The copy first leaves the original at frame {trace['first_divergence']}; "
                f"{trace['nodes_diverging']} nodes leave it in all.", "", "| frame | node | class | script | differs |",
                "|---|---|---|---|---|"]
        out += [f"| {d['frame']} | {_cell(d['node'])} | {d['class']} | {_cell(d['script'])} | {_cell(d['differs'], 300)} |"
                for d in trace["diverging"]]
    return out


def seen_html(seen: Mapping, pictures: str, limit: int = 12) -> str:
    """The worst frames, original | copy | difference with the differing regions outlined, worst first."""
    parts = ["<h3>Seen and played beside the original</h3>"]
    worst = [f for f in seen["frames"] if not f["matches"]][:limit]
    if not worst:
        parts.append(f"<p>All {seen['frames_compared']} frames compared match the original within the engines' "
                     "noise.</p>")
    for f in worst:
        parts.append(f"<h4>Frame {f['frame']} ({html.escape(f['scene'] or 'no scene')}): SSIM {f['ssim']}, worst "
                     f"region {f['worst']}</h4>")
        if f["image"]:
            parts.append(f'<p><img alt="original | copy | difference" src="{html.escape(pictures)}/'
                         f'{html.escape(Path(f["image"]).name)}"><br>original | copy | difference</p>')
        parts.append("<ul>" + "".join(f"<li>{html.escape(_finding(x))}</li>" for x in f["findings"][:20]) + "</ul>")
    trace = seen["trace"]
    if trace["first_divergence"] is not None:
        rows = "".join(f"<tr><td>{d['frame']}</td><td>{html.escape(d['node'])}</td><td>{d['class']}</td>"
                       f"<td>{html.escape(d['script'])}</td><td>{html.escape(d['differs'])}</td></tr>"
                       for d in trace["diverging"])
        parts.append(f"<p>The play trace first leaves the original at frame {trace['first_divergence']} "
                     f"({trace['nodes_diverging']} nodes in all):</p><table><tr><th>frame</th><th>node</th>"
                     f"<th>class</th><th>script</th><th>differs</th></tr>{rows}</table>")
    else:
        parts.append(f"<p>The play trace stays within the engines' own noise for all {trace['last_frame'] or 0} "
                     "traced frames.</p>")
    return "".join(parts)
