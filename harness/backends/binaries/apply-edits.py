"""Apply a timing's edits (harness/data/controller-timing.yaml) to a copied Go module: each `find` must
occur exactly once in its `file` (`count` times where the edit says so), each `add` must be a new file;
else stop and say which. An edit with `since`/`until` applies only to its module's versions in that range
(editrules.py). Used by build-controller.sh (sigs.k8s.io/karpenter and the modules its edits name) and
build-binaries.sh (k8s.io/kubernetes and the staging modules its edits name).

    python3 apply-edits.py <edits.json> <module copy> <timing name> "<module> <version>" <log tag> [<default module>]

Only the edits of <module> are applied: an edit's `module`, else <default module> (else <module>).
"""
import json
import os
import sys

from editrules import applies, expected


def main(edits_file: str, root: str, name: str, module: str, tag: str, default: str = "") -> None:
    path_of, _, version = module.partition(" ")
    for p in json.load(open(edits_file)):
        if p.get("module", default or path_of) != path_of:
            continue
        if not applies(p, version.strip() or None):
            continue
        path = f"{root}/{p['file']}"
        if "add" in p:
            if os.path.exists(path):
                sys.exit(f"timing {name}: {p['file']} already exists in {module}; build with timing upstream")
            open(path, "w").write(open(p["add"]).read())
            print(f"[{tag}] {name}: added {p['file']}", file=sys.stderr)
            continue
        try:
            text = open(path).read()
        except OSError:
            sys.exit(f"timing {name}: {p['file']} does not exist in {module}; build with timing upstream")
        if text.count(p["find"]) != expected(p):
            sys.exit(f"timing {name}: {p['file']} of {module} has {text.count(p['find'])} "
                     f"occurrence(s) of {p['find']!r}, not {expected(p)}; build with timing upstream")
        open(path, "w").write(text.replace(p["find"], p["replace"]))
        print(f"[{tag}] {name}: {p['file']}: {p['find']} -> {p['replace']}", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:7])
