"""A seeded mutator over the scenario library and tests/broken (issue 12): every mutant either
loads or fails with a SourceError (`file:line: reason`), never another exception; a sample of the
mutants that load also runs on the embedded backend without an exception. Bounded for CI by a
count and a time budget (the budget only stops the loop, nothing asserts a duration);
bench/fuzz_inputs.py runs the same mutator for a larger count."""
from __future__ import annotations

import copy
import random
import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
CORPUS_DIRS = [ROOT / "scenarios", ROOT / "tests" / "broken"]

# values a hostile or careless author might put anywhere
HOSTILE = [5, -1, 0, 2, 1e308, -1e308, float("inf"), "", "x", "(", "[", "999999999999h", "1e308", None, True,
           [1], ["a"], [[]], {"a": "b"}, {"name": 5}, {"file": "/dev/zero"}, {"file": "../../../../etc/passwd"},
           {"file": "."}, {"file": "a\x00b"}, {"file": "x" * 300}, "a" * 2000, {"<<": 5}, [{"code": "x"}],
           {"code": "TooManyRequests", "probability": 2}, {"provider": 5}, "\u202e", "-", "0.5", "1Gi", "2 cores",
           [{"kind": "Pod", "name": "nope"}], [{"kind": "Deployment", "name": "web"}], {"kind": "Foo", "name": "x"},
           {"advance": "1h", "delete": [{"kind": "NodePool", "name": "default"}]}, {"node": 99}]
TOKENS = ["[", "]", "{", "}", "&a ", "*a", "<<: 5", "!!int ", "!!bool ", "!!binary ", "!foo ", "---\n", ": ", "- ",
          "\t", "\x00", "'", '"', "? ", "|\n", ">\n", "#", "%YAML 1.1\n", "&a [*a]", "\u00e9", "\x85"]


@dataclass
class Tally:
    tried: int = 0
    loaded: int = 0
    source_errors: int = 0
    ran: int = 0
    tracebacks: list[str] = field(default_factory=list)
    no_line: list[str] = field(default_factory=list)      # refusals without a line: `file: reason`
    # the input of each failure above, to keep as a reproducer: (a file name, its bytes)
    inputs: list[tuple[str, bytes]] = field(default_factory=list)

    def keep(self, name: str, data: bytes | str) -> None:
        self.inputs.append((f"{len(self.inputs):04d}-{name}", data.encode() if isinstance(data, str) else data))


# the ported core suites: hundreds of documents in the shapes the rest of the library already has;
# mutating them would spend most of the time budget on parsing large files without new input shapes
CORPUS_SKIP = ("upstream-core",)


def corpus() -> list[tuple[Path, bytes]]:
    files = []
    for d in CORPUS_DIRS:
        files += sorted(p for p in d.rglob("*.yaml")
                        if "manifests" not in p.parts and not set(CORPUS_SKIP) & set(p.parts))
    return [(p, p.read_bytes()) for p in files]


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


