"""A scenario's `expect` block matched against a run: partially (match.py), `expect.disruption`
(disruption.py), and repeated lines folded with a count (fold.py)."""
