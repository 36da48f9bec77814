"""The fields each built-in kind has, as the API server knows them: a field it does not know is dropped.

kube-apiserver decodes a built-in object into its Go type; a field the type lacks is dropped, and with
kubectl's default `fieldValidation=Warn` the API server answers a warning, `unknown field "<path>"` (the path
with list indices, e.g. `spec.containers[0].madeUp`; k8s.io/apimachinery v0.36.3 pkg/runtime/serializer/json
json.go NewSerializerWithOptions Strict, pkg/util/managedfields/... and the endpoints' warning handler). The field
tree is derived from Kubernetes' own OpenAPI v3 documents (k8s.io/kubernetes v1.36.3
api/openapi-spec/v3/*.json) into harness/data/kube-fields.json by `python -m harness.model.kube.kubefields --sync`;
harness/scenario/envelope.py says each unknown field once, at its line.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

from harness.model.data import DATA_DIR

FILE = "kube-fields.json"
KUBERNETES = ("k8s.io/kubernetes", "v1.36.3")
# the built-in kinds a scenario or a dump may hold, and the OpenAPI document and schema of each
KINDS = {
    "Pod": ("api__v1", "io.k8s.api.core.v1.Pod"),
    "Namespace": ("api__v1", "io.k8s.api.core.v1.Namespace"),
    "PersistentVolume": ("api__v1", "io.k8s.api.core.v1.PersistentVolume"),
    "PersistentVolumeClaim": ("api__v1", "io.k8s.api.core.v1.PersistentVolumeClaim"),
    "LimitRange": ("api__v1", "io.k8s.api.core.v1.LimitRange"),
    "ResourceQuota": ("api__v1", "io.k8s.api.core.v1.ResourceQuota"),
    "Deployment": ("apis__apps__v1", "io.k8s.api.apps.v1.Deployment"),
    "DaemonSet": ("apis__apps__v1", "io.k8s.api.apps.v1.DaemonSet"),
    "StatefulSet": ("apis__apps__v1", "io.k8s.api.apps.v1.StatefulSet"),
    "ReplicaSet": ("apis__apps__v1", "io.k8s.api.apps.v1.ReplicaSet"),
    "Job": ("apis__batch__v1", "io.k8s.api.batch.v1.Job"),
    "CronJob": ("apis__batch__v1", "io.k8s.api.batch.v1.CronJob"),
    "PodDisruptionBudget": ("apis__policy__v1", "io.k8s.api.policy.v1.PodDisruptionBudget"),
    "StorageClass": ("apis__storage.k8s.io__v1", "io.k8s.api.storage.v1.StorageClass"),
    "RuntimeClass": ("apis__node.k8s.io__v1", "io.k8s.api.node.v1.RuntimeClass"),
    "PriorityClass": ("apis__scheduling.k8s.io__v1", "io.k8s.api.scheduling.v1.PriorityClass"),
}
PREFIX = "io.k8s."      # written without it in the data file


# -- derivation ------------------------------------------------------------------------------------------
def _ref(node: dict) -> str | None:
    if "$ref" in node:
        return node["$ref"].rsplit("/", 1)[-1]
    for part in node.get("allOf") or ():          # v3 wraps a defaulted reference in allOf
        if "$ref" in part:
            return part["$ref"].rsplit("/", 1)[-1]
    return None


def _child(node: dict) -> str:
    """The type a field's value is read as: a schema name, or "" where anything goes (a scalar, a map, an
    object preserving unknown fields)."""
    ref = _ref(node)
    if ref:
        return ref
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        return _child(node["items"])
    return ""


def derive(openapi_dir: Path) -> dict:
    """The field tree of every kind of KINDS: for each schema reachable from them, its fields and each
    field's type (a list is its items' type)."""
    schemas: dict[str, dict] = {}
    for doc, _ in KINDS.values():
        schemas.update(json.loads((openapi_dir / f"{doc}_openapi.json").read_text())["components"]["schemas"])
    types: dict[str, dict[str, str]] = {}
    todo = [root for _, root in KINDS.values()]
    while todo:
        name = todo.pop()
        if name in types:
            continue
        schema = schemas.get(name) or {}
        props = schema.get("properties")
        if props is None or schema.get("x-kubernetes-preserve-unknown-fields"):
            types[name] = {}                          # free-form: every field goes
            continue
        types[name] = {k: _child(v) for k, v in sorted(props.items())}
        todo += [t for t in types[name].values() if t and t not in types]
    short = {n: n.removeprefix(PREFIX) for n in types}
    return {"kinds": {k: short[root] for k, (_, root) in sorted(KINDS.items())},
            "types": {short[n]: {f: short.get(t, "") if t else "" for f, t in fields.items()}
                      for n, fields in sorted(types.items()) if fields or schemas.get(n, {}).get("properties")}}


def file_text(tree: dict) -> str:
    module, version = KUBERNETES
    head = {"source": f"{module} {version} api/openapi-spec/v3 (python -m harness.model.kube.kubefields --sync)"}
    return json.dumps({**head, **tree}, indent=None, separators=(",", ":"), sort_keys=False) + "\n"


# -- reading -------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _tree() -> dict:
    return json.loads((DATA_DIR / FILE).read_text())


def known_kind(kind) -> bool:
    return isinstance(kind, str) and kind in _tree()["kinds"]


def unknown_fields(obj: dict) -> list[tuple[tuple, str]]:
    """(document path, the API server's field path) of each field of the built-in object `obj` its kind
    does not have, outermost only (what is under an unknown field is dropped with it)."""
    tree = _tree()
    root = tree["kinds"].get(obj.get("kind"))
    if root is None:
        return []
    types = tree["types"]
    out: list[tuple[tuple, str]] = []

    def walk(node, type_name: str, doc_path: tuple, text: str) -> None:
        fields = types.get(type_name)
        if not fields or not isinstance(node, dict):   # free-form, or a value whose shape other checks judge
            return
        for key, value in node.items():
            here = f"{text}.{key}" if text else str(key)
            if key not in fields:
                out.append((doc_path + (key,), here))
                continue
            child = fields[key]
            if not child:
                continue
            if isinstance(value, list):
                for i, item in enumerate(value):
                    walk(item, child, doc_path + (key, i), f"{here}[{i}]")
            else:
                walk(value, child, doc_path + (key,), here)

    walk(obj, root, (), "")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.model.kube.kubefields",
                                 description="derive harness/data/kube-fields.json from Kubernetes' OpenAPI documents")
    ap.add_argument("--sync", action="store_true", help="write the data file (default: check it is current)")
    ap.add_argument("--openapi-dir", help="api/openapi-spec/v3 of a Kubernetes checkout (default: the Go module "
                                          f"cache's {KUBERNETES[0]}@{KUBERNETES[1]}, downloaded if absent)")
    args = ap.parse_args(argv)
    if args.openapi_dir:
        src = Path(args.openapi_dir)
    else:
        from harness.model.upstream.derivation import module_dir
        src = module_dir(*KUBERNETES) / "api" / "openapi-spec" / "v3"
    text = file_text(derive(src))
    path = DATA_DIR / FILE
    if args.sync:
        path.write_text(text)
        print(f"{path.name}: written")
        return 0
    if path.read_text() != text:
        print(f"{path.name} is not what {src} derives: run with --sync", file=sys.stderr)
        return 1
    print(f"{path.name}: current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
