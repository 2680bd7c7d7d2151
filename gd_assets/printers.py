"""What the command line prints: one printer per document of `views` (the `--json` form is the document itself).
`out=None` prints to `sys.stdout` as it is at the call: in `gd-assets serve`, the stream of the client asking."""

from __future__ import annotations

import json
import time

from gd_assets import home, views
from gd_assets.core.cues import JUDGE_ONLY
from gd_assets.core.places import line_range, place


def print_fragments(doc: dict, out=None) -> None:
    rows = doc["fragments"]
    dumped = any(r["dump_start_line"] is not None for r in rows)
    width = max([len(r["key"]) for r in rows] + [3])
    print(f"{doc['project']}: {len(rows)} fragments", file=out)
    for r in rows:
        dump = line_range(r["dump_start_line"], r["dump_end_line"], "E") if dumped else ""
        print(f"  {r['key']:<{width}}  {line_range(r['start_line'], r['end_line']):>9}  {dump:>9}  {r['kind']}",
              file=out)
    if doc["excluded"]:
        print(f"excluded ({len(doc['excluded'])}):", file=out)
        for r in doc["excluded"]:
            print(f"  {r['path']}: {r['reason']}", file=out)


def print_show(doc: dict, out=None) -> None:
    t = doc["tracking"]
    print(f"fragment      {doc['key']}", file=out)
    print(f"current file  {t['path']}            (tracking only: never searched)", file=out)
    dump = f"   dump lines {line_range(t['dump_start_line'], t['dump_end_line'], 'E')}" if t["dump_start_line"] else ""
    print(f"line range    {line_range(t['start_line'], t['end_line'])}{dump}", file=out)
    print("\n--- body ---", file=out)
    print(doc["text"], file=out)
    print("\n--- cues (retriever input) ---", file=out)
    for c in doc["cues"]:
        note = ", judge only: not searched" if c["from"] in JUDGE_ONLY else ""
        print(f"  {c['cue']}   [{c['from']}{note}]", file=out)
    received = [c for c in doc["cues"] if c.get("receiver")]
    if received:
        print("\n--- receivers (judge only: from the project context) ---", file=out)
        for c in received:
            print(f"  {c['cue']}   [{c['from']}] -> {c['receiver']}", file=out)
    print(f"\n--- candidates ({len(doc['candidates'])}) ---", file=out)
    for c in doc["candidates"]:
        sparse = c["sparse_rank"] if c["sparse_rank"] is not None else "-"
        via = f"  via {c['via']}" if c.get("via") else ""
        print(f"  ({c['rank']:>2}) {c['table']:<16} {c['title'][:70]:<70} sparse#{sparse:<4} dense {c['dense_score']:.3f}"
              f"  score {c['score']:.3f}{via}", file=out)
    if "judgement" in doc:
        j = doc["judgement"]
        print("\n--- judgement ---", file=out)
        print(f"  {j['signal']}, migration {'needed' if j['migration_needed'] else 'not needed'}, "
              f"confidence {j['confidence']:.2f}  [{j['judge']}]", file=out)
        print(f"  {j['rationale']}", file=out)
    if doc.get("rewrite") and (doc["rewrite"]["edits"] or doc["rewrite"]["manual"]):
        r = doc["rewrite"]
        print("\n--- Godot 4 rewrite ---", file=out)
        for e in r["edits"]:
            cite = (e["evidence"] or {}).get("title", "no corpus row")
            print(f"  {e['start_line']}:{e['start_col']}  {e['old']!r} -> {e['new']!r}   [{e['rule']}; {cite}]", file=out)
        for m in r["manual"]:
            print(f"  by hand, lines {m['start_line']}-{m['end_line']}: {m['what']} ({m['why']})", file=out)
    if "lineage" in doc:
        print("\n--- lineage ---", file=out)
        for name, value in doc["lineage"].items():
            print(f"  {name}: {value}", file=out)


def print_migration(doc: dict, out=None) -> None:
    kinds = ", ".join(f"{n} {k}" for k, n in doc["manual_by_kind"].items()) or "none"
    print(f"{doc['project']}: {doc['files_changed']} files changed, {len(doc['edits'])} edits; "
          f"left to do by hand: {len(doc['manual'])} ({kinds})", file=out)
    for f in doc["files"][:40]:
        note = f"  ({f['problem']})" if f["problem"] else ""
        print(f"  {f['path']}: {f['edits']} edits, {sum(f['manual'].values())} manual{note}", file=out)
    if len(doc["files"]) > 40:
        print(f"  … {len(doc['files']) - 40} more files (see --json)", file=out)
    for old, new in doc.get("renamed", {}).items():
        print(f"  renamed: {old} -> {new}", file=out)
    print(f"  migrated copy: {doc['out']}\n  patch: {doc['patch']}", file=out)


