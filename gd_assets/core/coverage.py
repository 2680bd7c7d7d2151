"""How much of Godot 3's API the migration answers: every name of the 3.x class reference that Godot 4 does
not have under the same name on the same class, and what the pipeline does with a use of it.

The answer is never claimed by a list: each name is used in a small Godot 3 project (a typed receiver and
a call, read, connection or type use; a setting in project.godot) and that project goes through the
pipeline's own judge and rewrite. What they wrote on the name's line is the answer: a rename (the name
replaced by a row of the rename map or the class references), a call-shape rule (the call rewritten), a
behaviour rule (a rewrite that keeps what Godot 3 did), a manual item (what to do by hand, with its row),
or nothing: the name is unanswered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gd_assets.core.corpus.surface import GLOBAL_CLASSES, Surface, split_args
from gd_assets.core.quick_migrate import migrate_files
from gd_assets.core.rewrite.answers import GONE

KINDS = ("class", "method", "property", "signal", "constant", "global_function", "global_constant",
         "project_setting")
ANSWERS = ("rename", "moved", "call_shape", "behaviour", "manual", "none")
# Rules that rename the name itself; those that move it to another class; the rest rewrite the call.
RENAME_RULES = {"member_rename", "method_rename", "virtual_renamed", "global_rename", "class_rename", "color_rename",
                "builtin_type_rename", "signal_rename", "property_rename", "setting_rename", "tween_property",
                "viewport_hdr"}
MOVED_RULES = {"member_moved", "inherited_constant"}
# Rules that rewrite a call around a name without answering for the name itself.
KEEPS_NAME = {"signal_callable", "await_coroutine", "yield_to_await"}
BEHAVIOUR_RULES = re.compile(r"^(tween|tilemap|camera|array_slice|float_result|group_call|parent_callback|string_|"
                             r"angle_to|translated|move_and_collide|color_html)")
# A value of each Godot 3 parameter type for a probe call (objects: null).
_VALUES = {"int": "0", "float": "0.0", "bool": "false", "String": '""', "Vector2": "Vector2()",
           "Vector3": "Vector3()", "Color": "Color()", "Rect2": "Rect2()", "NodePath": "NodePath()", "Array": "[]",
           "Dictionary": "{}", "Transform": "Transform()", "Transform2D": "Transform2D()", "RID": "RID()"}
SETTINGS_CLASSES = ("ProjectSettings", "EditorSettings")


@dataclass(frozen=True)
class GoneName:
    """A Godot 3 name that Godot 4 lacks where Godot 3 had it."""

    kind: str         # one of KINDS
    cls: str          # the Godot 3 class (`@GlobalScope` for globals)
    name: str         # the member, or the class itself for `class`
    cls4: str | None  # the Godot 4 class the Godot 3 one became (None: removed)
    signature: str    # Godot 3's signature

    @property
    def id(self) -> str:
        return f"cov:{self.kind}:{self.cls}.{self.name}" if self.kind != "class" else f"cov:class:{self.name}"

    @property
    def row(self) -> str:
        """The api_mapping row saying the name is gone (the surface diff's)."""
        if self.kind == "class":
            return f"map:diff:class:{self.name}"
        kind = {"global_function": "method", "global_constant": "constant", "project_setting": "property"}.get(
            self.kind, self.kind)
        return f"map:diff:{kind}:{self.cls}.{self.name}"


@dataclass(frozen=True)
class Answer:
    kind: str         # one of ANSWERS
    rule: str         # the rewrite rule (or manual item kind) that answered
    godot4: str       # what the line became, or the manual item's text
    evidence: str     # the corpus row the answer cites


def gone_names(surface: Surface, signatures: dict[tuple[str, str, str], str]) -> list[GoneName]:
    """Every Godot 3 class, member, global and project setting that Godot 4 does not have under the same name
    on the same class (through Godot 4's name for the class and its ancestors). `signatures` maps
    (class, kind, name) to Godot 3's signature."""
    out: list[GoneName] = []
    globals4 = lambda kind, name: surface.is_global_function("4", name) if kind == "method" else (  # noqa: E731
        surface.is_global_constant("4", name))
    for cls in sorted(surface.classes["3"]):
        if cls in GLOBAL_CLASSES:
            continue
        cls4 = surface.class4(cls)
        if cls4 is None:
            out.append(GoneName("class", cls, cls, None, signatures.get((cls, "class", ""), f"class {cls}")))
    for (version, cls, name), kinds in sorted(surface.kinds.items()):
        if version != "3" or name == cls:
            continue
        for kind in sorted(kinds & {"method", "property", "signal", "constant"}):
            sig = signatures.get((cls, kind, name), "")
            if cls in GLOBAL_CLASSES:
                if kind in ("method", "constant") and not globals4(kind, name):
                    out.append(GoneName(f"global_{'function' if kind == 'method' else 'constant'}", cls, name,
                                        None, sig))
                continue
            cls4 = surface.class4(cls)
            if cls4 is None:
                continue  # the class's own row answers for its members
            if cls == "ProjectSettings" and kind == "property":
                if not surface.kept(cls4, name, kind):
                    out.append(GoneName("project_setting", cls, name, cls4, sig))
                continue
            if cls == "EditorSettings" and kind == "property":
                continue  # editor preferences, not a game's API
            if "/" in name:
                continue  # a grouped property (`collision/safe_margin`): read by scenes, not by code
            if not surface.kept(cls4, name, kind):
                out.append(GoneName(kind, cls, name, cls4, sig))
    return out


def _args(signature: str) -> str:
    match = re.search(r"\((.*)\)", signature or "")
    values = []
    for part in split_args(match.group(1)) if match else []:
        part = part.strip()
        if "=" in part or part.startswith("..."):
            break
        values.append(_VALUES.get(part.split(":")[-1].strip(), "null"))
    return ", ".join(values)


def probe_files(gone: GoneName, singletons: set[str], virtual: bool = False) -> tuple[dict[str, str], str, int]:
    """A Godot 3 project using `gone` once: its files, the file and the line (1-based) of the use. A virtual
    method is used as a script uses one: overridden by a script of its class."""
    project = {"project.godot": "config_version=4\n"}
    if virtual:
        params = ", ".join(p.split(":")[0].strip() for p in split_args(re.search(r"\((.*)\)", gone.signature).group(1)))
        project["probe.gd"] = f"extends {gone.cls}\n\nfunc {gone.name}({params}):\n\tpass\n"
        return project, "probe.gd", 3
    if gone.kind == "project_setting":
        section, _, key = gone.name.partition("/")
        project["project.godot"] += f"\n[{section}]\n\n{key}=null\n"
        return project, "project.godot", 5
    static = gone.cls in singletons
    head = "extends Node\n\n"
    if gone.kind == "class":
        head += f"var probe: {gone.name}\n\nfunc _ready():\n\tprint(probe)\n"
        project["probe.gd"] = head
        return project, "probe.gd", 3
    receiver = gone.cls if static else "probe"
    if not static and gone.kind not in ("global_function", "global_constant", "constant"):
        head += f"var probe: {gone.cls}\n\n"
    use = {
        "method": f"print({receiver}.{gone.name}({_args(gone.signature)}))",
        "property": f"print({receiver}.{gone.name})",
        "signal": f'{receiver}.connect("{gone.name}", self, "_on_probe")',
        "constant": f"print({gone.cls}.{gone.name})",
        "global_function": f"print({gone.name}({_args(gone.signature)}))",
        "global_constant": f"print({gone.name})",
    }[gone.kind]
    text = head + "func _ready():\n\t" + use + "\n"
    project["probe.gd"] = text
    return project, "probe.gd", text.count("\n")


def classify(gone: GoneName, edits: list, manual: list, line: int, flagged: bool) -> Answer:
    """What the pipeline wrote on the use's line: an edit that replaced the name, a manual item, or nothing."""
    word = re.compile(rf"\b{re.escape(gone.name.rpartition('/')[2])}\b")
    for m in manual:
        if m["start_line"] <= line <= m["end_line"]:
            cite = next((e["id"] for e in m["evidence"] if e), "")
            # a manual item that only says the name is gone is said, not answered
            return Answer("none" if m["kind"] == GONE else "manual", m["kind"], f"{m['what']}: {m['why']}", cite)
    for e in edits:
        if not (e["start_line"] <= line <= e["end_line"]) or not word.search(e["old"]) or e["new"] == e["old"]:
            continue
        kept = e["new"].lstrip().startswith(f"{gone.name}.") if gone.kind == "signal" else e["rule"] in KEEPS_NAME
        if word.search(e["new"]) and kept:
            continue  # `connect("gone", ...)` -> `gone.connect(...)`: the call's shape, not the name's answer
        rule = e["rule"]
        if gone.kind == "signal" and rule == "signal_callable":  # the connection rewritten with the new name
            rule = "signal_rename"
        kind = ("rename" if rule in RENAME_RULES else "moved" if rule in MOVED_RULES else
                "behaviour" if BEHAVIOUR_RULES.match(rule) else "call_shape")
        return Answer(kind, rule, e["new"].strip(), (e["evidence"] or {}).get("id", ""))
    wrapped = next((e for e in edits if e["rule"] == "virtual_wrapped" and word.search(e["new"])), None)
    if wrapped is not None:  # the Godot 4 virtual added after the method, calling it (rewrite/native_overrides.py)
        return Answer("behaviour", wrapped["rule"], wrapped["new"].strip(), (wrapped["evidence"] or {}).get("id", ""))
    shim = next((e for e in edits if e["rule"] == "godot3_class_shim" and f"class {gone.cls}:" in e["new"]), None)
    if shim is not None:  # a member of the class the script gets as its own (rewrite/behaviour.SHIMS)
        return Answer("behaviour", shim["rule"], f"{gone.cls}.{gone.name} of the script's own class {gone.cls}",
                      (shim["evidence"] or {}).get("id", ""))
    return Answer("none", "" if flagged else "not flagged", "", "")


def probe(gone: GoneName, rules, singletons: set[str], judge=None) -> Answer:
    """The pipeline's answer to one use of `gone` (see `classify`)."""
    virtual = gone.kind == "method" and ("3", gone.cls, gone.name) in rules.surface.virtuals
    files, path, line = probe_files(gone, singletons, virtual)
    kinds = {"project.godot": "project"}
    done = migrate_files("coverage", [{"path": p, "kind": kinds.get(p, "gdscript"), "text": t}
                                      for p, t in files.items()], rules, judge)
    prefix = f"coverage/{path}::"
    flagged = any(j["migration_needed"] for k, j in done.judgements.items() if k.startswith(prefix))
    edits = [vars(e) for e in done.edits.get(path, [])]
    manual = [m for k, r in done.rewrites.items() if k.startswith(prefix) for m in r["manual"]]
    return classify(gone, edits, manual, line, flagged)


def singleton_classes(surface: Surface) -> set[str]:
    """Godot 3's engine singletons (`OS`, `Engine`): @GlobalScope properties typed with their own class."""
    return {c for c in surface.classes["3"] if surface.types.get(("3", "@GlobalScope", c)) == c}


def coverage_rows(rules, signatures: dict[tuple[str, str, str], str], progress=None) -> list[dict]:
    """One row per gone Godot 3 name with the pipeline's answer (the `api_coverage` table)."""
    from gd_assets.core.judges.evidence import EvidenceJudge

    surface = rules.surface
    singletons = singleton_classes(surface)
    judge = EvidenceJudge(surface=surface)
    names = gone_names(surface, signatures)
    rows = []
    for i, gone in enumerate(names):
        answer = probe(gone, rules, singletons, judge)
        rows.append({"id": gone.id, "kind": gone.kind, "class_name": gone.cls, "name": gone.name,
                     "godot4_class": gone.cls4, "godot3_signature": gone.signature, "gone_row": gone.row,
                     "answer": answer.kind, "rule": answer.rule, "godot4": answer.godot4[:400],
                     "evidence": answer.evidence})
        if progress is not None:
            progress(i + 1, len(names))
    return rows
