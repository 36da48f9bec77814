"""A thin REST client for the harness's kinds: one keep-alive `requests.Session` per identity,
client-cert authenticated, against the REST paths of `kinds.KINDS`.

Why not the official `kubernetes` package: a scenario makes 30-100 calls; the generated client
spends most of a call (de)serialising into model classes, while here objects stay plain dicts and
one TLS connection per identity is reused. Non-2xx `Status` answers become `APIRejected` with the
server's full message and its `details.causes`.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any, Callable

import requests

from harness.backends.base import APIRejected, Cause
from harness.backends.kinds import KINDS, Kind

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"

# field.Error.ErrorBody() prefixes (apimachinery pkg/util/validation/field/errors.go); the cause's
# `message` carries "<type>: [<value>: ]<detail>" - Cause.message keeps only the detail (the rule text).
_TYPES_WITH_VALUE = ("Invalid value", "Unsupported value", "Duplicate value", "Not found", "Too long",
                     "Too many")
_TYPES_NO_VALUE = ("Required value", "Forbidden", "Internal error")


_BARE_VALUE = re.compile(r"^(-?\d+(\.\d+)?|true|false|null|<nil>|\{\}|\[\]): ")


def _skip_value(s: str) -> str:
    """Drop a printed value before the detail: 'Invalid value: "v": detail' -> 'detail'.

    Since k8s 1.36, CEL errors on objects/maps omit the value ('Invalid value: <detail>'; older
    servers printed '"object": '), so without a recognisable value `s` is already the detail.
    """
    if s.startswith('"'):
        i = 1
        while i < len(s):
            if s[i] == "\\":
                i += 2
                continue
            if s[i] == '"':
                break
            i += 1
        rest = s[i + 1:]
        return rest[2:] if rest.startswith(": ") else s
    m = _BARE_VALUE.match(s)
    return s[m.end():] if m else s


def cause_detail(message: str) -> str:
    """'Invalid value: "object": label domain "x" is restricted' -> 'label domain "x" is restricted'."""
    for t in _TYPES_NO_VALUE:
        if message.startswith(t + ": "):
            return message[len(t) + 2:]
    for t in _TYPES_WITH_VALUE:
        if message.startswith(t + ": "):
            return _skip_value(message[len(t) + 2:])
    return message


def rejection(resp: requests.Response) -> APIRejected:
    try:
        body = resp.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict) or body.get("kind") != "Status":
        text = resp.text.strip()
        return APIRejected(resp.status_code, resp.reason or "", text or f"HTTP {resp.status_code}")
    details = body.get("details") or {}
    causes = [Cause(c.get("field", ""), cause_detail(c.get("message", "")))
              for c in details.get("causes") or ()]
    return APIRejected(int(body.get("code") or resp.status_code), body.get("reason", ""),
                       body.get("message", ""), causes)


def path_for(k: Kind, name: str | None = None, namespace: str | None = None, sub: str | None = None) -> str:
    base = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
    if k.namespaced:
        if namespace is None:
            p = f"{base}/{k.plural}"            # all namespaces (list only)
        else:
            p = f"{base}/namespaces/{namespace}/{k.plural}"
    else:
        p = f"{base}/{k.plural}"
    if name is not None:
        p += f"/{name}"
    if sub:
        p += f"/{sub}"
    return p


class RestClient:
    """One identity's view of the API server. Thread-safe enough for the harness (one session per
    thread would be the next step; requests' pool handles concurrent use of one Session)."""

    def __init__(self, server: str, ca: str, cert: tuple[str, str] | None = None, timeout: float = 30.0):
        self.server = server.rstrip("/")
        self.timeout = timeout
        self.s = requests.Session()
        self.s.verify = ca
        if cert:
            self.s.cert = cert
        self.s.headers.update({"Accept": JSON, "Content-Type": JSON,
                               "User-Agent": "karpenter-harness/0"})
        self.s.trust_env = False     # never route loopback calls through a proxy from the env
        # told of every object a write answered with (RealCluster: its watch caches' read-your-writes)
        self.on_write: Callable[[dict], None] | None = None
        # the group/version each kind is read and written at: KINDS, or a release's own where its CRD
        # serves another (RealCluster.install_crds: provider v0.7.5's AKSNodeClass is v1alpha2 only)
        self.kinds: dict[str, Kind] = KINDS

    # -- raw ---------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, params: dict | None = None,
                content_type: str = JSON, ok_missing: bool = False, retry_429: bool = True) -> dict | None:
        data = None if body is None else json.dumps(body, separators=(",", ":"))
        headers = {"Content-Type": content_type} if content_type != JSON else None
        deadline = time.monotonic() + self.timeout
        while True:
            r = self.s.request(method, self.server + path, data=data, params=params, headers=headers,
                               timeout=self.timeout)
            # 429 "storage is (re)initializing" while a resource's watch cache warms up (fresh
            # server or CRD just (re)established): retry as client-go does, honouring Retry-After.
            if r.status_code != 429 or not retry_429 or time.monotonic() > deadline:
                break
            time.sleep(min(float(r.headers.get("Retry-After") or 0.1), 0.2))
        if r.status_code == 404 and ok_missing:
            return None
        if r.status_code >= 300:
            raise rejection(r)
        if not r.content:
            return {}
        out = r.json()
        if self.on_write is not None and method in ("POST", "PUT", "PATCH") and isinstance(out, dict):
            self.on_write(out)
        return out

    def close(self) -> None:
        self.s.close()

    # -- typed by kinds.KINDS ------------------------------------------------------------------------
    @staticmethod
    def _ns(k: Kind, obj_or_ns: dict | str | None) -> str | None:
        if not k.namespaced:
            return None
        if isinstance(obj_or_ns, dict):
            return (obj_or_ns.get("metadata") or {}).get("namespace") or "default"
        return obj_or_ns or "default"

    @staticmethod
    def _stamp(k: Kind, obj: dict) -> dict:
        obj.setdefault("apiVersion", k.api_version)
        obj.setdefault("kind", k.kind)
        return obj

    def create(self, obj: dict, dry_run: bool = False) -> dict:
        k = self.kinds[obj["kind"]]
        body = dict(obj)
        body.setdefault("apiVersion", k.api_version)
        return self._stamp(k, self.request("POST", path_for(k, namespace=self._ns(k, obj)), body,
                                           params={"dryRun": "All"} if dry_run else None))

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        k = self.kinds[kind]
        out = self.request("GET", path_for(k, name, self._ns(k, namespace)), ok_missing=True)
        return None if out is None else self._stamp(k, out)

    def list(self, kind: str, namespace: str | None = None, **params) -> list[dict]:
        k = self.kinds[kind]
        ns = namespace if (k.namespaced and namespace) else None
        out = self.request("GET", path_for(k, namespace=ns), params=params or None)
        return [self._stamp(k, o) for o in out.get("items") or ()]

    def update(self, obj: dict) -> dict:
        k = self.kinds[obj["kind"]]
        return self._stamp(k, self.request("PUT", path_for(k, obj["metadata"]["name"], self._ns(k, obj)), obj))

    def update_status(self, obj: dict) -> dict:
        k = self.kinds[obj["kind"]]
        return self._stamp(k, self.request(
            "PUT", path_for(k, obj["metadata"]["name"], self._ns(k, obj), "status"), obj))

    def patch(self, kind: str, name: str, patch: dict, namespace: str | None = None,
              sub: str | None = None) -> dict:
        k = self.kinds[kind]
        return self._stamp(k, self.request("PATCH", path_for(k, name, self._ns(k, namespace), sub), patch,
                                           content_type=MERGE_PATCH))

    def delete(self, kind: str, name: str, namespace: str | None = None, grace_seconds: int | None = None,
               ok_missing: bool = False) -> None:
        k = self.kinds[kind]
        params = {"gracePeriodSeconds": str(grace_seconds)} if grace_seconds is not None else None
        self.request("DELETE", path_for(k, name, self._ns(k, namespace)), params=params, ok_missing=ok_missing)

    def delete_collection(self, kind: str, namespace: str | None = None, grace_seconds: int | None = 0) -> None:
        k = self.kinds[kind]
        params = {"gracePeriodSeconds": str(grace_seconds)} if grace_seconds is not None else None
        self.request("DELETE", path_for(k, namespace=self._ns(k, namespace) if k.namespaced else None),
                     params=params, ok_missing=True)

    def evict(self, name: str, namespace: str) -> None:
        """The pod's eviction subresource (policy/v1 Eviction), as `kubectl drain` posts it; a 429 (a
        PodDisruptionBudget allows no disruption) is the caller's to retry, not this client's."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        self.request("POST", path_for(KINDS["Pod"], name, namespace, "eviction"), body, retry_429=False)

    def bind(self, pod: dict, node_name: str) -> dict:
        md = pod["metadata"]
        ns = md.get("namespace") or "default"
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": md["name"], "namespace": ns},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        self.request("POST", path_for(KINDS["Pod"], md["name"], ns, "binding"), binding)
        return self.get("Pod", md["name"], ns) or {}

