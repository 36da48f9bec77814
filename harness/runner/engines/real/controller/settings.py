"""The controller's configuration for one scenario: environment variables, the ARM environment file,
the trust bundle and the fake `az` (the options of karpenter-provider-azure v1.14.0
pkg/operator/options/options.go and pkg/auth/config.go), from the
scenario's `given` and the data in harness/data/real-engine.yaml.

Every endpoint is loopback: the ARM environment file points at the fake, the cluster endpoint at the
API server; the trust bundle holds only the fake's CA and the API server's CA (no system roots), and
`AZURE_TOKEN_CREDENTIALS` (as the controller's azidentity reads it: token_credentials) with the fake `az`
first on PATH keeps azidentity from probing IMDS or AAD (azidentity v1.14 DefaultAzureCredential).
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path


from harness.backends.sandbox import Forward
from harness.model.data import DATA_DIR, load_yaml

# the arm environment's name selects the billing extension (karpenter-provider-azure v1.14.0
# pkg/providers/instance/vminstance.go isAKSIdentifyingExtensionEnabled; github.com/Azure/karpenter-provider-azure
# v1.14.0 pkg/auth/config.go)
ENVIRONMENT_NAME = "AzurePublicCloud"
TOKEN_AUDIENCE = "https://management.azure.com/"
HTTPS_PORT = 443        # public cloud: Azure's host names resolve to 127.0.0.1 in the sandbox, this port is the fake


@functools.lru_cache(maxsize=1)
def engine_data() -> dict:
    return load_yaml((DATA_DIR / "real-engine.yaml").read_text())


@dataclass(frozen=True)
class Endpoints:
    fake_url: str            # the fake as the controller sees it (https://management.azure.com, resolved to it)
    fake_ca: Path
    apiserver_url: str       # https://127.0.0.1:<port>
    apiserver_ca: Path


def cloud(given: dict, fake_port: int) -> tuple[str, Forward, tuple[str, ...]]:
    """The cloud the controller runs in for a scenario: its ARM endpoint, the sandbox's forward to
    the fake, and the host names that resolve to 127.0.0.1 inside the sandbox.

    `given.pricing: retail` (default): Azure's public cloud (harness/data/real-engine.yaml
    public_cloud), so the controller polls the fake's Retail Prices API. `compiled-in`: a cloud that is
    not the public one - the ARM endpoint is the fake's own loopback address, so auth.IsPublic is false
    and the controller keeps its compiled-in table with spot = on-demand and never polls (provider
    v1.14.0 pkg/providers/pricing/pricing.go NewProvider; pkg/auth/environment.go IsPublic compares the
    ResourceManager endpoint with cloud.AzurePublic's). No Azure name resolves then. The environment
    file keeps its name (ENVIRONMENT_NAME), so the VM bodies are those of the public cloud."""
    if given.get("pricing") == "compiled-in":
        return f"https://127.0.0.1:{fake_port}/", Forward(fake_port, fake_port), ()
    public = engine_data()["public_cloud"]
    return public["arm_endpoint"], Forward(HTTPS_PORT, fake_port), tuple(public["hosts"])


def subnet_id(subscription: str, node_rg: str, subnet_name: str) -> str:
    vnet = engine_data()["vnet_name"]
    return (f"/subscriptions/{subscription}/resourceGroups/{node_rg}/providers/Microsoft.Network/"
            f"virtualNetworks/{vnet}/subnets/{subnet_name}")


def cluster_fqdn(tree: Path | None) -> str | None:
    """The AKS-style host name CLUSTER_ENDPOINT carries for a controller built from `tree` whose
    options.go cuts the host to 33 characters (real-engine.yaml cluster_fqdn), else None."""
    rule = engine_data()["cluster_fqdn"]
    src = tree / rule["file"] if tree is not None else None
    return rule["host"] if src is not None and src.is_file() and rule["source"] in src.read_text() else None


AZIDENTITY = "github.com/Azure/azure-sdk-for-go/sdk/azidentity"
PINNED_AZIDENTITY = "v1.14.0"     # the default controller's (provider v1.14.0 go.mod)


def token_credentials(tree: Path | None) -> str | None:
    """AZURE_TOKEN_CREDENTIALS for a controller built from `tree` (None: the pinned module), by the
    azidentity version its go.mod requires (real-engine.yaml token_credentials); None: leave it unset."""
    version = PINNED_AZIDENTITY
    if tree is not None and (tree / "go.mod").is_file():
        m = re.search(rf"^\s*{re.escape(AZIDENTITY)}\s+(v\S+)", (tree / "go.mod").read_text(), re.M)
        version = m.group(1) if m else version
    key = _semver(version)
    return next(row["value"] for row in engine_data()["token_credentials"] if key >= _semver(row["from"]))


def _semver(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("-")[0])[:3])


def mode_env(mode: str, subscription: str, bootstrap: str | None) -> dict[str, str]:
    """What the provision mode adds to the controller's environment (real-engine.yaml provision_modes)."""
    data = engine_data()
    values = {"pool": data["machines_pool"], "subscription": subscription, "bootstrap": bootstrap or ""}
    return {k: str(v).format(**values) for k, v in (data["provision_modes"].get(mode) or {}).items()}


def controller_env(settings: dict, endpoints: Endpoints, files: dict[str, Path], subscription: str,
                   az_dir: Path, ports: dict[str, int], feature_gates: dict | None = None,
                   loop: dict | None = None, fqdn: str | None = None, tree: Path | None = None,
                   clock_file: Path | None = None, harness_env: dict[str, str] | None = None,
                   bootstrap: str | None = None) -> dict[str, str]:
    """The whole environment of the controller process (it starts with `env -i`: nothing is
    inherited). `settings` is the scenario's cluster settings (harness/runner/engines/azureside.py
    cluster_settings); `feature_gates` the scenario's given.featureGates, as Karpenter's FEATURE_GATES
    (sigs.k8s.io/karpenter v1.14.0 pkg/operator/options/options.go: `--feature-gates` or FEATURE_GATES,
    parsed over the defaults by ParseFeatureGates); `loop` the scenario's given.loop, whose
    minValuesPolicy and preferencePolicy are the controller's MIN_VALUES_POLICY and PREFERENCE_POLICY (the
    same options.go); `fqdn` the API server's name in CLUSTER_ENDPOINT (cluster_fqdn); `tree` the source
    the controller was built from (token_credentials); `clock_file` the cluster's clock file, whose offset
    a fast build's clock adds (controller-timing.yaml kind `clock`; runclock.py); `harness_env` what else a fast
    build reads (scale.controller_env); `bootstrap` the host:port of the fake's plain-http listener (the node
    bootstrapping server, mode_env)."""
    data = engine_data()
    host, port = endpoints.apiserver_url.removeprefix("https://").rsplit(":", 1)
    env = {k: str(v) for k, v in data["environment"].items()}
    if (credentials := token_credentials(tree)) is not None:
        env["AZURE_TOKEN_CREDENTIALS"] = credentials
    merged = {**data["cluster_defaults"], **settings}
    for key, var in data["cluster_env"].items():
        if merged.get(key) is not None:
            value = merged[key]
            env[var] = str(value).lower() if isinstance(value, bool) else str(value)
    env.update({
        "PATH": f"{az_dir}:/usr/bin:/bin",
        "HOME": str(az_dir.parent),
        "SSL_CERT_FILE": str(files["bundle"]),
        "AZURE_ENVIRONMENT_FILEPATH": str(files["environment"]),
        "AZURE_SUBSCRIPTION_ID": subscription,
        "ARM_SUBSCRIPTION_ID": subscription,     # the name before v1.10 (provider v1.6.8 pkg/auth/config.go)
        "LOCATION": settings["region"],
        "CLUSTER_ENDPOINT": f"https://{fqdn}:{port}" if fqdn else endpoints.apiserver_url,
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "VNET_SUBNET_ID": subnet_id(subscription, settings["nodeResourceGroup"], settings.get("subnetName") or "aks-subnet"),
        "METRICS_PORT": str(ports["metrics"]),
        "HEALTH_PROBE_PORT": str(ports["health"]),
        # read by a fast build only (harness/data/controller-timing/probe.go)
        "KARPENTER_HARNESS_PROBE_ADDR": f"127.0.0.1:{ports['probe']}",
    })
    if clock_file is not None:
        env["KARPENTER_HARNESS_CLOCK_FILE"] = str(clock_file)      # read by a fast build only
    env.update(mode_env(env.get("PROVISION_MODE", "aksscriptless"), subscription, bootstrap))
    env.update(harness_env or {})
    if (loop or {}).get("minValuesPolicy"):
        env["MIN_VALUES_POLICY"] = str(loop["minValuesPolicy"])
    if (loop or {}).get("preferencePolicy"):
        env["PREFERENCE_POLICY"] = str(loop["preferencePolicy"])
    if feature_gates:
        env["FEATURE_GATES"] = ",".join(f"{k}={str(bool(v)).lower()}" for k, v in sorted(feature_gates.items()))
    return env


def write_files(workdir: Path, endpoints: Endpoints, tenant: str, subscription: str) -> dict[str, Path]:
    """The ARM environment file, the trust bundle and the fake `az` (in its own PATH dir)."""
    workdir.mkdir(parents=True, exist_ok=True)
    env_file = workdir / "azure-environment.json"
    base = endpoints.fake_url.rstrip("/") + "/"
    env_file.write_text(json.dumps({
        "name": ENVIRONMENT_NAME, "resourceManagerEndpoint": base, "activeDirectoryEndpoint": base + "aad/",
        "tokenAudience": TOKEN_AUDIENCE, "resourceIdentifiers": {}}))
    bundle = workdir / "trust-bundle.pem"
    bundle.write_text(endpoints.fake_ca.read_text().strip() + "\n" + endpoints.apiserver_ca.read_text().strip() + "\n")
    # fakeazure's az shim: what azidentity's AzureCLICredential runs
    # (`az account get-access-token -o json --resource <aud>`), answered with a fake token
    from fakeazure import azshim
    az_dir = workdir / "bin"
    azshim.write(az_dir, subscription=subscription, tenant=tenant)
    return {"environment": env_file, "bundle": bundle, "az_dir": az_dir}