def _structural(rng: random.Random, text: str) -> str | None:
    """Replace, delete or duplicate one value somewhere in one document."""
    try:
        docs = list(yaml.load_all(text, Loader=_LOADER))
    except Exception:  # noqa: BLE001 - not valid YAML to begin with: mutate the text instead
        return None
    if not docs or not any(isinstance(d, (dict, list)) for d in docs):
        return None
    di = rng.choice([i for i, d in enumerate(docs) if isinstance(d, (dict, list))])
    try:
        paths = [p for p in _paths(docs[di]) if p]
    except RecursionError:          # the 3000-deep and self-referencing cases of tests/broken
        return None
    if not paths:
        return None
    path = rng.choice(paths)
    parent = docs[di]
    for p in path[:-1]:
        parent = parent[p]
    op = rng.random()
    if op < 0.7:
        parent[path[-1]] = rng.choice(HOSTILE)
    elif op < 0.85 and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = [parent[path[-1]]] if rng.random() < 0.5 else {"x": parent[path[-1]]}
    try:
        return yaml.dump_all(docs, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
    except (Exception, RecursionError):  # noqa: BLE001
        return None


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One seeded mutation of a file's bytes."""
    op = rng.random()
    if op < 0.45:
        out = _structural(rng, data.decode("utf-8", "replace"))
        if out is not None:
            return out.encode("utf-8", "surrogatepass")
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    kind = rng.randrange(7)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif kind == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3:
        pos = rng.randrange(len(lines[i]) + 1)
        tok = rng.choice(TOKENS).encode("utf-8")
        lines[i] = lines[i][:pos] + tok + lines[i][pos:]
    elif kind == 4:
        return data[:rng.randrange(len(data) + 1)]
    elif kind == 5:
        lines[i] = lines[i] + b" " + rng.choice([b"\xff\xfe", b"\xc3", b"\x00", b"\x1b[0m"])
    else:
        lines[i] = b" " * rng.randrange(8) + lines[i].lstrip()
    return b"\n".join(lines)


def fuzz(count: int, seed: int, budget_s: float | None = None, run_every: int = 0, workdir: Path | None = None,
         progress=None) -> Tally:
    """Mutate `count` files (fewer if the budget runs out); load each, and run every `run_every`-th
    one that loads (0: none) under its first profile on the embedded backend."""
    import tempfile

    from harness.scenario.load import load_scenarios
    from harness.scenario.yamlsource import SourceError

    rng = random.Random(seed)
    files = corpus()
    tally = Tally()
    tmp = Path(workdir or tempfile.mkdtemp(prefix="harness-fuzz-"))
    cluster = None
    try:
        shutil.copytree(ROOT / "scenarios" / "manifests", tmp / "manifests", dirs_exist_ok=True)
        for extra in (ROOT / "tests" / "broken").glob("*.manifests.yaml"):
            shutil.copy(extra, tmp / "case" / extra.name) if (tmp / "case").exists() else None
        (tmp / "case").mkdir(exist_ok=True)
        (tmp / "pyproject.toml").write_text("")       # the tree references are confined to
        t0 = time.monotonic()
        while tally.tried < count and (budget_s is None or time.monotonic() - t0 < budget_s):
            src, data = rng.choice(files)
            for _ in range(1 + (rng.random() < 0.3)):
                data = mutate(rng, data)
            target = tmp / "case" / f"m{tally.tried % 50}.scenario.yaml"
            target.write_bytes(data)
            tally.tried += 1
            if progress:
                progress(tally)
            try:
                scenarios = load_scenarios(target)
                tally.loaded += 1
            except SourceError as e:
                tally.source_errors += 1
                if not e.render().strip():
                    tally.tracebacks.append(f"{src.name}: empty SourceError")
                    tally.keep(src.name, data)
                elif not e.line:
                    tally.no_line.append(f"a mutant of {src.name}: {e.render()}")
                    tally.keep(src.name, data)
                continue
            except Exception:  # noqa: BLE001 - this is what the fuzzer looks for
                tally.tracebacks.append(f"load of a mutant of {src.name}:\n{traceback.format_exc()}\n--- input:\n"
                                        f"{data[:3000]!r}")
                tally.keep(src.name, data)
                continue
            if run_every and tally.loaded % run_every == 0:
                from harness.backends.embedded import EmbeddedBackend
                from harness.runner.engines import run
                cluster = cluster or EmbeddedBackend().start()
                for sc in scenarios[:1]:
                    try:
                        run(sc, sc.profiles[0], cluster, max_iterations=20)
                        tally.ran += 1
                    except Exception:  # noqa: BLE001
                        tally.tracebacks.append(f"run of a mutant of {src.name}:\n{traceback.format_exc()}\n"
                                                f"--- input:\n{data[:3000]!r}")
                        tally.keep(src.name, data)
    finally:
        if cluster is not None:
            cluster.close()
        if workdir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return tally


# -- steps (issue 29): every step kind given objects that do not exist, the wrong kind, or a state
# where it cannot apply gives `file:line: reason` at load or a failed run, never a traceback -------
_NAMES = ["web", "default", "spot", "nope", "api", "x" * 70, "Web", ""]
_KINDS = ["Pod", "NodePool", "AKSNodeClass", "Deployment", "DaemonSet", "Namespace", "NodeClaim", "StorageClass",
          "PersistentVolume", "PersistentVolumeClaim", "Node", "Foo", ""]
_FAULTS = [{"code": "SpotEviction", "after_seconds": 1}, {"code": "ZonalAllocationFailed", "times": 1},
           {"code": "SkuNotAvailable", "match": {"size": "Standard_D2s_v3"}}, {"code": "TooManyRequests", "times": 2},
           {"code": "InternalServerError", "times": 1}, {"code": "AllocationFailed"},
           {"code": "OperationNotAllowed", "quota": "family", "limit": 0}, {"code": "Latency", "latency": 1},
           {"code": "SpotEviction", "match": {"size": "*"}, "probability": 0.5}, {"code": "Nope"}, {"times": 1},
           {"code": "ZonalAllocationFailed", "match": {"bogus": 1}}, {"code": "TooManyRequests", "times": -1}]
_CLUSTER = {"nodeResourceGroup": ["MC_other", "", "a" * 300], "clusterName": ["", "c2"],
            "networkPlugin": ["azure", "kubenet", "none", ""], "networkPluginMode": ["overlay", ""],
            "networkPolicy": ["cilium", "calico", ""], "networkDataplane": ["cilium", "azure", ""],
            "kubernetesVersion": ["1.30.0", "1.36.3", "banana", "", "1.99.99"],
            "kubeletIdentityClientID": ["", "x"], "vnetGUID": ["", "not-a-guid"], "subnetName": ["", "s"],
            "nodeImageVersion": ["x", "AKSUbuntu-2204gen2containerd-202501.01.0"],
            "vmMemoryOverheadPercent": [0, 0.5, 1, 2, "x"], "useSIG": [True, False, "yes"],
            "provisionMode": ["aksscriptless", "bootstrappingclient", "other"], "region": ["westus"]}
_ADVANCE = ["0s", "30s", "5m", "16m", "1h", "25h", "3ms", "abc", "-1m", 5]
_EXPECT = [{"nodeCount": 2}, {"nodes": [{"index": 7}]}, {"nodes": [{"pod": "web", "count": 0}]},
           {"pods": {"web": "scheduled"}}, {"pods": {"web": {"count": 0}}}, {"azure": {"vmCount": 1}},
           {"events": [{"kind": "Pod"}]}, {"nodeClaims": {"launched": 1}}, {"loop": {"steady": True}}]


def _manifest(rng: random.Random) -> dict:
    name = rng.choice(_NAMES[:5]) + rng.choice(["", "", "-2"])
    kind = rng.choice(["Pod", "Pod", "NodePool", "AKSNodeClass", "Deployment", "DaemonSet", "Namespace",
                       "StorageClass", "PersistentVolumeClaim", "NodeClaim", "Foo"])
    pod = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": rng.choice(["100m", "3", "99"])}}}],
           "nodeSelector": rng.choice([{}, {"karpenter.sh/capacity-type": rng.choice(["spot", "on-demand", "nope"])}])}
    ref = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": rng.choice(["default", "nope"])}
    api = {"Deployment": "apps/v1", "DaemonSet": "apps/v1", "NodePool": "karpenter.sh/v1", "NodeClaim": "karpenter.sh/v1",
           "AKSNodeClass": "karpenter.azure.com/v1beta1", "StorageClass": "storage.k8s.io/v1"}.get(kind, "v1")
    spec = {"Pod": pod, "Deployment": {"replicas": rng.randrange(4), "template": {"spec": pod}},
            "DaemonSet": {"template": {"spec": pod}}, "AKSNodeClass": {"imageFamily": "Ubuntu2204"},
            "NodePool": {"template": {"spec": {"nodeClassRef": ref, "requirements": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [rng.choice(["spot", "on-demand"])]}]}}},
            "NodeClaim": {"nodeClassRef": ref, "requirements": []},
            "PersistentVolumeClaim": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": name}}
    if kind == "StorageClass":
        obj["provisioner"] = "disk.csi.azure.com"
    elif kind in spec:
        obj["spec"] = spec[kind]
    if rng.random() < 0.1:
        obj["metadata"]["namespace"] = rng.choice(["default", "nope"])
    return obj


