"""`harness parity`: design 0006's label table regenerated from behavior.

For every label named in design 0006 (`harness/data/design-0006-labels.yaml`) and one profile, the
command builds small probe scenarios in memory and runs them through the same runner the scenario
library uses (fakeazure -> loop -> model, embedded backend): see `probes.py` for the three probes.
The AKS columns and the doc's own Karpenter columns are read from the data file; every behavior
column is computed by running the probes. `--diff OTHER` compares two profiles (`diff.py`),
`--check-doc` lists every cell where behavior and the doc disagree, with sources (`checkdoc.py`).
Output: Markdown (default), JSON, SVG (hand-drawn), PNG (only when matplotlib is installed)
(`render.py`); `docs.py` regenerates docs/parity/.
"""
from harness.parity.checkdoc import Disagreement, check_doc
from harness.parity.command import add_parser, main
from harness.parity.diff import diff_rows, render_diff_markdown
from harness.parity.labels import DATA_FILE, LabelEntry, ParityUsageError, Probe, load_labels, select_labels
from harness.parity.probes import (Cell, NodeLabel, NodePoolVerdict, Prober, Row, Schedulable, nodeclass_manifest,
                                   nodepool_manifest, pod_manifest, run_matrix, scenario_text)
from harness.parity.render import COLUMNS, render_markdown, render_png, render_svg, row_json
from harness.parity.text import shorten

__all__ = ["COLUMNS", "DATA_FILE", "Cell", "Disagreement", "LabelEntry", "NodeLabel", "NodePoolVerdict",
           "ParityUsageError", "Probe", "Prober", "Row", "Schedulable", "add_parser", "check_doc", "diff_rows",
           "load_labels", "main", "nodeclass_manifest", "nodepool_manifest", "pod_manifest", "render_diff_markdown",
           "render_markdown", "render_png", "render_svg", "row_json", "run_matrix", "scenario_text",
           "select_labels", "shorten"]
