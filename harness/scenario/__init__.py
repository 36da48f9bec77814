"""A scenario file: its format (load.py: the JSON Schema and the harness's own checks, manifests resolved,
every problem as `file:line: reason`), the YAML it is read from, its steps and manifest shapes, the SKU
catalog it names, and the notices it gives without stopping a run. expect/ holds its `expect` block."""
