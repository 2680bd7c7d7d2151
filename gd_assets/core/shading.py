"""What a shader text reads, outside its comments: the words of its code, and the built-in textures
Godot 4 reads only through a hinted uniform."""

from __future__ import annotations

import re

WORD = re.compile(r"\b[A-Za-z_]\w*\b")
# Built-in textures Godot 4 reads only through a uniform with a hint: name, declaration.
SCREEN_TEXTURES = {
    "SCREEN_TEXTURE": ("screen_texture", "uniform sampler2D screen_texture : hint_screen_texture, filter_linear_mipmap;"),
    "DEPTH_TEXTURE": ("depth_texture", "uniform sampler2D depth_texture : hint_depth_texture, filter_linear_mipmap;"),
}


def code_spans(text: str, start: int, end: int):
    """(a, b) spans of text[start:end] outside shader comments."""
    i, a = start, start
    while i < end:
        if text.startswith("//", i):
            if i > a:
                yield a, i
            i = text.find("\n", i, end)
            i = end if i < 0 else i
            a = i
        elif text.startswith("/*", i):
            if i > a:
                yield a, i
            close = text.find("*/", i + 2, end)
            i = end if close < 0 else close + 2
            a = i
        else:
            i += 1
    if a < end:
        yield a, end


def shader_textures(text: str) -> list[str]:
    """The built-in textures of SCREEN_TEXTURES a shader text reads, outside comments."""
    found = []
    for a, b in code_spans(text, 0, len(text)):
        found += [w for w in WORD.findall(text[a:b]) if w in SCREEN_TEXTURES and w not in found]
    return found
