"""A list-and-watch mirror of some kinds of a real API server, read instead of listing them.

Why: the real engine's settle reads the pods, NodeClaims, Nodes, NodePools and Events every poll. Listed
afresh each time, the polls cost each worker's API server and etcd about a quarter of a core and every poll
~0.1 s of round trips (docs/benchmarks/real-engine.md). A watch delivers only what changed, as client-go's
informers do (k8s.io/client-go v0.34 tools/cache/reflector.go ListAndWatch: list, watch from the list's
resourceVersion, list again when the server answers 410 Gone).

Reads see the cache's own writes: every write the cluster's clients make of a cached kind is noted
(`wrote`), and a read waits until that kind's watch has delivered the write's resourceVersion
(`catch_up`), so a poll right after an apply sees what was applied. Others' writes arrive as they arrive,
as they do in an informer.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field

import requests

from harness.backends.base import APIRejected
from harness.backends.kinds import KINDS, Kind
from harness.backends.kubeclient import RestClient, path_for

WATCH_SECONDS = 240          # one watch request's server-side timeout; the watch resumes from where it was
CATCH_UP_SECONDS = 20.0      # the longest a read waits for a kind's watch to deliver a write
RETRY_SECONDS = 0.2          # after a broken watch or a kind not served yet (a CRD not installed)


class WatchLagging(RuntimeError):
    """A kind's watch did not deliver a write within CATCH_UP_SECONDS: its cause, not a bare timeout."""


def _rv(obj: dict) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:          # resourceVersions are opaque to clients; an etcd-backed server's are integers
        return 0


@dataclass
class _Store:
    """One kind's mirror: objects by (namespace, name) and the last resourceVersion its watch delivered."""
    kind: Kind
    items: dict[tuple[str, str], dict] = field(default_factory=dict)
    rv: int = 0
    synced: bool = False
    wanted: int = 0              # the latest resourceVersion of a write of this kind by the cluster's clients


