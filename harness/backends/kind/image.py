"""The kind node image, built without a container registry (what sigs.k8s.io/kind v0.33.0
pkg/build/nodeimage/build.go and images/base/Dockerfile make; k8s.io/kubernetes v1.36.3
cmd/kubeadm/app/constants/constants.go):

    python -m harness.backends build --kind

1. binaries: kubelet/kubeadm/kubectl/kube-proxy (`build-binaries.sh --node`) and the control plane
   (kube-apiserver, kube-controller-manager, kube-scheduler, etcd: the existing cached build), all
   from the Go module proxy; pause and the CNI plugins (`build-node-extras.sh`);
2. a Debian root filesystem from debootstrap (`rootfs.py`), imported into Docker;
3. the base image: that root filesystem plus kind's node files (entrypoint, systemd units, containerd
   config) taken from the kind Go module, with the edits a host without CAP_SYS_RESOURCE needs;
4. one image per name `kubeadm config images list` prints, FROM scratch + the static binary, under
   exactly that name (so nothing is ever pulled);
5. the node image: the base image with the node binaries and those images imported into the node's
   containerd (content only; containerd 1.6's CRI unpacks on first use), committed.

Every step is cached: binaries and the rootfs under <harness cache>, images in Docker under tags that
carry a hash of their inputs. A second build finds the node image tag and returns in seconds.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.binaries import controlplane as binmod
from harness.backends.kind import rootfs
from harness.backends.kind.errors import KindBuildError

KIND_VERSION = os.environ.get("KIND_VERSION", "v0.33.0")      # whose node files (images/base/files) we use
CNI_VERSION = os.environ.get("CNI_VERSION", "v1.9.1")         # kind v0.33.0's CNI_PLUGINS_VERSION
REPO = "karpenter-harness/kind"
LABEL = "karpenter-harness.kind"
EXTRAS_SCRIPT = Path(__file__).with_name("build-node-extras.sh")
CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd")
# kubeadm's addon phases whose images may not be built: CoreDNS is a ~25 min build done only on request
# (`build --kind --coredns`); kube-proxy's image is built from the Go-built binary and the Debian root
# filesystem's iptables; the node image lists the phases its cluster must skip in SKIP_FILE (kubeadm's
# addon phases: k8s.io/kubernetes v1.36.3 cmd/kubeadm/app/cmd/phases/init/addons.go; k8s.io/kubernetes v1.36.3
# cmd/kubeadm/app/constants/constants.go CoreDNSVersion).
ADDON_IMAGES = {"addon/coredns": "coredns", "addon/kube-proxy": "kube-proxy"}
SKIP_FILE = "/kind/harness-skip-phases"
ENTRYPOINT_IMAGES = ("pause", "coredns")          # run as the image's entrypoint, not a named command


def log(msg: str) -> None:
    print(f"[kind-image] {msg}", file=sys.stderr, flush=True)


def kind_cache() -> Path:
    return binmod.cache_dir() / "kind"


def extras_dir() -> Path:
    return kind_cache() / f"extras-cni-{CNI_VERSION}"


def record_path() -> Path:
    """Where the last build of this Kubernetes version and node-image revision is described (tag,
    timings); per revision, so checkouts of different revisions sharing the cache each find theirs."""
    return kind_cache() / binmod.versions()["k8s"] / f"node-image-r{NODE_IMAGE_REV}.json"


@dataclass
class NodeImage:
    tag: str
    k8s_version: str
    images: dict[str, str]                    # registry name kubeadm expects -> what it holds
    timings: dict[str, float] = field(default_factory=dict)
    built: bool = False                       # False: found in Docker from an earlier build

    def to_json(self) -> dict:
        return {"tag": self.tag, "k8s_version": self.k8s_version, "images": self.images,
                "timings": {k: round(v, 1) for k, v in self.timings.items()}, "built": self.built}


def _hash(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def _file_id(p: Path) -> str:
    st = p.stat()
    return f"{p.name}:{st.st_size}:{int(st.st_mtime)}"


def _client():
    import docker

    from harness.backends.container import require_docker
    require_docker()            # a daemon answers, or DockerUnavailable says how to start one
    return docker.from_env(timeout=600)


def _image_exists(client, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except Exception:   # noqa: BLE001 - ImageNotFound
        return False


# -- 1. binaries ----------------------------------------------------------------------------------------
def node_binaries(echo: bool) -> dict[str, Path]:
    for attempt in (0, 1):
        found = {n: binmod.find_node_binary(n) for n in binmod.NODE_BINARIES}
        if all(found.values()):
            return found
        if attempt == 0:
            binmod.build_node(echo=echo)
    raise KindBuildError(f"node binaries missing after the build: {[n for n, p in found.items() if p is None]}")


def control_plane_binaries(echo: bool) -> dict[str, Path]:
    bs = binmod.ensure_binaries(build=True, need=CONTROL_PLANE, echo=echo)
    return {n: bs[n] for n in CONTROL_PLANE}


def extras(echo: bool, coredns_version: str | None = None) -> dict[str, Path]:
    """pause and the CNI plugins, and CoreDNS at `coredns_version` when asked (or built before)."""
    out = extras_dir()
    go = binmod.go_binary()
    want_coredns = coredns_version is not None and not (out / "coredns").exists()
    if want_coredns or not ((out / "pause").exists() and (out / "cni" / "ptp").exists()):
        if go is None:
            raise KindBuildError("no Go toolchain to build pause, the CNI plugins and CoreDNS")
        env = {**os.environ, "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}", "CNI_VERSION": CNI_VERSION}
        if want_coredns:
            env["COREDNS_VERSION"] = coredns_version
        binmod.run_logged(["bash", str(EXTRAS_SCRIPT), str(out), str(binmod.cache_dir() / "build" / "kind-extras")],
                           env, echo, time.monotonic())
    found = {"pause": out / "pause", "cni": out / "cni"}
    if (out / "coredns").exists():
        found["coredns"] = out / "coredns"
    return found


def kubeadm_images(kubeadm: Path, k8s: str) -> list[str]:
    """The image names kubeadm will run, exactly as it prints them (its default repository)."""
    proc = subprocess.run([str(kubeadm), "config", "images", "list", f"--kubernetes-version={k8s}"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise KindBuildError(f"kubeadm config images list failed: {proc.stderr.strip()[-500:]}")
    return [line.strip() for line in proc.stdout.splitlines() if line.strip()]


def image_component(name: str) -> str:
    """'<repo>/kube-apiserver:v1.36.3' -> 'kube-apiserver'; '<repo>/coredns/coredns:v1' -> 'coredns'."""
    return name.rsplit("/", 1)[-1].split(":", 1)[0]


# -- 2.+3. base image ------------------------------------------------------------------------------------
# Edits to kind's containerd config (sigs.k8s.io/kind v0.33.0 images/base/files/etc/containerd/config.toml)
# and units for a host without CAP_SYS_RESOURCE (sigs.k8s.io/kind v0.33.0 images/base/Dockerfile):
# no fuse-overlayfs proxy plugin, restrict_oom_score_adj, no OOMScoreAdjust; the sandbox image is the
# pause name kubeadm prints; no base_runtime_spec (its createContainer hook only fakes DMI ids).
BASE_DOCKERFILE = """\
# Built by harness/backends/kind/image.py from a debootstrap root filesystem and kind {kind}'s node files.
FROM {debian}
COPY files/ /
COPY cni/ /opt/cni/bin/
RUN chmod 0755 /usr/local/bin/* /kind/bin/* /opt/cni/bin/* \\
 && ln -sf /usr/bin/containerd /usr/local/bin/containerd \\
 && find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete \\
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
          /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
          /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \\
 && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \\
 && ln -sf /usr/lib/systemd/systemd /sbin/init \\
 && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \\
 && systemctl mask systemd-binfmt.service \\
 && mkdir -p /etc/kubernetes/manifests /kind/manifests /etc/cni/net.d
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
"""


BASE_EDITS_REV = 1      # bump when _edit_kind_files changes (part of the base image's tag)


def _edit_kind_files(files: Path, pause_image: str) -> None:
    cfg = files / "etc/containerd/config.toml"
    out, skip = [], False
    for line in cfg.read_text().splitlines():
        if line.startswith("[proxy_plugins"):
            skip = True
            continue
        if skip and line.startswith("["):
            skip = line.startswith("[proxy_plugins") or line.startswith("  ")
        if skip:
            continue
        if "base_runtime_spec" in line:
            continue
        if line.strip().startswith("sandbox_image"):
            line = f'  sandbox_image = "{pause_image}"'
        if line.strip().startswith("restrict_oom_score_adj"):
            line = "  restrict_oom_score_adj = true"
        out.append(line)
    cfg.write_text("\n".join(out) + "\n")
    unit = files / "etc/systemd/system/containerd.service"
    unit.write_text(unit.read_text().replace("OOMScoreAdjust=-999", "#OOMScoreAdjust=-999"))
    for name in ("containerd-fuse-overlayfs.service",):
        (files / "etc/systemd/system" / name).unlink(missing_ok=True)


def base_image(client, cni: Path, pause_image: str, echo: bool) -> tuple[str, float, str]:
    """(the base image's tag, seconds, the Debian root filesystem image's tag)."""
    t0 = time.monotonic()
    debian = f"{REPO}-debian:{rootfs.SUITE}-{rootfs.key()}"
    if not _image_exists(client, debian):
        tar = rootfs.build_rootfs(kind_cache(), log)
        log(f"docker import {tar.name} as {debian}")
        repo, tag = debian.rsplit(":", 1)
        client.api.import_image_from_file(str(tar), repository=repo, tag=tag)
    kind_files = binmod.go_module_dir("sigs.k8s.io/kind", KIND_VERSION) / "images" / "base" / "files"
    key = _hash(debian, KIND_VERSION, CNI_VERSION, sorted(_file_id(p) for p in cni.iterdir()), pause_image,
                BASE_DOCKERFILE, BASE_EDITS_REV)
    tag = f"{REPO}-base:{key}"
    if _image_exists(client, tag):
        return tag, time.monotonic() - t0, debian
    with tempfile.TemporaryDirectory(prefix="kind-base-", dir=str(kind_cache())) as d:
        ctx = Path(d)
        shutil.copytree(kind_files, ctx / "files", ignore=shutil.ignore_patterns("LICENSES", "README.txt"))
        for p in (ctx / "files").rglob("*"):
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        _edit_kind_files(ctx / "files", pause_image)
        shutil.copytree(cni, ctx / "cni")
        (ctx / "Dockerfile").write_text(BASE_DOCKERFILE.format(kind=KIND_VERSION, debian=debian))
        log(f"building {tag}")
        _docker_build(client, ctx, tag)
    return tag, time.monotonic() - t0, debian


def _docker_build(client, ctx: Path, tag: str) -> None:
    try:
        client.images.build(path=str(ctx), tag=tag, rm=True, forcerm=True, labels={LABEL: "image"})
    except Exception as e:   # noqa: BLE001 - BuildError carries the log
        lines = "".join(str(c.get("stream", c.get("error", ""))) for c in getattr(e, "build_log", []) or [])
        raise KindBuildError(f"docker build of {tag} failed: {e}\n{lines[-1500:]}") from None


# -- 4. images under the names kubeadm expects -------------------------------------------------------------
SCRATCH_DOCKERFILE = """\
# A stand-in for the registry image {name}: the static binary only (built by harness/backends/kind/image.py).
FROM scratch
COPY {binary} /usr/local/bin/{binary}
ENV PATH=/usr/local/bin
{entrypoint}
"""


# kube-proxy (iptables mode) runs iptables-save/-restore: the legacy xtables multi-binary (its name picks
# the tool), its libraries and extensions, copied out of the Debian root filesystem - the same userspace
# as the nodes, whose kind entrypoint picks legacy iptables on this host
# (https://github.com/kubernetes-sigs/kind/blob/v0.33.0/images/base/files/usr/local/bin/entrypoint;
# sigs.k8s.io/kind v0.33.0 images/base/Dockerfile) - onto
# scratch instead of the whole 320 MB root filesystem, which every worker's /var would carry.
XTABLES_TOOLS = ("iptables", "iptables-save", "iptables-restore", "iptables-legacy", "iptables-legacy-save",
                 "iptables-legacy-restore", "ip6tables", "ip6tables-save", "ip6tables-restore")
XTABLES_LIBS = ("libxtables.so.12", "libip4tc.so.2", "libip6tc.so.2", "libc.so.6", "libm.so.6")
KUBE_PROXY_DOCKERFILE = """\
# A stand-in for the registry image {name}: kube-proxy plus legacy iptables from {debian}
# (built by harness/backends/kind/image.py).
FROM {debian} AS userspace
FROM scratch
COPY --from=userspace /lib64/ld-linux-x86-64.so.2 /lib64/
{libs}
COPY --from=userspace /usr/lib/x86_64-linux-gnu/xtables/ /usr/lib/x86_64-linux-gnu/xtables/
{tools}
COPY kube-proxy /usr/local/bin/kube-proxy
ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""


def kube_proxy_dockerfile(name: str, debian: str) -> str:
    libs = "\n".join(f"COPY --from=userspace /lib/x86_64-linux-gnu/{lib} /lib/x86_64-linux-gnu/" for lib in XTABLES_LIBS)
    tools = "\n".join(f"COPY --from=userspace /usr/sbin/xtables-legacy-multi /usr/sbin/{t}" for t in XTABLES_TOOLS)
    return KUBE_PROXY_DOCKERFILE.format(name=name, debian=debian, libs=libs, tools=tools)


def component_images(client, names: list[str], binaries: dict[str, Path], out_dir: Path,
                     debian: str = "") -> dict[str, str]:
    """Build each image kubeadm expects that we have a binary for, `docker save` it to
    out_dir/<component>.tar; returns {image name: binary it holds}. kube-proxy's needs `debian`
    (the root filesystem image) for its iptables."""
    made: dict[str, str] = {}
    for name in names:
        comp = image_component(name)
        binary = binaries.get(comp)
        if binary is None or (comp == "kube-proxy" and not debian):
            continue
        tar = out_dir / f"{comp}.tar"
        if not _image_exists(client, name):
            with tempfile.TemporaryDirectory(prefix="kind-img-", dir=str(kind_cache())) as d:
                ctx = Path(d)
                shutil.copy2(binary, ctx / comp)
                entry = f'ENTRYPOINT ["/usr/local/bin/{comp}"]' if comp in ENTRYPOINT_IMAGES else ""
                text = (kube_proxy_dockerfile(name, debian) if comp == "kube-proxy" else
                        SCRATCH_DOCKERFILE.format(name=name, binary=comp, entrypoint=entry))
                (ctx / "Dockerfile").write_text(text)
                _docker_build(client, ctx, name)
        with open(tar, "wb") as f:
            for chunk in client.images.get(name).save(named=True):
                f.write(chunk)
        made[name] = comp
    return made


# -- 5. the node image -----------------------------------------------------------------------------------
NODE_IMAGE_REV = 5      # bump when commit_node_image changes (part of the node image's tag)


def node_image_tag(k8s: str, key: str) -> str:
    return f"{REPO}-node:{k8s}-{key}"


def _exec(container, cmd: list[str] | str, what: str) -> str:
    rc, out = container.exec_run(cmd, demux=False)
    text = (out or b"").decode("utf-8", "replace")
    if rc != 0:
        raise KindBuildError(f"{what} failed (exit {rc}): {text[-1500:]}")
    return text


def _put_file(container, path: str, data: bytes, mode: int = 0o755) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(os.path.basename(path))
        info.size, info.mode = len(data), mode
        tar.addfile(info, io.BytesIO(data))
    container.put_archive(os.path.dirname(path), buf.getvalue())


def skipped_phases(made: dict[str, str]) -> list[str]:
    """kubeadm addon phases whose image was not built. CoreDNS also needs kube-proxy: it reaches the API
    server through the `kubernetes` Service's VIP, which only kube-proxy programs (checked: without it
    the CoreDNS pods run but never become Ready)."""
    skip = [phase for phase, comp in ADDON_IMAGES.items() if comp not in made.values()]
    if "addon/kube-proxy" in skip and "addon/coredns" not in skip:
        skip.insert(0, "addon/coredns")
    return skip


def commit_node_image(client, base: str, tag: str, node_bins: dict[str, Path], tars: Path, k8s: str,
                      skip: list[str]) -> None:
    # The tars are copied in (a bind mount would be recorded as a VOLUME of the committed image).
    from harness.backends.kind.nodes import node_runtime
    try:
        runtime = node_runtime(client)
    except ValueError as e:
        raise KindBuildError(str(e)) from None
    c = client.containers.run(base, entrypoint=["sleep", "infinity"], detach=True, privileged=True,
                              labels={LABEL: "build"}, **({"runtime": runtime} if runtime else {}))
    try:
        bundle = tars / "images.tar"
        with tarfile.open(bundle, "w") as tar:
            for t in sorted(tars.glob("*.tar")):
                if t != bundle:
                    tar.add(t, arcname=f"images/{t.name}")
        with open(bundle, "rb") as f:
            c.put_archive("/kind", f)
        bundle.unlink()
        for name in ("kubelet", "kubeadm", "kubectl"):
            _put_file(c, f"/usr/bin/{name}", node_bins[name].read_bytes())
        _put_file(c, "/kind/version", (k8s + "\n").encode(), 0o644)
        _put_file(c, SKIP_FILE, (",".join(skip) + "\n").encode(), 0o644)
        # The images go into the node's containerd store (content only: --no-unpack, as kind does;
        # no snapshots on the container's own overlay rootfs, which overlayfs cannot nest on).
        script = ("set -e; containerd >/tmp/containerd.log 2>&1 & "
                  "for i in $(seq 100); do ctr version >/dev/null 2>&1 && break; sleep 0.2; done; "
                  "for t in /kind/images/*.tar; do ctr -n k8s.io images import --all-platforms --no-unpack \"$t\"; done; "
                  "ctr -n k8s.io images ls -q; kill %1; wait || true; rm -rf /tmp/containerd.log /kind/images")
        out = _exec(c, ["bash", "-c", script], "importing images into the node's containerd")
        log("imported: " + " ".join(out.split()))
        c.commit(repository=tag.rsplit(":", 1)[0], tag=tag.rsplit(":", 1)[1],
                 changes=['ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]', "CMD []", f"LABEL {LABEL}=node"])
    finally:
        c.remove(force=True)


def build(echo: bool = True, coredns: bool = False) -> NodeImage:
    """Build (or find) the node image of the pinned Kubernetes version; `coredns` also builds CoreDNS
    (the version kubeadm names) so the cluster runs kubeadm's CoreDNS addon."""
    t0 = time.monotonic()
    timings: dict[str, float] = {}
    k8s = binmod.versions()["k8s"]
    node_bins = node_binaries(echo)
    timings["node_binaries"] = time.monotonic() - t0
    cp = control_plane_binaries(echo)
    timings["control_plane_binaries"] = time.monotonic() - t0 - timings["node_binaries"]
    names = kubeadm_images(node_bins["kubeadm"], k8s)
    coredns_version = next((n.rsplit(":", 1)[1] for n in names if image_component(n) == "coredns"), None)
    t1 = time.monotonic()
    ex = extras(echo, coredns_version if coredns else None)
    timings["extras"] = time.monotonic() - t1
    pause = next((n for n in names if image_component(n) == "pause"), None)
    if pause is None:
        raise KindBuildError(f"kubeadm lists no pause image: {names}")
    binaries = {**cp, **{k: v for k, v in ex.items() if k != "cni"}, "kube-proxy": node_bins["kube-proxy"]}
    key = _hash(NODE_IMAGE_REV, k8s, rootfs.key(), KIND_VERSION, CNI_VERSION, names,
                sorted(_file_id(p) for p in [*node_bins.values(), *binaries.values()]),
                BASE_DOCKERFILE, SCRATCH_DOCKERFILE, KUBE_PROXY_DOCKERFILE, XTABLES_TOOLS, XTABLES_LIBS)
    tag = node_image_tag(k8s, key)
    images = {n: image_component(n) for n in names if image_component(n) in binaries}
    with closing(_client()) as client:
        if _image_exists(client, tag):
            timings["total"] = time.monotonic() - t0
            img = NodeImage(tag, k8s, images, timings, built=False)
            _write_record(img)
            return img
        t1 = time.monotonic()
        base, _, debian = base_image(client, ex["cni"], pause, echo)
        timings["base_image"] = time.monotonic() - t1
        t1 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="kind-tars-", dir=str(kind_cache())) as d:
            made = component_images(client, names, binaries, Path(d), debian)
            timings["component_images"] = time.monotonic() - t1
            t1 = time.monotonic()
            commit_node_image(client, base, tag, node_bins, Path(d), k8s, skipped_phases(made))
            timings["node_image"] = time.monotonic() - t1
        _prune(client, tag)
    timings["total"] = time.monotonic() - t0
    img = NodeImage(tag, k8s, made, timings, built=True)
    _write_record(img)
    return img


def _prune(client, keep: str) -> None:
    """Remove older node images of the same Kubernetes version (superseded inputs); an image a
    container still uses, or the record of another node-image revision names, stays."""
    repo, tag = keep.rsplit(":", 1)
    prefix = tag.rsplit("-", 1)[0] + "-"
    recorded = set()
    for rec in record_path().parent.glob("node-image*.json"):
        try:
            recorded.add(json.loads(rec.read_text())["tag"])
        except (OSError, ValueError, KeyError):
            pass
    for image in client.images.list(name=repo):
        for t in image.tags:
            if t != keep and t not in recorded and t.startswith(f"{repo}:{prefix}"):
                try:
                    client.images.remove(t)
                except Exception:   # noqa: BLE001 - in use
                    pass


def _write_record(img: NodeImage) -> None:
    p = record_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(img.to_json(), indent=2) + "\n")


def find_image(client=None) -> str | None:
    """The node image of the pinned version from the last build, if Docker still has it."""
    try:
        tag = json.loads(record_path().read_text())["tag"]
    except (OSError, ValueError, KeyError):
        return None
    own = client is None
    client = client or _client()
    try:
        return tag if _image_exists(client, tag) else None
    finally:
        if own:
            client.close()
