"""A tiny chat model built on the spot, so the LLM judges can be exercised on a CPU with no download.

A byte-level BPE tokenizer is trained on judge prompts, wrapped with a chat template, and a
Llama of about 0.3M parameters (head size 32, the least CPU attention takes) is trained for a fixed
number of seeded steps on one thread (about 30 s) on schema-shaped answers so it closes its JSON and
stops instead of looping: the same model on every machine, whatever its cores and however busy (a
thread count changes the sums' order, and so the weights; threads waiting on each other on cores the
suite's other processes share took minutes). Its answers
mean nothing: tests check their structure only. `sample_inputs` gives realistic judge inputs.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

from gd_assets.core.cues import DEFAULT_REQUEST
from gd_assets.core.judges import JudgeInput
from gd_assets.core.judges.prompt import SIGNALS, PromptBudget, build_messages, shown_candidates
from gd_assets.core.retrieval import Candidate

BUDGET = PromptBudget(total=3200, request=200, candidates=1200, per_candidate_floor=200, fragment=800)
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")
CONTEXT = 48   # prompt tokens kept before each training answer: enough to learn the answer's shape
SPECIAL = ["<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|pad|>"]

FRAGMENTS = [
    ("enemy.gd", "declaration", "gdscript", "extends KinematicBody2D"),
    ("enemy.gd", "function", "gdscript", "func _physics_process(delta):\n\tvelocity = move_and_slide(velocity)"),
    ("player.gd", "declaration", "gdscript", "@export var speed = 400\nvar screen_size"),
    ("player.gd", "function", "gdscript",
     "func _process(delta):\n\tvar velocity = Vector2.ZERO\n\tif Input.is_action_pressed(&\"move_right\"):\n"
     "\t\tvelocity.x += 1\n\tposition += velocity * delta\n\tposition = position.clamp(Vector2.ZERO, screen_size)"),
    ("hud.gd", "declaration", "gdscript", "export(int) var score = 0\nonready var label = $ScoreLabel"),
    ("hud.gd", "function", "gdscript",
     "func show_message(text):\n\t$Message.text = text\n\t$Message.show()\n\tyield(get_tree().create_timer(2), \"timeout\")"),
    ("hud.gd", "function", "gdscript",
     "func _ready():\n\t$StartButton.connect(\"pressed\", self, \"_on_start_pressed\")"),
    ("main.gd", "function", "gdscript",
     "func new_game():\n\tvar mob = mob_scene.instantiate()\n\tadd_child(mob)\n\tawait get_tree().create_timer(1.0).timeout"),
    ("main.gd", "declaration", "gdscript", "var health = 100 setget set_health"),
    ("project.godot", "section", "project", "[application]\nconfig/name=\"Dodge\"\nrun/main_scene=\"res://main.tscn\""),
    ("project.godot", "preamble", "project", "config_version=4"),
    ("player.tscn", "header", "scene", "[gd_scene load_steps=3 format=2]"),
    ("player.tscn", "node", "scene", "[node name=\"Player\" type=\"KinematicBody2D\"]\nscript = ExtResource( 1 )"),
]

ROWS = [
    ("api_mapping", "KinematicBody2D -> CharacterBody2D", "renamed: class KinematicBody2D is CharacterBody2D in Godot 4."),
    ("api_mapping", "yield -> await", "syntax changed: yield(obj, \"signal\") becomes await obj.signal."),
    ("api_mapping", "PackedScene.instance -> instantiate", "renamed: method instance() is instantiate() in Godot 4."),
    ("api_mapping", "export(...) -> @export", "syntax changed: export(int) var x becomes @export var x: int."),
    ("api_mapping", "onready -> @onready", "syntax changed: onready var becomes @onready var."),
    ("api_mapping", "Object.connect signature", "signature changed: connect(signal, target, method) becomes "
     "signal.connect(callable)."),
    ("label_prototypes", "KinematicBody2D movement -> CharacterBody2D velocity",
     "Godot 3: velocity = move_and_slide(velocity). Godot 4: set velocity, then call move_and_slide()."),
    ("label_prototypes", "setget -> property accessors", "Godot 3: var x setget set_x. Godot 4: var x: set = set_x."),
    ("docs_chunks", "CharacterBody2D (Godot 4)", "A 2D physics body specialized for characters moved by script."),
    ("docs_chunks", "AnimatedSprite2D (Godot 4)", "Sprite node that contains multiple textures as frames to play."),
    ("docs_chunks", "Vector2.clamp (Godot 4)", "Returns a new vector with all components clamped between min and max."),
    ("docs_chunks", "Input.is_action_pressed (Godot 3)", "Returns true if you are pressing the action event."),
    ("docs_chunks", "ProjectSettings application/config/name", "The project's name, shown in the project manager."),
]


def sample_inputs(n: int, seed: int = 0) -> list[JudgeInput]:
    """`n` judge inputs made of real Godot 3 and Godot 4 text with 3 to 12 candidates each."""
    rng = random.Random(seed)
    items = []
    for i in range(n):
        path, kind, file_kind, text = FRAGMENTS[i % len(FRAGMENTS)]
        rows = rng.sample(ROWS, rng.randint(3, 12))
        cands = [Candidate(rank=r + 1, table=t, id=f"{t}:{title}", title=title, text=body, sparse_score=1.0,
                           sparse_rank=r + 1, dense_score=0.5, score=1.0 - r / 20, table_rank=1)
                 for r, (t, title, body) in enumerate(rows)]
        start = rng.randint(1, 40)
        items.append(JudgeInput(key=f"{path}::{kind}-{i}", path=path, start_line=start,
                                end_line=start + text.count("\n"), kind=kind, file_kind=file_kind, text=text,
                                cues=[], candidates=cands, request=DEFAULT_REQUEST))
    return items


def _answer(rng: random.Random, shown: int) -> str:
    related = sorted(rng.sample(range(1, shown + 1), rng.randint(0, min(shown, 3))))
    migration = rng.random() < 0.5
    answer = {
        "related": related,
        "signal": rng.choice(SIGNALS),
        "migration_needed": migration,
        "confidence": rng.choice([0.3, 0.5, 0.7, 0.8, 0.9]),
        "rationale": rng.choice(["Godot 3 syntax.", "Godot 4 API.", "Valid in both versions.",
                                 "The class was renamed in Godot 4."]),
        "evidence": related[:1] if migration else [],
    }
    return json.dumps(answer, separators=(",", ":"))


def build_tiny_model(folder: Path, steps: int = 800, seed: int = 0) -> Path:
    """Tokenizer and model in `folder` (reused when already there); returns the folder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    if (folder / "config.json").exists():
        return folder
    rng = random.Random(seed)
    torch.manual_seed(seed)
    samples = []
    for item in sample_inputs(96, seed):
        prompt = build_messages(item, BUDGET)
        samples.append((prompt, _answer(rng, shown_candidates(item, BUDGET))))

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    texts = [m["content"] for p, _ in samples for m in p] + [a for _, a in samples]
    bpe.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=1024, special_tokens=SPECIAL,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|end|>", pad_token="<|pad|>",
                                  chat_template=CHAT_TEMPLATE)
    tok.chat_template = CHAT_TEMPLATE

    rows = []   # (first position, ids, labels): the prompt's last tokens at their real positions
    for prompt, answer in samples:
        head = tok.encode(tok.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True),
                          add_special_tokens=False)
        tail = tok.encode(answer, add_special_tokens=False) + [tok.eos_token_id]
        keep = head[-CONTEXT:]
        rows.append((len(head) - len(keep), keep + tail, [-100] * len(keep) + tail))
    config = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=192, num_hidden_layers=4,
                         num_attention_heads=2, num_key_value_heads=2, head_dim=32, max_position_embeddings=2048,
                         tie_word_embeddings=True, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                         bos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        loss = _train(model, optimizer, rows, tok.pad_token_id, rng, steps)
    finally:
        torch.set_num_threads(threads)
    logging.getLogger(__name__).info("tiny model: %d steps, last loss %.3f", steps, loss)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _train(model, optimizer, rows: list, pad: int, rng: random.Random, steps: int) -> float:
    import torch

    for _ in range(steps):
        batch = rng.sample(rows, 8)
        width = max(len(ids) for _, ids, _ in batch)
        ids = torch.tensor([i + [pad] * (width - len(i)) for _, i, _ in batch])
        labels = torch.tensor([la + [-100] * (width - len(la)) for _, _, la in batch])
        positions = torch.tensor([list(range(p, p + width)) for p, _, _ in batch])
        loss = model(input_ids=ids, position_ids=positions, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    import sys

    print(build_tiny_model(Path(sys.argv[1]), steps=int(sys.argv[2]) if len(sys.argv) > 2 else 800))
