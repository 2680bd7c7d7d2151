"""The built corpus as every reader sees it: where the index files lie (`layout`), which version
it is (`version`), and the API surface the judges read (`surface`).

`corpora_build` writes what these modules read; the analysis only ever reads through them.
"""