def print_verdict(doc: dict, out=None) -> None:
    c = doc["counts"]
    print(f"{doc['project']}: {doc['verdict']} (confidence {doc['confidence']:.2f})", file=out)
    print(f"  {doc['explanation']}", file=out)
    print(f"  {c['fragments']} fragments: {c['godot3']} Godot 3, {c['godot4']} Godot 4, {c['neutral']} neutral, "
          f"{c['migration_needed']} need migration", file=out)
    todo = [f for f in doc["fragments"] if f["migration_needed"]]
    if todo:
        print("  needs migration:", file=out)
        for f in todo[:40]:
            print(f"    {place(f)}  {f['key'].split('::', 1)[-1]}: {f['rationale'][:110]}", file=out)
        if len(todo) > 40:
            print(f"    … {len(todo) - 40} more (see the report or --json)", file=out)
    print(f"  report: {home.reports_dir() / (doc['project'] + '.html')}", file=out)


def print_status(doc: dict, out=None) -> None:
    """The seed's view: `player.gd E016-E018  stopped`, one line per fragment in file order."""
    places = [place(r, short=True) for r in doc["fragments"]]
    width = max(len(p) for p in places)
    for where, r in zip(places, doc["fragments"]):
        print(f"{where:<{width}}  {r['status']}", file=out)
    c = doc["counts"]
    print(f"{len(places)} fragments: " + ", ".join(f"{c[k]} {k}" for k in (*views.STATES, "stale")), file=out)
    if doc.get("stages"):
        print("by stage: " + "; ".join(f"{stage} {n['done']} done" + "".join(
            f", {n[k]} {k}" for k in views.STATES[1:-1] if n[k]) for stage, n in doc["stages"].items()), file=out)
    for worker, w in (doc.get("workers") or {}).items():
        stages = "; ".join(f"{stage} " + ", ".join(f"{n:,} {status.lower()}" for status, n in by.items())
                           for stage, by in w["fragments"].items())
        lost = f"; {w['lost']} block(s) handed to another worker" if w["lost"] else ""
        print(f"worker {worker}: {len(w['blocks'])} block(s)" + (f", {stages}" if stages else "") + lost, file=out)
    if doc.get("symbols"):
        print("project context: " + ", ".join(f"{n} {k}" for k, n in doc["symbols"].items()), file=out)
    if doc.get("verification"):
        v = doc["verification"]
        print(f"Godot {v['godot']} on the migrated copy ({v['verified_at']}): " + "; ".join(v["lines"]), file=out)


def print_hits(hits: list[dict], out=None) -> None:
    for h in hits:
        print(f"{h['score']:7.3f}  {h['table']:<16} {h['id']}\n         {h['title']}", file=out)


def print_db(doc: dict, out=None) -> None:
    where = doc["url"] if doc["url"] else "sqlite in the data home"
    print(f"instance: {doc['instance']} ({where}{', from ' + doc['from'] if doc['from'] else ''})", file=out)
    if doc["cluster"]:
        print(f"local cluster: {doc['cluster']} ({'running' if doc['running'] else 'stopped'}; log {doc['log']})",
              file=out)
    print(f"store: {doc['store']}" + (f" (catalog in the instance's PostgreSQL, data {doc['lake']})" if doc["lake"]
                                      else f" ({home.projects_db_path()})"), file=out)
    if "maintenance" in doc:
        print(f"maintenance: {json.dumps(doc['maintenance'])}", file=out)


def print_verification(doc: dict, out=None) -> None:
    """The figures, the causes, then each failing file with its first error."""
    f = doc["figures"]
    print(f"{doc['project']}: Godot {doc['godot']} on a scratch copy of {doc['copy']}", file=out)
    for line in doc["lines"]:
        print(f"  {line}", file=out)
    if f.get("causes"):
        print("  problems by cause: " + ", ".join(f"{n} {c}" for c, n in f["causes"].items()), file=out)
    through = f.get("through", {})
    for path, error in list(f.get("failing", {}).items())[:40]:
        if path in through:
            print(f"    {path}: fails through {through[path]}", file=out)
            continue
        also = sum(1 for root in through.values() if root == path)
        print(f"    {path}: {error[:140]}" + (f" (and {also} script{'s' if also != 1 else ''} through it)"
                                                if also else ""), file=out)
    if len(f.get("failing", {})) > 40:
        print(f"    … {len(f['failing']) - 40} more (see --json)", file=out)
    run = doc.get("run")
    if run:
        if run["original"] is None and run["original_missing"]:
            print(f"  the original did not run beside it: {run['original_missing']}", file=out)
        new = [e for e in run["errors"] if not e.get("own")]
        for e in new[:20]:
            where = f"{e['path']}:{e['line']}" if e["line"] else (e["path"] or "?")
            print(f"    {e['scene'] or 'main'}: {where}: {e['message'][:120]} ({e['cause']})", file=out)
        if len(new) > 20:
            print(f"    … {len(new) - 20} more runtime errors (see --json)", file=out)
    print(f"  report: {home.reports_dir() / (doc['project'] + '.verify.md')}", file=out)


def print_server(doc: dict, out=None) -> None:
    if not doc["running"]:
        print(f"stopped server {doc['stopped']} of {doc['home']}" if doc.get("stopped")
              else f"no server for {doc['home']} (socket {doc['socket']})", file=out)
        return
    doing = f"running `gd-assets {doc['busy']}`" if doc["busy"] else "idle"
    print(f"server {doc['pid']} for {doc['home']} since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(doc['since']))}: "
          f"{doc['served']} commands served, {doing} (socket {doc['socket']})", file=out)
