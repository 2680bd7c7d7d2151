"""Corpus build: docs_chunks, api_mapping and label_prototypes from real Godot 3.x and 4.x sources."""
