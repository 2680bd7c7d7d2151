"""Thin asset definitions; the flow, one step a module, in the order data moves:

1. `sources.project_sources`      (per project)  the project expanded to files, each excluded one with its reason
2. `fragments.fragments`          (per project)  files cut into fragments; one `fragments` partition per fragment
3. `project_symbols.project_symbols` (per project) what the project defines: classes, members, autoloads, nodes
4. `evidence.fragment_evidence`   (per fragment) cues of the body, each name with its receiver -> hybrid retrieval
5. `judgement.fragment_judgement` (per fragment) a judge plugin: Godot 3 / 4 / neutral, migration, evidence
6. `rewrite.fragment_rewrite`     (per fragment) the Godot 4 edits of a fragment that needs migration, with evidence
7. `verdict.project_verdict`      (per project)  judgements rolled up to files, folders and the project; reports
8. `migration.project_migration`  (per project)  the migrated copy of every file, its patch and its summary
9. `verification.project_verification` (per project) Godot 4 on a scratch copy of the migrated copy (explicit only)
10. `maintenance.store_maintenance`              the store kept compact (DuckLake's small files merged)

`metadata` formats what the UI shows. The corpus assets these read are in `corpora_build.assets`.
"""
