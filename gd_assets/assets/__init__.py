"""Thin asset definitions; the flow, one step a module, in the order data moves:

1. `sources.project_sources`      (per project)  the project expanded to files, each excluded one with its reason
2. `fragments.fragments`          (per project)  files cut into fragments; one `fragments` partition per fragment
3. `evidence.fragment_evidence`   (per fragment) cues of the body -> hybrid retrieval over the three corpus tables
4. `judgement.fragment_judgement` (per fragment) a judge plugin: Godot 3 / 4 / neutral, migration, evidence
5. `verdict.project_verdict`      (per project)  judgements rolled up to files, folders and the project; reports

`metadata` formats what the UI shows. The corpus assets these read are in `corpora_build.assets`.
"""
