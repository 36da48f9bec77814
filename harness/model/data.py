"""Where the model's data files live (profiles, SKU tables, label tables, the scenario schema)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

DATA_DIR = Path(str(resources.files("harness") / "data"))

__all__ = ["DATA_DIR", "load_yaml"]


def load_yaml(text: str):
    """A data file's YAML, read by libyaml where PyYAML has it (the same data as yaml.safe_load, several times
    faster: a command line loads a dozen data files, the CRDs among them, before its first step)."""
    import yaml
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
