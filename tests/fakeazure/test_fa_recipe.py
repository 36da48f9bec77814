"""docs/fakeazure.md "Recipe: fakeazure in your own tests" runs as written: the Python block
between the recipe markers is copied into a fresh test file and run by pytest in a subprocess."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "fakeazure.md"


def recipe_code() -> str:
    text = PAGE.read_text()
    block = re.search(r"<!-- recipe:begin -->\s*```python\n(.*?)```\s*<!-- recipe:end -->", text, re.DOTALL)
    assert block, "the recipe markers are missing from docs/fakeazure.md"
    return block.group(1)


def test_the_docs_recipe_runs_as_written(tmp_path):
    (tmp_path / "test_recipe.py").write_text(recipe_code())
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                           "test_recipe.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
