"""Where the model's data files live (profiles, SKU tables, label tables, the scenario schema)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

DATA_DIR = Path(str(resources.files("harness") / "data"))

__all__ = ["DATA_DIR"]
