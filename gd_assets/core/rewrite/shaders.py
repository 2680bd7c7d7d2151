"""Godot shading language 3 -> 4: renamed built-ins, hints and render modes (the rename map's shader
rows), and the screen and depth textures, which Godot 4 reads through a hinted uniform
(`uniform sampler2D screen_texture : hint_screen_texture, ...`) instead of `SCREEN_TEXTURE`.

The same rules run on `.gdshader` fragments and on the `code = "..."` of a Shader inside a scene or
resource (there the text is a string literal: quotes are escaped, and the whole shader is one block).
"""

from __future__ import annotations

import re

from gd_assets.core.rewrite.edits import FragmentRewrite
from gd_assets.core.rewrite.rules import RewriteRules
from gd_assets.core.rewrite.text import TextEdits
from gd_assets.core.shading import SCREEN_TEXTURES, WORD, code_spans

_SHADER_TYPE = re.compile(r"\bshader_type\s+\w+\s*;")

def convert_shader_code(text: str, start: int, end: int, rules: RewriteRules,
                        declare: tuple[str, ...] | None = None):
    """(a, b, new, rule, evidence) edits of the shader code in text[start:end]. The uniforms for the
    built-in textures used are declared after `shader_type ...;` when it is in the span, or at the
    span's start for the textures named in `declare` (a `.gdshader` function read in its file)."""
    used = []
    for a, b in code_spans(text, start, end):
        for m in WORD.finditer(text, a, b):
            word = m.group()
            rows = rules.renames.get(("shader", word))
            if rows:
                yield m.start(), m.end(), rows[0].new, "shader_rename", rows[0].cite()
            elif word in SCREEN_TEXTURES:
                yield m.start(), m.end(), SCREEN_TEXTURES[word][0], "screen_texture_uniform", \
                    rules.cite_prototype("shader-screen-texture-uniform")
                if word not in used:
                    used.append(word)
    wanted = [w for w in used if declare is None or w in declare]
    if not wanted:
        return
    lines = "".join("\n" + SCREEN_TEXTURES[w][1] for w in wanted)
    head = _SHADER_TYPE.search(text, start, end)
    if head is not None:
        yield head.end(), head.end(), lines, "screen_texture_uniform", rules.cite_prototype("shader-screen-texture-uniform")
    elif declare is not None:
        yield start, start, lines.lstrip("\n") + "\n\n", "screen_texture_uniform", \
            rules.cite_prototype("shader-screen-texture-uniform")


def rewrite_shader(kind: str, text: str, start_line: int, rules: RewriteRules,
                   declare: tuple[str, ...] | None = None) -> FragmentRewrite:
    """One fragment of a `.gdshader`/`.shader` file; `declare`: the built-in textures whose uniform
    this fragment declares (the first function of the file reading each, from the project context;
    None: every one it reads)."""
    ed = TextEdits(text, start_line)
    for a, b, new, rule, cite in convert_shader_code(text, 0, len(text), rules, declare=declare):
        ed.replace(a, b, new, rule, cite, 0.9)
    return ed.result()
