"""The list-and-watch mirror the real engine's polls read (harness/backends/watchcache.py): against a
scripted API server (list, a watch stream the test writes to, 410 Gone) and against the local cluster
(read-your-writes, nothing left running)."""
from __future__ import annotations

import json
import queue
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from harness.backends.kubeclient import RestClient
from harness.backends.watchcache import CachedReads, WatchCache, WatchLagging


def _pod(name: str, rv: int, ns: str = "default") -> dict:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": str(rv)}}


class ScriptedServer:
    """Serves /api/v1/pods: a list of `items` at `rv`, and watches fed from `events` (None ends one)."""

    def __init__(self):
        self.items: list[dict] = []
        self.rv = 1
        self.lists = 0
        self.watches: list[dict] = []          # each watch's query
        self.events: queue.Queue = queue.Queue()
        self.closed = threading.Event()
        self.conns: list[socket.socket] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                super().setup()
                outer.conns.append(self.connection)

            def do_GET(self):
                q = parse_qs(urlparse(self.path).query)
                if urlparse(self.path).path != "/api/v1/pods":
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if "watch" not in q:
                    outer.lists += 1
                    body = json.dumps({"metadata": {"resourceVersion": str(outer.rv)}, "items": outer.items}).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                outer.watches.append(q)
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while not outer.closed.is_set():
                    try:
                        ev = outer.events.get(timeout=0.05)
                    except queue.Empty:
                        continue
                    if ev is None:
                        self.wfile.write(b"0\r\n\r\n")
                        return
                    line = json.dumps(ev).encode() + b"\n"
                    try:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                    except OSError:
                        return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False          # server_close joins every connection's thread
        self.httpd.block_on_close = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        """Ends every watch and keep-alive connection, then joins their threads: nothing outlives the test."""
        self.closed.set()
        self.events.put(None)
        self.httpd.shutdown()
        for conn in self.conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    s = ScriptedServer()
    yield s
    s.close()


def _until(check, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within 5 s"
        time.sleep(0.01)


def test_list_then_watch_mirrors_adds_updates_and_deletes(server):
    server.items, server.rv = [_pod("a", 5)], 7
    cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
    try:
        assert [p["metadata"]["name"] for p in cache.list("Pod")] == ["a"]
        assert cache.list("Pod")[0]["kind"] == "Pod"        # stamped as the API's lists are by kubeclient
        _until(lambda: server.watches)
        assert server.watches[0]["resourceVersion"] == ["7"]       # watched from the list's resourceVersion
        server.events.put({"type": "ADDED", "object": _pod("b", 8, ns="other")})
        server.events.put({"type": "MODIFIED", "object": {**_pod("a", 9), "spec": {"nodeName": "n"}}})
        _until(lambda: cache.get("Pod", "a", "default").get("spec"))
        assert [p["metadata"]["name"] for p in cache.list("Pod")] == ["a", "b"]
        assert [p["metadata"]["name"] for p in cache.list("Pod", "other")] == ["b"]
        server.events.put({"type": "DELETED", "object": _pod("a", 10)})
        _until(lambda: cache.get("Pod", "a") is None)
        server.events.put({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "12"}}})
        cache.wrote({"kind": "Pod", "metadata": {"resourceVersion": "12"}})
        cache.catch_up("Pod", timeout=5.0)        # a bookmark moves the watch's resourceVersion on
    finally:
        cache.close()
    assert not cache._threads


def test_an_idle_poll_wakes_on_a_change_not_on_a_bookmark(server):
    """Settler.idle: a poll with nothing to watch closely waits for the next change of a watched object
    (wait_change), at most its timeout."""
    cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
    try:
        _until(lambda: server.watches)
        seen = cache.changes
        t = time.monotonic()
        assert cache.wait_change(seen, 0.2) == seen and time.monotonic() - t >= 0.2
        server.events.put({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "5"}}})
        assert cache.wait_change(seen, 0.3) == seen
        woke = []
        waiter = threading.Thread(target=lambda: woke.append(cache.wait_change(seen, 10.0)))
        waiter.start()
        server.events.put({"type": "ADDED", "object": _pod("a", 6)})
        waiter.join(5.0)
        assert woke == [seen + 1]
    finally:
        cache.close()


