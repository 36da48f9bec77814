"""Which controller answers a run under a release profile: the default one (provider v1.14.0, or the
one --provider-ref / KARPENTER_PROVIDER_REF names), or that release's own, exported from the provider's
git history (--provider-git, KARPENTER_PROVIDER_GIT or HARNESS_PROVIDER_GIT), built with its own go.mod
(its core) and run with its own CRDs, cached per commit (harness/backends/binaries/controller.py).

`choose` is the pure rule; `ReleaseControllers` finds or builds each chosen controller once per process.
How-to: docs/real-controller-releases.md."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

CRDS = Path("pkg") / "apis" / "crds"
# the CRDs whose versions the real engine must be able to read and write, with the versions it can: the
# harness's objects and readers are karpenter.sh/v1's and core v0.36's karpenter.sh/v1beta1 (provider
# v0.5-v0.6), which every client then reads and writes at the version the release's CRD stores, as an
# AKSNodeClass (realcluster.release_kinds: provider v0.7.5's v1alpha2)
CLIENT_KINDS = {"NodePool": ("karpenter.sh_nodepools.yaml", ("v1", "v1beta1"))}


@dataclass(frozen=True)
class Choice:
    """The controller a profile runs under: `ref` (a tag of the provider's history) or the default
    (`ref` None); `skip` says why none can answer it."""
    ref: str | None = None
    skip: str | None = None


def choose(profile: str, modeled: dict, default_version: str, git_dir: Path | None, tags: frozenset[str],
           explicit_ref: str | None = None) -> Choice:
    """The controller for `profile` (`modeled`: harness.model.upstream.releases.modeled). An explicit ref (or a
    profile that covers the default controller's version, or a label policy) keeps the default; a
    release profile runs the tag of its own name when the history has it, else the release it models."""
    if explicit_ref or modeled.get("policy") or not modeled.get("covers"):
        return Choice()
    if default_version in modeled["covers"]:
        return Choice()
    ref = profile if profile in tags else modeled.get("release") or profile
    if git_dir is None:
        return Choice(skip=(f"profile {profile} models provider {_span(modeled['covers'])}; its own controller is "
                            f"built from the provider's git history: --provider-git DIR (harness run), "
                            f"--harness-provider-git DIR (pytest) or HARNESS_PROVIDER_GIT=DIR"))
    if ref not in tags:
        return Choice(skip=f"profile {profile}: {git_dir} has no tag {ref} (`git fetch --tags`)")
    return Choice(ref=ref)


def _span(covers: list[str]) -> str:
    return covers[0] if len(covers) == 1 else f"{covers[0]}-{covers[-1]}"


def served_versions(crd_text: str) -> list[str]:
    """The versions a CRD document serves."""
    crd = yaml.safe_load(crd_text) or {}
    return [v["name"] for v in (crd.get("spec") or {}).get("versions") or [] if v.get("served")]


def tree_skip(ref: str, tree: Path) -> str | None:
    """Why the controller of `ref` cannot run on the real engine, read from its tree: a CRD that serves no
    version the engine reads and writes (CLIENT_KINDS), or none at all (before provider v0.5, no NodePool)."""
    from harness.backends.kinds import KINDS
    for kind, (file, versions) in CLIENT_KINDS.items():
        path = tree / CRDS / file
        if not path.is_file():
            return f"provider {ref} has no {(CRDS / file).as_posix()}"
        served = served_versions(path.read_text())
        if not set(versions) & set(served):
            group = KINDS[kind].group
            return (f"provider {ref}'s {kind} CRD serves {group}/{', '.join(served)} only "
                    f"({(CRDS / file).as_posix()}); the real engine reads and writes "
                    f"{' or '.join(f'{group}/{v}' for v in versions)}")
    return None


def tags_of(git_dir: Path) -> frozenset[str]:
    out = subprocess.run(["git", "-C", str(git_dir), "tag"], capture_output=True, text=True, timeout=60)
    return frozenset(out.stdout.split()) if out.returncode == 0 else frozenset()


class ReleaseControllers:
    """The controller each profile runs under, found or built once per process (a build is ~10 min cold
    on 2 cores; later runs reuse the cache)."""

    def __init__(self):
        self._by_ref: dict[str, tuple[object | None, str | None]] = {}
        self._tags: dict[Path, frozenset[str]] = {}
        self.notices: list[str] = []

    def choice(self, profile: str) -> Choice:
        from harness.backends.binaries.controller import DEFAULT_PROVIDER_VERSION, ENV_REF, provider_git
        from harness.model.upstream.releases import modeled
        git_dir = provider_git()
        if git_dir is not None and git_dir not in self._tags:
            self._tags[git_dir] = tags_of(git_dir)
        return choose(profile, modeled(profile), DEFAULT_PROVIDER_VERSION, git_dir,
                      self._tags.get(git_dir, frozenset()) if git_dir else frozenset(), os.environ.get(ENV_REF))

    def controller(self, ref: str):
        """(ControllerBinary, None) for the release `ref`, built when missing; (None, why) when it
        cannot run here."""
        if ref not in self._by_ref:
            self._by_ref[ref] = self._get(ref)
        return self._by_ref[ref]

    def _get(self, ref: str):
        from harness.backends.binaries.controlplane import BinariesError
        from harness.backends.binaries.controller import build_controller, find_controller, provider_git, provider_tree, timing_for
        try:
            tree, _ = provider_tree(provider_git(), ref)
            why = tree_skip(ref, tree)
            if why:
                return None, why
            tm, notice = timing_for(tree)
            if notice:
                self.notices.append(f"provider {ref}: {notice}")
                print(f"NOTICE: provider {ref}: {notice}", file=sys.stderr)
            found = find_controller(tree.resolve(), tm)
            if found is None:
                print(f"building the controller of provider {ref} (~10 min cold)", file=sys.stderr, flush=True)
                found, seconds = build_controller(tree.resolve(), tm=tm)
                print(f"built the controller of provider {ref} in {seconds:.0f}s", file=sys.stderr, flush=True)
            if found.substitutes:
                from harness.backends.binaries.substitutes import notice as substituted
                self.notices.append(f"provider {ref}: {substituted(list(found.substitutes))}")
                print(f"NOTICE: {self.notices[-1]}", file=sys.stderr)
            return found, None
        except BinariesError as e:
            return None, f"the controller of provider {ref} cannot be built: {e}"


def newest_patches(tags, oldest: str = "v0.5.0", newest: str = "v1.14.99") -> list[str]:
    """The newest release tag (vX.Y.Z, no pre-release) of every release line between `oldest` and
    `newest`, oldest line first: the releases the nightly job and bench/real_releases.py run."""
    key = lambda t: tuple(int(x) for x in t[1:].split("."))      # noqa: E731
    lines: dict[tuple[int, int], str] = {}
    for t in tags:
        if re.fullmatch(r"v\d+\.\d+\.\d+", t) and key(oldest) <= key(t) <= key(newest):
            k = key(t)[:2]
            if k not in lines or key(t) > key(lines[k]):
                lines[k] = t
    return [lines[k] for k in sorted(lines)]
