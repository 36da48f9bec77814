"""docs/parity/: the generated parity documents, regenerated in one process (each profile's probes
run once and feed every document that needs them). `python -m harness.parity.docs [DIR]` rewrites
them; `tests/parity/test_docs_current.py` checks the committed ones equal a regeneration."""
from __future__ import annotations

import sys
from pathlib import Path

from harness.parity.command import parse, render
from harness.parity.labels import load_labels
from harness.parity.probes import run_matrix

DOCS_DIR = "docs/parity"
# (file name, `harness parity` arguments before `-o`): each file's first line names its full command
DOCUMENTS = [
    ("before-0006.md", ["--profile", "before-0006"]),
    ("design-0006.md", ["--profile", "design-0006"]),
    ("upstream.md", ["--profile", "upstream"]),
    ("upstream-aksmachineapi.md", ["--profile", "upstream", "--provision-mode", "aksmachineapi"]),
    ("diff-before-0006-design-0006.md", ["--profile", "before-0006", "--diff", "design-0006"]),
    ("check-doc-before-0006.md", ["--profile", "before-0006", "--check-doc"]),
    ("before-0006.svg", ["--profile", "before-0006", "--format", "svg"]),
]


def regenerate(cluster=None, progress=None) -> dict[str, str]:
    """{file name: text} of every document, as `harness parity ... -o docs/parity/<file>` writes it."""
    entries = load_labels()
    cache: dict[tuple, tuple] = {}
    out = {}
    for name, argv in DOCUMENTS:
        args = parse([*argv, "-o", f"{DOCS_DIR}/{name}"])

        def matrix(profile: str, mode: str | None = args.provision_mode):
            if (profile, mode) not in cache:
                cache[(profile, mode)] = run_matrix(profile, entries, cluster, mode=mode,
                                                    progress=progress(profile) if progress else None)
            return cache[(profile, mode)]
        text = render(args, matrix)
        assert text is not None
        out[name] = text
    return out


def main(argv: list[str]) -> int:
    from harness.parity.command import progress_printer
    out_dir = Path(argv[0] if argv else DOCS_DIR)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in regenerate(progress=progress_printer(False)).items():
        (out_dir / name).write_text(text)
        print(f"wrote {out_dir / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