def test_gone_lists_again(server):
    server.items = [_pod("a", 1)]
    cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
    try:
        _until(lambda: server.watches)
        server.items, server.rv = [_pod("fresh", 20)], 20
        server.events.put({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})
        _until(lambda: [p["metadata"]["name"] for p in cache.list("Pod")] == ["fresh"])
        assert server.lists == 2
        _until(lambda: len(server.watches) == 2)
        assert server.watches[1]["resourceVersion"] == ["20"]
    finally:
        cache.close()


def test_a_write_not_delivered_names_the_lagging_watch(server):
    cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
    try:
        cache.wrote({"kind": "Pod", "metadata": {"resourceVersion": "99"}})
        cache.wrote({"kind": "Node", "metadata": {"resourceVersion": "100"}})     # a kind not mirrored: no wait
        with pytest.raises(WatchLagging, match=r"watch of pods has not delivered resourceVersion 99 \(its last: 1\)"):
            cache.catch_up("Pod", timeout=0.2)
        # a heartbeat's read does not queue behind the harness's writes: what the watch has delivered
        assert cache.peek("Pod", "a") is None
        server.events.put({"type": "ADDED", "object": _pod("a", 99)})
        assert [p["metadata"]["name"] for p in cache.list("Pod")] == ["a"]       # list() waits for it
    finally:
        cache.close()


def test_cached_reads_answer_mirrored_kinds_and_pass_the_rest_through(server):
    server.items = [_pod("a", 1)]

    class Cluster:
        def list(self, kind, namespace=None):
            return [f"cluster {kind}"]

        def get(self, kind, name, namespace=None):
            return f"cluster {kind}/{name}"
        admin = "the admin client"

    cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
    try:
        reads = CachedReads(Cluster(), cache)
        assert [p["metadata"]["name"] for p in reads.list("Pod")] == ["a"]
        assert reads.list("Node") == ["cluster Node"]
        assert reads.get("Node", "n") == "cluster Node/n"
        assert reads.peek("Pod", "a")["metadata"]["name"] == "a" and reads.peek("Node", "n") == "cluster Node/n"
        assert reads.admin == "the admin client"
    finally:
        cache.close()


def test_close_wakes_a_blocked_watch(server):
    cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
    _until(lambda: server.watches)
    t0 = time.monotonic()
    cache.close()
    assert not cache._threads and time.monotonic() - t0 < 5.0
    assert not [t for t in threading.enumerate() if t.name == "watch-Pod"]


def test_local_cluster_reads_its_own_writes(cluster):
    """Every write the cluster's clients make is seen by the next read of the mirror, and unwatch stops it."""
    cache = cluster.watch(("Node", "Pod"))
    try:
        for i in range(5):
            node = cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"w{i}"}})
            assert cache.get("Node", f"w{i}")["metadata"]["resourceVersion"] == node["metadata"]["resourceVersion"]
        cluster.admin.patch("Node", "w0", {"metadata": {"labels": {"x": "y"}}})
        assert cache.get("Node", "w0")["metadata"]["labels"] == {"x": "y"}
        assert [n["metadata"]["name"] for n in cache.list("Node") if n["metadata"]["name"].startswith("w")] == \
            [f"w{i}" for i in range(5)]
    finally:
        cluster.unwatch(cache)
    assert cache not in cluster.watches
    assert not [t for t in threading.enumerate() if t.name.startswith("watch-")]


def test_close_right_after_start_raises_nothing(server):
    """Closing while a watch is being opened or read (a run's release): the watch thread closes its own
    response; closing it from outside too raced that ("I/O operation on closed file", seen under -n 6)."""
    for _ in range(20):
        cache = WatchCache(RestClient(server.url, ca=""), ("Pod",)).start()
        cache.close()
        assert not cache._threads
