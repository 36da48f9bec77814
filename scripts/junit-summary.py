"""The closing line of scripts/test.sh over its legs' JUnit XML: passed, failed, xfailed, skipped - and, with
--strict 1 (.ci/run), every item that skipped because a prerequisite was missing (a backend that could not
start, a binary or image that was not built, a tool not installed) counts as a failure, named per reason.
Only skips by design pass (BY_DESIGN below). Exit status 1 when anything failed.

    python3 scripts/junit-summary.py [--strict 0|1] [--seconds N] [--cpu N] reports/junit*.xml
"""
from __future__ import annotations

import argparse
import collections
import re
import sys
import xml.etree.ElementTree as ET

# skips that are not a missing prerequisite: the item is not meant to run in this configuration
BY_DESIGN = (
    re.compile(r"^scenario runs on .* only$"),                     # given.backends excludes this backend
    re.compile(r"^a k3s image is available here"),                 # the no-registry k3s path is checked elsewhere
    # CoreDNS is a ~20 min build done only on request (`python -m harness.backends build --kind --coredns`)
    re.compile(r"^node image without the kube-proxy and CoreDNS images$"),
    # the provider's git history (every release tag) is not on the Go module proxy CI can reach; the
    # nightly `releases` job checks the committed release data against it
    re.compile(r"^HARNESS_PROVIDER_GIT \(the provider's git history\) not given$"),
    re.compile(r"^HARNESS_CORE_GIT \(core's git history\) not given$"),     # likewise core's (v1.12.2 pins a commit)
    # CI builds the default Kubernetes version only (scripts/test.sh); the nightly `k8s-versions` job builds
    # each version a scenario names and runs those scenarios
    re.compile(r"control plane is not built and HARNESS_BUILD_K8S_VERSIONS=0 "),
)


def by_design(message: str) -> bool:
    return any(p.search(message) for p in BY_DESIGN)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--strict", default="0")
    ap.add_argument("--seconds", type=int, default=None)
    ap.add_argument("--cpu", type=int, default=None, help="CPU seconds of the whole run")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    strict = args.strict not in ("", "0", "false", "no")
    n = collections.Counter()
    missing: collections.Counter[str] = collections.Counter()
    for f in args.files:
        for case in ET.parse(f).getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                n["failed"] += 1
                continue
            skipped = case.find("skipped")
            if skipped is None:
                n["passed"] += 1
            elif skipped.get("type") == "pytest.xfail":
                n["xfailed"] += 1
            elif by_design(message := (skipped.get("message") or "").strip()):
                n["skipped by design"] += 1
            else:
                n["skipped: prerequisite missing"] += 1
                missing[re.sub(r"\s+", " ", message)[:160]] += 1
    parts = [f"{n[k]} {k}" for k in ("passed", "failed", "xfailed", "skipped by design",
                                      "skipped: prerequisite missing")]
    line = "total: " + ", ".join(parts)
    if args.seconds is not None:
        line += f" in {args.seconds // 60} min {args.seconds % 60} s"
    if args.cpu is not None:
        line += f" ({args.cpu} CPU-s)"
    failed = n["failed"] > 0 or (strict and missing)
    if missing:
        line += ("; FAILED (strict: a skip for a missing prerequisite fails CI)" if strict else
                 "; with HARNESS_STRICT=1 (.ci/run) these skips fail")
    print(line)
    for message, count in missing.most_common():
        print(f"  {count} skipped: {message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
