"""The controller's sandbox: its own network and mount namespaces, reached through a forwarder.

The controller binds its metrics and health ports on every interface (`:<port>`, sigs.k8s.io/karpenter
v1.14.0 pkg/operator/operator.go NewOperator), and rest.InClusterConfig() insists on
/var/run/secrets/kubernetes.io/serviceaccount (k8s.io/client-go rest/config.go InClusterConfig;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/operator/operator.go). So the controller runs under `unshare
--net --mount`:

* a private network namespace with only `lo`: its ports never face a real interface, and it can
  reach nothing at all except the ports the harness forwards into it (the fake and the API server,
  under the same 127.0.0.1:<port> as on the host) - no request can leave loopback;
* a private mount namespace with a tmpfs on /run holding the service-account token and CA, and, when
  the sandbox is given `hosts`, its own /etc/hosts (names -> 127.0.0.1: Azure's public host names,
  which then reach the fake through a forwarded port 443).

The forwarder lives in the harness process: one thread enters the namespace (setns(2) applies to the
calling thread only) and listens there; accepted connections are handed to a host-side thread that
dials the host port and pumps bytes both ways (TLS passes through end to end).
"""
from __future__ import annotations

import ctypes
import errno
import os
import queue
import shlex
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.procs import ManagedProcess

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


class SandboxError(RuntimeError):
    pass


