"""Resources of the code location, configured from the environment (GD_ASSETS_HOME)."""


from pathlib import Path

import dagster as dg

from gd_assets import home


class AnalysisStore(dg.ConfigurableResource):
    """The DuckDB file of the project-analysis tables; empty means `<GD_ASSETS_HOME>/projects.duckdb`."""

    path: str = ""

    def db(self) -> Path:
        return Path(self.path) if self.path else home.projects_db_path()
