"""Derive the profiles' provider data from the provider's own source, instead of copying it by hand.

    python -m harness.model.sync --provider-git DIR --releases all          # one profile per provider release
    python -m harness.model.sync --provider-git DIR --releases v1.6,v1.14.2 --check   # print the diff only
    python -m harness.model.sync --provider-src ~/src/karpenter-provider-azure --profile-name mywork
    python -m harness.model.sync --provider-module v1.14.0 --profile-name pinned

--provider-git (harness.model.upstream.releasesync) reads every release tag of the provider's git history and writes
harness/data/releases/<profile>/, harness/data/releases/index.yaml and harness/data/profiles/<profile>.yaml
(`upstream` is pointed at the newest). --provider-src / --provider-module derive one source into a new
profile `extends: upstream` whose tables and facts live in harness/data/derived/<name>/.

Why it is built this way: docs/architecture/model.md."""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from pathlib import Path

from harness.model.data import DATA_DIR
from harness.model.upstream.derivation import (CORE_MODULE, FACTS_FILE, K8S_API_MODULE, PROVIDER_MODULE, TABLE_FILES,  # noqa: F401
                                      Derived, GoResolver, SyncError, aksnodeclass_facts, api_facts, crd_facts,
                                      derive, header_comment, known_skus_file, label_facts, load_source, module_dir,
                                      required_versions, restricted_label_message, restricted_skus_file,
                                      supported_gpus_file)

# the derivation lives in harness.model.upstream.derivation; these names stay importable from here
__all__ = ["main", "plan", "diff", "profile_text", "CORE_MODULE", "FACTS_FILE", "K8S_API_MODULE", "PROVIDER_MODULE",
           "TABLE_FILES", "Derived", "GoResolver", "SyncError", "aksnodeclass_facts", "api_facts", "crd_facts", "derive",
           "header_comment", "known_skus_file", "label_facts", "load_source", "module_dir", "required_versions",
           "restricted_label_message", "restricted_skus_file", "supported_gpus_file"]


# == writing ========================================================================================
def profile_text(name: str, origin: str) -> str:
    return (f"# Profile: a provider working copy ({origin}), made by `python -m harness.model.sync --profile-name {name}`.\n"
            f"# Its tables and provider facts are in harness/data/derived/{name}/; everything else is upstream's.\n"
            f"extends: upstream\n"
            f"derived: derived/{name}\n"
            f"description: >-\n  upstream with the data derived from {origin}.\n")


def plan(derived: Derived, target_dir: Path) -> dict[Path, str]:
    return {target_dir / name: text for name, text in derived.files.items()}


def diff(files: dict[Path, str], root: Path) -> str:
    out = []
    for path, text in files.items():
        old = path.read_text() if path.exists() else ""
        if old != text:
            rel = os.path.relpath(path, root)
            out.extend(difflib.unified_diff(old.splitlines(keepends=True), text.splitlines(keepends=True),
                                            f"a/{rel}", f"b/{rel}"))
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.model.sync", description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--provider-module", metavar="VERSION", help="provider module version (default v1.14.0)")
    src.add_argument("--provider-src", metavar="DIR", help="a provider checkout")
    src.add_argument("--provider-git", metavar="DIR",
                     help="the provider's git history (a checkout or a bare/mirror git directory): one profile per "
                          "release, see --releases")
    ap.add_argument("--releases", metavar="SPEC", default="all",
                    help="with --provider-git: `all` (every release of the lines in harness.model.upstream.releasesync.LINES) or "
                         "a comma list of lines (v1.6) and tags (v1.6.2)")
    ap.add_argument("--core-git", metavar="DIR",
                    help="kubernetes-sigs/karpenter's git history, for a release whose go.mod replaces core by a "
                         "commit the Go module proxy does not serve")
    ap.add_argument("--no-attribute", action="store_true",
                    help="with --provider-git: do not look for the commits that changed each fact (faster)")
    ap.add_argument("--profile-name", metavar="NAME",
                    help="write a new profile NAME (extends: upstream) instead of regenerating upstream's data")
    ap.add_argument("--check", action="store_true", help="print the diff and exit 1 if any, writing nothing")
    ap.add_argument("--data-dir", default=str(DATA_DIR), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    data_dir = Path(args.data_dir)
    if args.provider_git:
        return _main_releases(args, data_dir)
    try:
        provider_dir, origin, versions, modules = load_source(args.provider_module, args.provider_src)
        derived = derive(provider_dir, origin, versions, modules)
    except SyncError as e:
        print(f"sync: {e}", file=sys.stderr)
        return 2
    if args.profile_name:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", args.profile_name) or args.profile_name == "upstream":
            print(f"sync: invalid profile name {args.profile_name!r}", file=sys.stderr)
            return 2
        files = plan(derived, data_dir / "derived" / args.profile_name)
        files[data_dir / "profiles" / f"{args.profile_name}.yaml"] = profile_text(args.profile_name, origin)
    else:
        print("sync: without --profile-name, give --provider-git to regenerate the release profiles "
              "(upstream is the newest of them)", file=sys.stderr)
        return 2
    return _write(files, [], data_dir, args.check)


def _write(files: dict[Path, str], remove: list[Path], data_dir: Path, check: bool) -> int:
    text = diff(files, data_dir.parent.parent)
    for path in remove:
        text += f"remove {os.path.relpath(path, data_dir.parent.parent)}\n"
    sys.stdout.write(text or "no changes\n")
    if check:
        return 1 if text else 0
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    for path in remove:
        path.unlink()
    return 0


def _main_releases(args, data_dir: Path) -> int:
    from harness.model.upstream import releasesync as rs
    try:
        git_dir = rs.git_dir_of(args.provider_git)
        core_git = rs.git_dir_of(args.core_git) if args.core_git else None
        tags = rs.release_tags(git_dir)
        if args.releases != "all":
            wanted = [w.strip() for w in args.releases.split(",") if w.strip()]
            tags = [t for t in tags if t in wanted or rs.line_of(t) in wanted]
            missing = [w for w in wanted if w not in tags and not any(rs.line_of(t) == w for t in tags)]
            if missing:
                raise SyncError(f"{args.provider_git}: no release tags for {', '.join(missing)}")
        if not tags:
            raise SyncError(f"{args.provider_git}: no release tags of the lines {', '.join(rs.LINES)}")
        files = rs.generate(git_dir, tags, core_git, data_dir, attribute=not args.no_attribute,
                            log=lambda s: print(f"sync: {s}", file=sys.stderr))
    except SyncError as e:
        print(f"sync: {e}", file=sys.stderr)
        return 2
    remove = rs.stale(files, data_dir) if args.releases == "all" else []
    return _write(files, remove, data_dir, args.check)


if __name__ == "__main__":
    sys.exit(main())