def sandbox_available() -> tuple[bool, str]:
    """Whether unshare(1) can create the namespaces here (root, or unprivileged user namespaces)."""
    import shutil
    import subprocess
    if not shutil.which("unshare") or not shutil.which("ip"):
        return False, "the real engine needs unshare(1) and ip(8) (util-linux, iproute2) for the controller's sandbox"
    try:
        r = subprocess.run(_unshare_prefix() + ["true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"cannot create namespaces for the controller's sandbox: {e}"
    if r.returncode != 0:
        return False, f"cannot create namespaces for the controller's sandbox: {r.stderr.strip()[:200]}"
    return True, ""


def _bind_once_up(s: socket.socket, port: int, wait: float = 10.0) -> None:
    """Bind 127.0.0.1:`port` in a new namespace, whose loopback the sandbox's own script brings up
    (`ip link set lo up`) a moment after the namespace exists. A fuzz run on a loaded machine once failed
    here with EADDRNOTAVAIL; a bind while lo is still down succeeds on this kernel, so the window is
    presumably lo's bringing up itself (not reproduced): the bind is retried for `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            s.bind(("127.0.0.1", port))
            return
        except OSError as e:
            if e.errno != errno.EADDRNOTAVAIL or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _unshare_prefix() -> list[str]:
    prefix = ["unshare", "--net", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        prefix[1:1] = ["--user", "--map-root-user"]
    return prefix


@dataclass
class Forward:
    """A port inside the namespace that reaches `target_port` on the host's loopback."""
    port: int
    target_port: int


@dataclass
class Sandbox:
    """A process in private net+mount namespaces, with forwarded ports. `start()` blocks until the
    forwards listen, then lets the process `exec` its command."""
    name: str
    argv: list[str]
    env: dict[str, str]
    workdir: Path
    secrets: dict[str, Path]                  # file name -> host file, placed in the SA secrets dir
    forwards: list[Forward]
    hosts: tuple[str, ...] = ()               # names that resolve to 127.0.0.1 inside
    process: ManagedProcess | None = None
    _listeners: list[socket.socket] = field(default_factory=list)
    _conns: list[socket.socket] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    SA_DIR = "/run/secrets/kubernetes.io/serviceaccount"     # /var/run -> /run

    def _script(self, go_file: Path) -> str:
        cp = " && ".join(f"cp {shlex.quote(str(src))} {self.SA_DIR}/{name}" for name, src in self.secrets.items())
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        hosts = ""
        if self.hosts:
            f = self.workdir / f"{self.name}.hosts"
            f.write_text("127.0.0.1 localhost\n::1 localhost\n" + "".join(f"127.0.0.1 {h}\n" for h in self.hosts))
            hosts = f"mount --bind {shlex.quote(str(f))} /etc/hosts && "
        return (f"ip link set lo up && mount -t tmpfs tmpfs /run && mkdir -p {self.SA_DIR} && {cp or 'true'} && {hosts}"
                f"while [ ! -e {shlex.quote(str(go_file))} ]; do sleep 0.02; done && "
                f"exec env -i {env} " + " ".join(shlex.quote(a) for a in self.argv))

    def start(self, log_path: Path) -> ManagedProcess:
        go_file = self.workdir / f"{self.name}.go"
        argv = _unshare_prefix() + ["sh", "-c", self._script(go_file)]
        self.process = ManagedProcess(self.name, argv, log_path, cwd=str(self.workdir))
        try:
            self._open_forwards()
        except BaseException:
            self.stop()
            raise
        go_file.write_text("")
        return self.process

    def _netns_fd(self) -> int:
        """The namespace of the (still waiting) child; unshare has created it once its own child
        `sh` runs, i.e. once /proc/<pid>/ns/net differs from ours."""
        mine = os.stat("/proc/self/ns/net").st_ino
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not self.process.alive():
                raise SandboxError(f"{self.name} sandbox exited at start: {self.process.tail(5)}")
            try:
                path = f"/proc/{self.process.pid}/ns/net"
                if os.stat(path).st_ino != mine:
                    return os.open(path, os.O_RDONLY)
            except OSError:
                pass
            time.sleep(0.01)
        raise SandboxError(f"{self.name}: the network namespace did not appear within 10s")

    def _open_forwards(self) -> None:
        fd = self._netns_fd()
        handoff: queue.Queue = queue.Queue()
        errors: list[str] = []
        ready = threading.Event()

        def inside() -> None:
            # this thread (only) moves into the sandbox's network namespace
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
                for fw in self.forwards:
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    _bind_once_up(s, fw.port)
                    s.listen(64)
                    s.settimeout(0.2)
                    self._listeners.append(s)
            except OSError as e:
                errors.append(str(e))
            finally:
                os.close(fd)
                ready.set()
            while not self._stop.is_set():
                for s, fw in zip(self._listeners, self.forwards):
                    try:
                        conn, _ = s.accept()
                    except (socket.timeout, OSError):
                        continue
                    handoff.put((conn, fw))

        def host_side() -> None:
            while not self._stop.is_set():
                try:
                    conn, fw = handoff.get(timeout=0.2)
                except queue.Empty:
                    continue
                threading.Thread(target=self._relay, args=(conn, fw), daemon=True,
                                 name=f"{self.name}-relay-{fw.port}").start()

        threading.Thread(target=inside, daemon=True, name=f"{self.name}-netns").start()
        threading.Thread(target=host_side, daemon=True, name=f"{self.name}-dialer").start()
        ready.wait(10)
        if errors:
            raise SandboxError(f"{self.name}: cannot listen inside the sandbox: {errors[0]}")

    def _relay(self, conn: socket.socket, fw: Forward) -> None:
        conn.settimeout(None)
        try:
            up = socket.create_connection(("127.0.0.1", fw.target_port), timeout=10)
            up.settimeout(None)
        except OSError:
            conn.close()
            return
        with self._lock:
            self._conns += [conn, up]

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        t = threading.Thread(target=pump, args=(up, conn), daemon=True)
        t.start()
        pump(conn, up)
        t.join()
        for s in (conn, up):
            s.close()
        with self._lock:
            for s in (conn, up):
                if s in self._conns:
                    self._conns.remove(s)

    def connect(self, port: int, timeout: float = 2.0) -> socket.socket:
        """A TCP connection to 127.0.0.1:`port` inside the sandbox (the controller's metrics port):
        a short-lived thread enters the namespace, connects and hands the socket back - a socket
        keeps the namespace it was made in."""
        if self.process is None or not self.process.alive():
            raise SandboxError(f"{self.name}: not running")
        fd = os.open(f"/proc/{self.process.pid}/ns/net", os.O_RDONLY)
        out: dict = {}

        def inside() -> None:
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
                out["sock"] = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            except OSError as e:
                out["error"] = e
        try:
            t = threading.Thread(target=inside, daemon=True, name=f"{self.name}-connect-{port}")
            t.start()
            t.join()
        finally:
            os.close(fd)
        if "error" in out:
            raise SandboxError(f"{self.name}: cannot connect to port {port} inside: {out['error']}")
        return out["sock"]

    def signal(self, sig: int) -> bool:
        """Send `sig` to the process (after `exec`, the command itself: unshare forks nothing);
        False when it has exited."""
        if self.process is None or not self.process.alive():
            return False
        try:
            os.kill(self.process.pid, sig)
        except ProcessLookupError:
            return False
        return True

    def http_get(self, port: int, path: str, timeout: float = 2.0) -> str:
        """The body of a plain-HTTP GET to 127.0.0.1:`port``path` inside the sandbox."""
        with self.connect(port, timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            chunks = []
            while data := sock.recv(65536):
                chunks.append(data)
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0].decode(errors="replace")
        if " 200 " not in f"{status} ":
            raise SandboxError(f"{self.name}: GET {path} on port {port}: {status}")
        return body.decode(errors="replace")

    def stop(self) -> None:
        """Stop the process (its namespaces go with it), the listeners and every relay."""
        self._stop.set()
        if self.process is not None:
            self.process.stop()
        for s in self._listeners:
            s.close()
        self._listeners.clear()
        with self._lock:
            conns, self._conns = list(self._conns), []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