class WatchCache:
    """The mirror of `kinds`: one thread per kind holding a list-then-watch open on its own connection."""

    def __init__(self, client: RestClient, kinds: tuple[str, ...]):
        self.client = client
        self.kinds = frozenset(kinds)
        self._stores = {k: _Store(getattr(client, "kinds", KINDS)[k]) for k in kinds}
        self._cond = threading.Condition()
        self._stopped = threading.Event()
        self._responses: dict[str, requests.Response] = {}
        self._threads: list[threading.Thread] = []
        self.errors: list[str] = []
        self.changes = 0          # objects added, changed or deleted since the start (wait_change)

    # -- lifetime --------------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> "WatchCache":
        for kind in sorted(self.kinds):
            t = threading.Thread(target=self._run, args=(kind,), name=f"watch-{kind}", daemon=True)
            t.start()
            self._threads.append(t)
        deadline = time.monotonic() + timeout
        with self._cond:
            while not all(s.synced for s in self._stores.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    late = sorted(k for k, s in self._stores.items() if not s.synced)
                    raise WatchLagging(f"the first list of {', '.join(late)} did not answer in {timeout:.0f}s"
                                       + (f": {self.errors[-1]}" if self.errors else ""))
                self._cond.wait(left)
        return self

    def close(self) -> None:
        """Stop every watch: its connection is shut down under the blocked read, and its thread joined."""
        self._stopped.set()
        for resp in list(self._responses.values()):
            _shutdown(resp)
        for t in self._threads:
            t.join(timeout=5.0)
        self._threads = [t for t in self._threads if t.is_alive()]

    # -- reads -----------------------------------------------------------------------------------------
    def list(self, kind: str, namespace: str | None = None, *, shared: bool = False) -> list[dict]:
        """The kind's objects in the API's order (namespace, then name); all namespaces when None."""
        self.catch_up(kind)
        s = self._stores[kind]
        with self._cond:
            keys = sorted(k for k in s.items if namespace is None or not s.kind.namespaced or k[0] == namespace)
            return [s.items[k] for k in keys]

    def get(self, kind: str, name: str, namespace: str | None = None, *, shared: bool = False) -> dict | None:
        self.catch_up(kind)
        return self.peek(kind, name, namespace)

    def peek(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """As `get`, without waiting for the watch to deliver the harness's own latest write of the kind: for a
        reader on a thread of its own that must not queue behind the harness's writes (a heartbeat)."""
        s = self._stores[kind]
        with self._cond:
            return s.items.get(((namespace or "default") if s.kind.namespaced else "", name))

    def wrote(self, obj: dict) -> None:
        """A write by one of the cluster's clients answered with `obj`: reads of its kind wait for it."""
        s = self._stores.get(obj.get("kind") or "")
        if s is not None:
            with self._cond:
                s.wanted = max(s.wanted, _rv(obj))

    def wait_change(self, seen: int, timeout: float) -> int:
        """Until an object changed after `seen` changes (a poll's `changes` read before it), or `timeout`;
        the count then. What an idle poll waits on instead of a fixed tick."""
        with self._cond:
            if self.changes == seen:
                self._cond.wait_for(lambda: self.changes != seen or self._stopped.is_set(), timeout)
            return self.changes

    def catch_up(self, kind: str, timeout: float = CATCH_UP_SECONDS) -> None:
        """Until the watch of `kind` has delivered the cluster's own latest write of it."""
        s = self._stores[kind]
        deadline = time.monotonic() + timeout
        with self._cond:
            while s.rv < s.wanted:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WatchLagging(
                        f"the watch of {s.kind.plural} has not delivered resourceVersion {s.wanted} "
                        f"(its last: {s.rv}) {timeout:.0f}s after the harness wrote it"
                        + (f"; last watch error: {self.errors[-1]}" if self.errors else ""))
                self._cond.wait(left)

    # -- the watch threads -----------------------------------------------------------------------------
    def _run(self, kind: str) -> None:
        s = self._stores[kind]
        session = requests.Session()
        session.verify, session.cert, session.trust_env = self.client.s.verify, self.client.s.cert, False
        relist = True
        try:
            while not self._stopped.is_set():
                try:
                    if relist:
                        self._list(s)
                        relist = False
                    relist = self._watch(s, session)
                except (requests.RequestException, OSError, ValueError, APIRejected) as e:
                    if self._stopped.is_set():
                        return
                    self.errors.append(f"{s.kind.plural}: {e}")
                    del self.errors[:-20]
                    relist = relist or isinstance(e, APIRejected)
                    self._stopped.wait(RETRY_SECONDS)
        finally:
            session.close()

    def _list(self, s: _Store) -> None:
        """The kind's objects now (through the client: its retry of 429 and its `rejection`), and the
        resourceVersion to watch from."""
        body = self.client.request("GET", path_for(s.kind), ok_missing=True)
        if body is None:                  # a CRD kind not installed yet: nothing to mirror, look again
            with self._cond:
                s.items, s.synced = {}, True
                self._cond.notify_all()
            raise APIRejected(404, "NotFound", f"{s.kind.plural} not served yet")
        items = {_key(s.kind, o): _stamped(s.kind, o) for o in body.get("items") or ()}
        with self._cond:
            s.items, s.synced = items, True
            s.rv = max(s.rv, int(body["metadata"]["resourceVersion"]))
            self.changes += 1
            self._cond.notify_all()

    def _watch(self, s: _Store, session: requests.Session) -> bool:
        """Hold one watch open from the store's resourceVersion; True when the server wants a new list."""
        params = {"watch": "1", "resourceVersion": str(s.rv), "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(WATCH_SECONDS)}
        with session.get(self.client.server + path_for(s.kind), params=params, stream=True,
                         timeout=(self.client.timeout, None)) as r:
            if r.status_code == 410:
                return True
            if r.status_code >= 300:
                raise APIRejected(r.status_code, r.reason or "", r.text[:200])
            self._responses[s.kind.kind] = r
            try:
                if self._stopped.is_set():
                    return False
                for line in r.iter_lines(chunk_size=None):
                    if not line:
                        continue
                    event = json.loads(line)
                    kind, obj = event.get("type"), event.get("object") or {}
                    if kind == "ERROR":
                        return int(obj.get("code") or 0) == 410      # "too old resource version": list again
                    self._apply(s, kind, obj)
            finally:
                self._responses.pop(s.kind.kind, None)
        return False

    def _apply(self, s: _Store, kind: str, obj: dict) -> None:
        with self._cond:
            s.rv = max(s.rv, _rv(obj))
            if kind == "DELETED":
                s.items.pop(_key(s.kind, obj), None)
            elif kind != "BOOKMARK":
                s.items[_key(s.kind, obj)] = _stamped(s.kind, obj)
            self.changes += kind != "BOOKMARK"
            self._cond.notify_all()


def _stamped(k: Kind, obj: dict) -> dict:
    """As the API's single-object answers carry them (a list's and a watch's items do not)."""
    obj.setdefault("apiVersion", k.api_version)
    obj.setdefault("kind", k.kind)
    return obj


def _key(k: Kind, obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace") or "default") if k.namespaced else "", meta["name"]


def _shutdown(resp: requests.Response) -> None:
    """Wake the thread blocked reading this streamed response: shut its socket down under it. The thread
    closes the response itself on its way out (closing it here too raced that close: "I/O operation on
    closed file" from http.client's flush)."""
    try:
        sock = resp.raw.connection.sock
    except AttributeError:
        return
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except (OSError, ValueError):
            pass


class CachedReads:
    """`cluster` with `list` and `get` of the cached kinds answered from `cache`: what the real engine's polls
    read. Every other call (writes, other kinds) goes to the cluster itself."""

    def __init__(self, cluster, cache: WatchCache):
        self.cluster, self.cache = cluster, cache

    def list(self, kind: str, namespace: str | None = None, *, shared: bool = False) -> list[dict]:
        if kind in self.cache.kinds:
            return self.cache.list(kind, namespace)
        return self.cluster.list(kind, namespace)

    def get(self, kind: str, name: str, namespace: str | None = None, *, shared: bool = False) -> dict | None:
        if kind in self.cache.kinds:
            return self.cache.get(kind, name, namespace)
        return self.cluster.get(kind, name, namespace)

    def peek(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """As `get`, not waiting for the harness's own writes of a cached kind (WatchCache.peek)."""
        if kind in self.cache.kinds:
            return self.cache.peek(kind, name, namespace)
        return self.cluster.get(kind, name, namespace)

    def __getattr__(self, name: str):
        return getattr(self.cluster, name)
