"""One command to bring up a real control plane with the provider's CRDs.

    python -m harness.backends up [--backend local|container] [--profile upstream] [--scheduler] [--kwok]
                                  [--controller-manager] [--build] [--keep] [--check]

`python -m harness.backends build --node` adds kubelet, kubeadm, kubectl and kube-proxy; `build --kind`
also the kind backend's node image (harness/backends/kind/image.py). `build --k8s-version 1.33` builds
another Kubernetes version's control plane instead (the release and etcd harness/data/kubernetes-versions.yaml
pairs with that minor), which the real engine starts for a scenario naming that version.

`up` starts the cluster, prints its server URL, admin kubeconfig and start timings, and then either
runs the acceptance checks and tears everything down (`--check`, exit status 0 when they pass), or
waits until Ctrl-C / SIGTERM and tears down. `python -m harness.backends build` builds (or reuses)
the pinned binaries (K8S_VERSION, ETCD_VERSION, KWOK_VERSION; Go module proxy, ~13 min cold) into
the harness cache, streaming the build log to stderr, and prints their paths and versions.
`build --controller [--provider-src DIR]` builds (or reuses) the Karpenter-on-Azure controller
instead (provider v1.14.0 from the Go module proxy, or a maintainer's checkout; harness/backends/binaries/controller.py).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time


def _checks(cluster) -> list[str]:
    from harness.backends.base import KARPENTER, APIRejected, Identity

    failures = []
    ref = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}
    np = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "check-restricted"},
          "spec": {"template": {"metadata": {"labels": {"kubernetes.azure.com/agentpool": "x"}},
                                "spec": {"nodeClassRef": ref, "requirements": []}}}}
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "check-node", "labels": {"node-restriction.kubernetes.io/x": "y"}}}
    for what, fn, identity, expect in (
        ("NodePool with kubernetes.azure.com/agentpool", lambda: cluster.create(np, KARPENTER), "karpenter",
         'label domain "kubernetes.azure.com" is restricted'),
        ("kubelet-created Node with node-restriction.kubernetes.io/x",
         lambda: cluster.create(node, Identity.node("check-node")), "system:node:check-node",
         'is not allowed to set the following labels: node-restriction.kubernetes.io/x'),
    ):
        try:
            fn()
            failures.append(f"{what} was accepted")
        except APIRejected as e:
            ok = expect in e.message
            print(f"{'ok  ' if ok else 'FAIL'} {what} ({identity}) -> {e.status} {e.message}")
            if not ok:
                failures.append(f"{what}: unexpected message {e.message!r}")
    try:
        cluster.create(node, KARPENTER)
        print("ok   the same Node labels written by the karpenter controller identity are accepted")
    except APIRejected as e:
        failures.append(f"karpenter identity refused: {e.message}")
    cluster.reset()
    return failures


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m harness.backends")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start a cluster")
    up.add_argument("--backend", choices=["local", "container", "kind"], default="local")
    up.add_argument("--profile", default="upstream", help="label profile whose CRD rules to install ('' = none)")
    up.add_argument("--scheduler", action="store_true")
    up.add_argument("--kwok", action="store_true")
    up.add_argument("--controller-manager", action="store_true")
    up.add_argument("--build", action="store_true", help="build missing binaries (Go module proxy, ~13 min cold)")
    up.add_argument("--keep", action="store_true", help="keep the temp dir (PKI, etcd data, logs)")
    up.add_argument("--check", action="store_true", help="run the acceptance checks, then tear down")
    b = sub.add_parser("build", help="build or reuse the pinned binaries")
    b.add_argument("--node", action="store_true", help="also kubelet, kubeadm, kubectl, kube-proxy (the kubelet judges "
                                                      "--node-labels on the real backends)")
    b.add_argument("--kind", action="store_true", help="also the kind node image (Debian mirror + Go module proxy; "
                                                      "implies --node; harness/backends/kind/image.py)")
    b.add_argument("--kind-rootfs", action="store_true",
                   help="only the kind node image's Debian root filesystem (debootstrap, as root; the I/O-bound "
                        "step, which CI runs beside the Go builds)")
    b.add_argument("--coredns", action="store_true", help="with --kind: also build CoreDNS (~25 min) for kubeadm's "
                                                         "CoreDNS addon")
    b.add_argument("--controller", action="store_true",
                   help="build the Karpenter-on-Azure controller (provider v1.14.0, ~10 min cold) instead")
    b.add_argument("--provider-src", default=None, metavar="DIR",
                   help="with --controller: build a karpenter-provider-azure checkout (cached by content hash)")
    b.add_argument("--provider-git", default=None, metavar="DIR",
                   help="with --controller --provider-ref: a karpenter-provider-azure clone with its tags")
    b.add_argument("--provider-ref", default=None, metavar="REF",
                   help="with --controller: build this release tag, branch or commit of --provider-git "
                        "(cached per commit)")
    b.add_argument("--core-version", default=None, metavar="VERSION",
                   help="with --controller: build the provider against this sigs.k8s.io/karpenter release "
                        "(a go.mod replace; where it compiles) - also KARPENTER_CORE_VERSION")
    b.add_argument("--timing", default=None, choices=["fast", "upstream"],
                   help="with --controller: fast (the default): a disruption pass on request, two of core's waits divided by ten; "
                        "upstream builds the release as is (harness/data/controller-timing.yaml) - also "
                        "KARPENTER_CONTROLLER_TIMING")
    b.add_argument("--k8s-version", default=None, metavar="VERSION",
                   help="build another Kubernetes version's control plane (1.33 or v1.33.13: the release and etcd "
                        "harness/data/kubernetes-versions.yaml pairs with that minor) for the real engine's "
                        "scenarios that name it: kube-apiserver, kube-scheduler, kube-controller-manager (and the "
                        "timing's), etcd; ~10-15 min cold")
    from harness import __version__, logs
    ap.add_argument("--version", action="version", version=f"harness {__version__}")
    logs.add_verbose(ap)
    for command in (up, b):
        logs.add_verbose(command, sub=True)
    return ap


def main(argv: list[str] | None = None) -> int:
    from harness import logs
    args = build_parser().parse_args(argv)
    logs.setup(args.verbose)

    if args.cmd == "build" and (args.controller or args.provider_src or args.provider_ref):
        if args.core_version:
            os.environ["KARPENTER_CORE_VERSION"] = args.core_version
        if args.timing:
            os.environ["KARPENTER_CONTROLLER_TIMING"] = args.timing
        from pathlib import Path

        from harness.backends.binaries import controlplane as binaries, controller
        try:
            src = controller.selected_source(Path(args.provider_src) if args.provider_src else None,
                                             Path(args.provider_git) if args.provider_git else None, args.provider_ref)
            # a release's tree: the fast timing where its core has every line the edits change, as the
            # real engine picks it (controller.timing_for), so the build lands where a run looks
            tm, notice = controller.timing_for(src) if args.provider_ref else (None, "")
            if notice:
                print(f"NOTICE: {notice}", file=sys.stderr)
            ctl, seconds = controller.build_controller(src, echo=True, tm=tm)
        except binaries.BinariesError as e:
            print(f"build failed: {e}", file=sys.stderr)
            return 1
        print(json.dumps({"seconds": round(seconds, 1), "controller": str(ctl.path), "version": ctl.version,
                          "source": ctl.source, "timing": ctl.timing,
                          "substitutes": [s.describe() for s in ctl.substitutes]}, indent=2))
        return 0
    if args.cmd == "build" and args.k8s_version:
        from harness.backends.binaries import controlplane as binaries
        from harness.backends.binaries.controller import build_timed_kcm
        release = binaries.release_for(args.k8s_version)
        if release is None:
            print(f"build failed: no Kubernetes {args.k8s_version} in {binaries.VERSIONS_DATA.name} (minors "
                  f"{', '.join(binaries.kubernetes_releases())})", file=sys.stderr)
            return 1
        t0 = time.monotonic()
        # what the real engine's cluster of that version runs (RealEngine.cluster_options)
        from harness.backends.registry import get_backend
        need = get_backend("local", scheduler=True, controller_manager=True, k8s_version=release.kubernetes).needed()
        try:
            bs = binaries.ensure_binaries(build=True, need=need, echo=True, k8s=release.kubernetes)
            t_kcm = time.monotonic()
            kcm = build_timed_kcm(echo=True, k8s=release.kubernetes)
        except binaries.BinariesError as e:
            print(f"build failed: {e}", file=sys.stderr)
            return 1
        print(json.dumps({"seconds": round(time.monotonic() - t0, 1), "versions": bs.versions,
                          "paths": {k: str(v) for k, v in bs.paths.items()},
                          "timed_kcm": {"path": str(kcm), "seconds": round(time.monotonic() - t_kcm, 1)} if kcm else None},
                         indent=2))
        return 0
    if args.cmd == "build" and args.kind_rootfs:
        from harness.backends.kind import image, rootfs
        from harness.backends.kind.errors import KindBuildError
        t0 = time.monotonic()
        try:
            tar = rootfs.build_rootfs(image.kind_cache(), image.log)
        except KindBuildError as e:
            print(f"build failed: {e}", file=sys.stderr)
            return 1
        print(json.dumps({"seconds": round(time.monotonic() - t0, 1), "rootfs": str(tar)}, indent=2))
        return 0
    if args.cmd == "build":
        from harness.backends.binaries import controlplane as binaries
        if args.kind:
            # the node image is a Docker build: say so now, not after the binaries' build
            from harness.backends.container import DockerUnavailable, require_docker
            try:
                require_docker()
            except DockerUnavailable as e:
                print(f"build failed: {e}", file=sys.stderr)
                return 1
        t0 = time.monotonic()
        try:
            bs = binaries.ensure_binaries(build=True, need=binaries.REQUIRED + binaries.OPTIONAL, echo=True)
        except binaries.BinariesError as e:
            print(f"build failed: {e}", file=sys.stderr)
            return 1
        # kwok >= v0.8.0 has no built-in stages (sigs.k8s.io/kwok v0.8.0
        # kustomize/stage/node/fast/node-initialize.yaml and the like are opt-in): assembled once
        # (sigs.k8s.io/kwok v0.8.0 kustomize/stage/node/fast/node-initialize.yaml)
        stages = bs.kwok_stages
        report = {"seconds": round(time.monotonic() - t0, 1), "versions": bs.versions,
                  "paths": {k: str(v) for k, v in bs.paths.items()},
                  "kwok_stages": str(stages) if stages else None}
        try:
            # the real engine's kube-controller-manager for the controller's timing (controller-timing.yaml
            # kube-controller-manager-source): ~30 s on the control plane's Go build cache
            from harness.backends.binaries.controller import build_timed_kcm
            t_kcm = time.monotonic()
            if (kcm := build_timed_kcm(echo=True)) is not None:
                report["timed_kcm"] = {"path": str(kcm), "seconds": round(time.monotonic() - t_kcm, 1)}
            if args.node or args.kind:
                out, dt = binaries.build_node(echo=True)
                report["node_binaries"] = {"dir": str(out), "seconds": round(dt, 1)}
            if args.kind:
                from harness.backends.kind import image
                report["kind_node_image"] = image.build(echo=True, coredns=args.coredns).to_json()
        except (binaries.BinariesError, RuntimeError) as e:
            print(f"build failed: {e}", file=sys.stderr)
            return 1
        report["seconds"] = round(time.monotonic() - t0, 1)
        print(json.dumps(report, indent=2))
        return 0

    from harness.backends.registry import get_backend
    backend = get_backend(args.backend, profile=args.profile or None, scheduler=args.scheduler, kwok=args.kwok,
                          controller_manager=args.controller_manager, build=args.build, keep=args.keep)
    ok, why = backend.available()
    if not ok:
        print(f"{args.backend} backend unavailable: {why}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    cluster = backend.start()
    try:
        info = {"backend": cluster.backend, "server": cluster.server, "crds": cluster.installed_crds,
                "capabilities": sorted(cluster.capabilities), "workdir": str(cluster.workdir),
                "start_seconds": round(time.monotonic() - t0, 2),
                "timings": {k: round(v, 3) for k, v in cluster.timings.items()},
                "kubeconfig": str(cluster.kubeconfig_path)}
        print(json.dumps(info, indent=2), flush=True)
        if args.check:
            failures = _checks(cluster)
            for f in failures:
                print("FAIL", f)
            return 1 if failures else 0
        print("cluster up; Ctrl-C to tear down", file=sys.stderr, flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)     # raises KeyboardInterrupt
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        return 0
    finally:
        cluster.close()
        print("torn down", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
