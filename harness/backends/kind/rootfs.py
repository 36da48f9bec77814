"""The Debian root filesystem of the node image, made with debootstrap from the configured Debian
mirror (no container registry): systemd, containerd and runc from Debian, as in
("Root filesystem and base image"), after sigs.k8s.io/kind v0.33.0
images/base/Dockerfile.

The tarball is cached under <harness cache>/kind/rootfs/, keyed by suite and package list; it is
the slowest I/O step of the node-image build and does not depend on the Kubernetes version.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.backends.kind.errors import KindBuildError

SUITE = "bookworm"
# kind's base image package set (kind v0.33.0 images/base/Dockerfile), with containerd and runc from
# Debian instead of kind's own builds, and dbus for systemd's bus (kind v0.33.0 images/base/Dockerfile;
# sigs.k8s.io/kind v0.33.0 images/base/Dockerfile).
PACKAGES = ("systemd", "systemd-sysv", "dbus", "containerd", "runc", "iptables", "nftables", "conntrack",
            "ethtool", "socat", "iproute2", "procps", "kmod", "ca-certificates", "libseccomp2", "pigz",
            "util-linux", "mount", "ebtables", "jq")


def key() -> str:
    return hashlib.sha256(f"{SUITE}:{','.join(sorted(PACKAGES))}".encode()).hexdigest()[:10]


def mirror() -> str:
    """The Debian mirror apt already uses (deb822 or one-line sources), else deb.debian.org."""
    if m := os.environ.get("HARNESS_DEBIAN_MIRROR"):
        return m
    for f in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        try:
            text = f.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("URIs:") and "security" not in line:
                return line.split()[1]
            if line.startswith("deb ") and "security" not in line:
                return [w for w in line.split()[1:] if "://" in w][0]
    return "http://deb.debian.org/debian"


def build_rootfs(cache: Path, log) -> Path:
    """The cached rootfs tarball, made with debootstrap (as root) when it is missing; under a lock, so a
    build started early beside the Go builds (`python -m harness.backends build --kind-rootfs`, as
    scripts/test.sh does) is waited for, not repeated."""
    out = cache / "rootfs" / f"debian-{SUITE}-{key()}.tar"
    if out.exists():
        return out
    from filelock import FileLock, Timeout
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out.parent / "rootfs.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log(f"another build is making the root filesystem ({out.name}); waiting for it")
        lock.acquire()
    try:
        if out.exists():
            return out
        return _debootstrap(out, log)
    finally:
        lock.release()


def _debootstrap(out: Path, log) -> Path:
    if shutil.which("debootstrap") is None:
        raise KindBuildError("debootstrap is not installed (apt-get install -y debootstrap)")
    if os.geteuid() != 0:
        raise KindBuildError("debootstrap needs root")
    work = Path(tempfile.mkdtemp(prefix="rootfs-", dir=str(out.parent)))
    try:
        target = work / "root"
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(target), mirror()]
        log(f"debootstrap {SUITE} ({len(PACKAGES)} packages) from {mirror()}")
        from harness.backends.binaries.controlplane import Heartbeat
        with Heartbeat(f"running debootstrap {SUITE}", echo=True, tag="kind-image"):
            proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise KindBuildError(f"debootstrap failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-2000:]}")
        for deb in (target / "var" / "cache" / "apt" / "archives").glob("*.deb"):
            deb.unlink()
        tmp = out.with_suffix(".tmp")
        subprocess.run(["tar", "-C", str(target), "-cf", str(tmp), "."], check=True)
        os.replace(tmp, out)
        return out
    finally:
        _unmount_under(work)       # debootstrap mounts /proc, /sys (and may bind /dev) in the target
        shutil.rmtree(work, ignore_errors=True)


def _unmount_under(root: Path) -> None:
    """Lazily unmount every mount point below `root`, deepest first, so removing `root` can never
    reach into a mounted /proc, /sys or a bind-mounted host /dev."""
    prefix = str(root.resolve()) + "/"
    try:
        points = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return
    for mp in sorted((m for m in points if m.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", mp], capture_output=True)