def random_step(rng: random.Random, names: list[str]) -> dict:
    """One step of one to three actions, objects named from the scenario and from thin air."""
    step: dict = {}
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        action = rng.choice(["advance", "apply", "delete", "evict", "evict", "faults", "cluster", "expect"])
        if action == "advance":
            step["advance"] = rng.choice(_ADVANCE)
        elif action == "apply":
            step["apply"] = [_manifest(rng) for _ in range(rng.choice([1, 1, 2]))]
        elif action == "delete":
            step["delete"] = [{"kind": rng.choice(_KINDS), "name": rng.choice(names + _NAMES)}
                              for _ in range(rng.choice([1, 1, 2]))]
        elif action == "evict":
            step["evict"] = rng.choice([{"node": rng.randrange(5)}, {"node": 0}, {"node": 0},
                                        {"pod": rng.choice(names)} if names else {"node": 1},
                                        {"pod": rng.choice(names + _NAMES)}, {}, {"node": 0, "pod": "web"},
                                        {"node": -1}, {"node": "a"}])
        elif action == "faults":
            step["faults"] = [copy.deepcopy(rng.choice(_FAULTS)) for _ in range(rng.choice([1, 2]))]
        elif action == "cluster":
            key = rng.choice(sorted(_CLUSTER))
            step["cluster"] = {key: rng.choice(_CLUSTER[key])}
        else:
            step["expect"] = copy.deepcopy(rng.choice(_EXPECT))
    return step


