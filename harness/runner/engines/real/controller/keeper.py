"""One Karpenter controller kept per process across real-engine runs (issue 23: its start, ~1 s to its
controllers plus its Azure clients, prices and SKUs, was a fifth of a launching document).

Why it is built this way: docs/architecture/real-engine.md."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.backends.sandbox import Forward, Sandbox, SandboxError
from harness.runner.engines.real.controller import clusterprep, fakeside, scale, settings

KEEP_ENV = "HARNESS_REAL_KEEP_CONTROLLER"
# inside the sandbox's own network namespace; `probe`: a fast build's few series (controller-timing/probe.go)
CONTROLLER_PORTS = {"metrics": 18080, "health": 18081, "probe": 18082}
NODE_COUNT = re.compile(r"^karpenter_cluster_state_node_count\s+(\S+)\s*$", re.M)
EMPTY_TIMEOUT = 10.0        # a continued controller's cluster state is empty within this, or it is replaced


def metrics_text(sandbox, timing: str) -> str:
    """The controller's metrics the harness reads: a fast build's probe (the few series its settle
    counts), else the whole /metrics."""
    port = CONTROLLER_PORTS["probe" if timing == "fast" else "metrics"]
    return sandbox.http_get(port, "/metrics", timeout=1.0)


def keeping() -> bool:
    return os.environ.get(KEEP_ENV, "1") != "0"


def controller_key(ctl, cluster, scenario, cfg: dict, fake) -> tuple:
    """What a kept controller must share with the next run to serve it: the binary and its timing, the
    cluster (its API server and its identity in this process) and what the scenario asks of it
    (scenario_key)."""
    ca = hashlib.sha256(Path(cluster.server_ca).read_bytes()).hexdigest()     # a new cluster has a new CA
    return (str(ctl.path), ctl.timing, cluster.server, ca) + scenario_key(scenario, cfg, fake)


def scenario_key(scenario, cfg: dict, fake) -> tuple:
    """What a scenario asks of the controller that a kept one must already have: the operator's settings
    (every environment variable the scenario sets: settings.controller_env), its feature gates and loop
    policies, the cloud it runs in (given.pricing) and what the fake's catalog answers that the provider
    caches (SKUs, prices, quota: pkg/operator/operator.go builds those caches once). Scenarios with the
    same key run one after another on a worker where they can (affinity.py)."""
    given = scenario.given
    catalog = {"region": fake.region, "skus": fake.skus(), "prices": fake.region_prices(fake.region),
               "quota": given.get("quota") or {},
               # the node image it lists at its start, kept 3 days (nodeimage.go ImageExpirationInterval)
               "nodeImage": (given.get("cluster") or {}).get("nodeImageVersion")}
    digest = hashlib.sha256(json.dumps(catalog, sort_keys=True, default=str).encode()).hexdigest()
    loop = given.get("loop") or {}
    return (json.dumps(cfg, sort_keys=True, default=str), json.dumps(given.get("featureGates") or {}, sort_keys=True),
            loop.get("minValuesPolicy"), loop.get("preferencePolicy"), given.get("pricing") or "retail", digest,
            json.dumps(scale.controller_env(scenario), sort_keys=True))


def needs_its_own(scenario) -> str | None:
    """Why a scenario needs a controller started for it, or None: faults (a fault may aim at what the
    controller asks once, at its start: the SKU list, the prices) or an expectation on the Azure requests
    (it judges the controller's whole conversation, its start included)."""
    if scenario.given.get("faults"):
        return "given.faults"
    blocks = [scenario.expect or {}, *(scenario.expect_by_profile or {}).values()]
    for step in scenario.steps:
        blocks += [step.get("expect") or {}, *((step.get("expectByProfile") or {}).values())]
    if any(((b or {}).get("azure") or {}).get("requests") for b in blocks):
        return "an expectation on the Azure requests"
    return None


@dataclass
class Kept:
    """A controller in its sandbox, the fake's server it talks to (through `switch`) and their home."""
    key: tuple
    home: Path
    switch: fakeside.Switch
    server: object = None
    plain: object = None        # the fake on plain http: the node bootstrapping server (bootstrappingclient)
    sandbox: Sandbox | None = None
    entry: object = None
    runs: int = 0
    stopped: bool = False
    cluster: object = None      # its close() closes this one first (RealCluster.dependents)
    closed: bool = False
    timing: str = "upstream"    # its build's (controller-timing.yaml): a fast one serves the probe
    env_of: object = None       # cluster settings -> the controller's environment (settings.controller_env)

    @property
    def log(self) -> Path:
        return self.home / "controller.log"

    def alive(self) -> bool:
        p = self.sandbox.process if self.sandbox else None
        return p is not None and p.alive()

    def pause(self) -> None:
        self.switch.tap = None
        self.stopped = self.sandbox.signal(signal.SIGSTOP)

    def resume(self, fake) -> fakeside.WireTap:
        """Plug the run's fake in, empty the log (opened for appending: the controller writes on at
        the new end) and continue the controller."""
        tap = self.switch.plug(fake)
        os.truncate(self.log, 0)
        self.sandbox.signal(signal.SIGCONT)
        self.stopped = False
        self.runs += 1
        return tap

    def restart(self, cfg: dict | None = None, between=None) -> None:
        """Stop the controller's process and start a new one in the same sandbox, home, log (appended)
        and fake - with the operator settings `cfg` when given (cluster settings, as AKS redeploys the
        controller when they change), else the same environment: a new process starts with empty caches,
        and its provider lists the SKUs anew (before provider v1.10 at its first List: v1.6.1
        pkg/providers/instancetype/instancetypes.go getInstanceTypes, cached InstanceTypesCacheTTL = 23h).
        `between`: called while no controller runs (a control plane upgrade)."""
        old = self.sandbox
        old.stop()
        if between is not None:
            between()
        # the new sandbox's shell waits for this file before it execs the controller (Sandbox.start)
        (old.workdir / f"{old.name}.go").unlink(missing_ok=True)
        env = old.env if cfg is None else self.env_of(cfg)
        self.sandbox = Sandbox(old.name, old.argv, env, old.workdir, old.secrets, old.forwards, hosts=old.hosts)
        self.sandbox.start(self.log)
        self.runs = 1

    def await_empty(self) -> str | None:
        """Until the controller's cluster state has let go of the previous run's nodes; why not, or None."""
        deadline = time.monotonic() + EMPTY_TIMEOUT
        last = "no metrics"
        while time.monotonic() < deadline:
            try:
                text = metrics_text(self.sandbox, self.timing)
            except (OSError, SandboxError) as e:
                last = f"its metrics: {e}"
            else:
                # the gauge appears with the first node the state tracked
                m = NODE_COUNT.search(text)
                if m is None or float(m.group(1)) == 0:
                    return None
                last = f"its cluster state still holds {m.group(1)} nodes"
            time.sleep(0.05)
        return last

    def close(self) -> None:
        """Stop everything the controller holds, whatever state it is in. Idempotent."""
        if self.closed:
            return
        self.closed = True
        deps = getattr(self.cluster, "dependents", None)
        if deps is not None and self.close in deps:
            deps.remove(self.close)
        try:
            if self.sandbox is not None:
                if self.stopped:
                    self.sandbox.signal(signal.SIGCONT)      # a stopped process takes SIGTERM only once continued
                self.sandbox.stop()
            if self.server is not None:
                self.server.stop()
            if self.plain is not None:
                self.plain.stop()
        finally:
            shutil.rmtree(self.home, ignore_errors=True)
            if self.entry is not None:
                self.entry.release()


def start(key: tuple, ctl, cluster, scenario, cfg: dict, fake) -> tuple[Kept, fakeside.WireTap]:
    """A controller for `scenario` in a new home dir: the fake's server, the controller's files and
    its sandbox; the run's fake plugged in."""
    from harness.backends.lifetime import CLUSTERS, LIFETIME, OWNER_FILE, tmp_root
    home = Path(tempfile.mkdtemp(prefix="harness-real-ctl-", dir=tmp_root()))
    (home / OWNER_FILE).write_text(str(os.getpid()))
    kept = Kept(key, home, fakeside.Switch(), cluster=cluster, timing=ctl.timing)
    # closed by the run or the keeper, or with its cluster (its server and relays are threads Python's
    # exit would wait for before any atexit handler ran); at exit by LIFETIME with the shared clusters
    # (before the process entries: a stopped controller is continued first); on SIGKILL the watcher
    # removes the dir (the controller's process group is the sandbox's own entry)
    kept.entry = LIFETIME.open(f"real-engine controller home {home}", kept.close, tier=CLUSTERS,
                               reap=(("dir", str(home)),))
    if hasattr(cluster, "dependents"):
        cluster.dependents.append(kept.close)
    try:
        secrets = clusterprep.prepare(cluster, ctl, home)
        public = settings.engine_data()["public_cloud"]
        kept.server = fakeside.serve(kept.switch, home / "fake-tls", tuple(public["hosts"]))
        kept.plain = fakeside.serve_plain(kept.switch)          # the node bootstrapping server (plain http)
        tap = kept.switch.plug(fake)
        fake_port = int(kept.server.url.rsplit(":", 1)[1])
        plain_port = int(kept.plain.url.rsplit(":", 1)[1])
        api_port = int(cluster.server.rsplit(":", 1)[1])
        arm, fake_forward, hosts = settings.cloud(scenario.given, fake_port)
        endpoints = settings.Endpoints(arm, Path(kept.server.ca_path), cluster.server, Path(cluster.server_ca))
        files = settings.write_files(home / "config", endpoints,
                                     settings.engine_data()["environment"]["AZURE_TENANT_ID"], fake.subscription_id)
        fqdn = settings.cluster_fqdn(ctl.tree)
        kept.env_of = functools.partial(settings.controller_env, endpoints=endpoints, files=files,
                                        subscription=fake.subscription_id, az_dir=files["az_dir"],
                                        ports=CONTROLLER_PORTS, feature_gates=scenario.given.get("featureGates"),
                                        loop=scenario.given.get("loop"), fqdn=fqdn, tree=ctl.tree,
                                        clock_file=getattr(cluster, "clock_file", None),
                                        harness_env=scale.controller_env(scenario),
                                        bootstrap=f"127.0.0.1:{plain_port}")
        env = kept.env_of(cfg)
        kept.sandbox = Sandbox("karpenter-controller", [str(ctl.path)], env, home, secrets,
                               [fake_forward, Forward(api_port, api_port), Forward(plain_port, plain_port)],
                               hosts=hosts + ((fqdn,) if fqdn else ()))
        kept.sandbox.start(kept.log)
        kept.runs = 1
    except BaseException:
        kept.close()
        raise
    return kept, tap


@dataclass
class Keeper:
    """The process's kept controller (at most one: a worker runs one scenario at a time)."""
    kept: Kept | None = None

    def take(self, key: tuple | None) -> Kept | None:
        """The kept controller when it serves `key` and lives (still stopped); any other is closed
        (None: the run needs a controller of its own)."""
        kept, self.kept = self.kept, None
        if kept is None:
            return None
        if key is not None and kept.key == key and kept.alive():
            return kept
        kept.close()
        return None

    def give_back(self, kept: Kept, leftovers: list[str]) -> None:
        """Keep `kept` (stopped) for the next run, or close it when the run left something in its
        memory (or keeping is off)."""
        if leftovers or not keeping() or not kept.alive():
            kept.close()
            return
        kept.pause()
        if self.kept is not None and self.kept is not kept:
            self.kept.close()
        self.kept = kept

    def close(self) -> None:
        kept, self.kept = self.kept, None
        if kept is not None:
            kept.close()


KEEPER = Keeper()