def fuzz_steps(count: int, seed: int, budget_s: float | None = None, progress=None) -> Tally:
    """`count` library documents with random steps (appended to or replacing theirs); each is loaded
    and, when it loads, run under its first profile on the embedded backend."""
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run
    from harness.scenario.load import find_scenario_files, load_scenarios, load_scenarios_text
    from harness.scenario.yamlsource import SourceError

    rng = random.Random(seed)
    docs = [sc for f in find_scenario_files([ROOT / "scenarios"]) for sc in load_scenarios(f)]
    tally = Tally()
    cluster = EmbeddedBackend().start()
    t0 = time.monotonic()
    try:
        while tally.tried < count and (budget_s is None or time.monotonic() - t0 < budget_s):
            sc = rng.choice(docs)
            data = copy.deepcopy(sc.doc.data)
            names = [m.obj["metadata"]["name"] for m in sc.manifests]
            steps = [random_step(rng, names) for _ in range(rng.choice([1, 1, 2, 3]))]
            data["steps"] = (list(data.get("steps") or []) if rng.random() < 0.5 else []) + steps
            text = yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
            tally.tried += 1
            if progress:
                progress(tally)
            try:
                loaded = load_scenarios_text(text, f"fuzz-steps-{tally.tried % 7}.scenario.yaml", sc.file.parent)
                tally.loaded += 1
            except SourceError as e:
                tally.source_errors += 1
                if not e.render().strip():
                    tally.tracebacks.append(f"{sc.name}: empty SourceError")
                    tally.keep(sc.file.name, text)
                elif not e.line:
                    tally.no_line.append(f"{sc.name} with steps: {e.render()}")
                    tally.keep(sc.file.name, text)
                continue
            except Exception:  # noqa: BLE001 - what the fuzzer looks for
                tally.tracebacks.append(f"load of {sc.name} with steps:\n{traceback.format_exc()}\n--- steps:\n{steps}")
                tally.keep(sc.file.name, text)
                continue
            try:
                run(loaded[0], loaded[0].profiles[0], cluster, max_iterations=20)
                tally.ran += 1
            except Exception:  # noqa: BLE001
                tally.tracebacks.append(f"run of {sc.name} with steps:\n{traceback.format_exc()}\n--- steps:\n{steps}")
                tally.keep(sc.file.name, text)
    finally:
        cluster.close()
    return tally


def test_random_steps_never_raise_a_traceback(capsys):
    tally = fuzz_steps(count=40, seed=29)          # a fixed sample (no time budget: machines are shared)
    with capsys.disabled():
        print(f"\nfuzz steps: {tally.tried} inputs, {tally.loaded} loaded and run ({tally.ran} ran), "
              f"{tally.source_errors} SourceErrors, {len(tally.tracebacks)} tracebacks")
    assert tally.tried == 40 and tally.ran >= 5
    assert not tally.tracebacks, tally.tracebacks[0]
    assert not tally.no_line, tally.no_line[0]


def test_mutated_inputs_never_raise_a_traceback(capsys):
    tally = fuzz(count=300, seed=12, run_every=8)   # a fixed sample (no time budget: machines are shared)
    with capsys.disabled():
        print(f"\nfuzz: {tally.tried} mutants, {tally.loaded} loaded, {tally.source_errors} SourceErrors, "
              f"{tally.ran} run, {len(tally.tracebacks)} tracebacks")
    assert tally.tried == 300
    assert not tally.tracebacks, tally.tracebacks[0]
    assert not tally.no_line, tally.no_line[0]
