"""The controller's configuration holds only loopback endpoints (the options of karpenter-provider-azure v1.14.0
pkg/operator/options/options.go and pkg/auth/config.go)."""
import json
import subprocess

import pytest

from harness.runner.engines.real.controller import settings


def _files(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n")
    api_ca = tmp_path / "api.pem"
    api_ca.write_text("-----BEGIN CERTIFICATE-----\napi\n-----END CERTIFICATE-----\n")
    ep = settings.Endpoints("https://127.0.0.1:4443", ca, "https://127.0.0.1:6443", api_ca)
    return ep, settings.write_files(tmp_path / "cfg", ep, "t", "s")


def test_environment_file_and_bundle_point_at_loopback_only(tmp_path):
    ep, files = _files(tmp_path)
    env = json.loads(files["environment"].read_text())
    assert env["resourceManagerEndpoint"] == "https://127.0.0.1:4443/"
    assert env["activeDirectoryEndpoint"].startswith("https://127.0.0.1:4443/")
    assert files["bundle"].read_text().count("BEGIN CERTIFICATE") == 2


def test_fake_az_prints_a_token(tmp_path):
    _, files = _files(tmp_path)
    out = subprocess.run([str(files["az_dir"] / "az"), "account", "get-access-token", "-o", "json"],
                         capture_output=True, text=True, check=True).stdout
    tok = json.loads(out)
    assert tok["accessToken"] == "fakeazure-token" and tok["tokenType"] == "Bearer" and tok["expires_on"] > 0


def test_env_maps_the_scenario_cluster_settings(tmp_path):
    ep, files = _files(tmp_path)
    cfg = {"region": "eastus", "nodeResourceGroup": "MC_rg", "clusterName": "c", "subnetName": "sn",
           "networkDataplane": "azure"}
    env = settings.controller_env(cfg, ep, files, "sub", files["az_dir"], {"metrics": 1, "health": 2, "probe": 3})
    assert env["AZURE_NODE_RESOURCE_GROUP"] == "MC_rg" and env["LOCATION"] == "eastus"
    assert env["NETWORK_DATAPLANE"] == "azure" and env["NETWORK_POLICY"] == "cilium"
    assert env["VNET_SUBNET_ID"].endswith("/resourceGroups/MC_rg/providers/Microsoft.Network/virtualNetworks/"
                                          "aks-vnet-12345678/subnets/sn")
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1" and env["KUBERNETES_SERVICE_PORT"] == "6443"
    assert env["PATH"].split(":")[0] == str(files["az_dir"])
    urls = [v for v in env.values() if "://" in v]
    assert urls and all("://127.0.0.1:" in u for u in urls)
    assert "FEATURE_GATES" not in env and "MIN_VALUES_POLICY" not in env         # Karpenter's defaults


def test_the_scenarios_feature_gates_reach_the_controller(tmp_path):
    """FEATURE_GATES, parsed over core's defaults (sigs.k8s.io/karpenter v1.14.0 pkg/operator/options
    ParseFeatureGates): the spot-to-spot ports need SpotToSpotConsolidation on both engines."""
    ep, files = _files(tmp_path)
    cfg = {"region": "eastus", "nodeResourceGroup": "MC_rg"}
    env = settings.controller_env(cfg, ep, files, "sub", files["az_dir"], {"metrics": 1, "health": 2, "probe": 3},
                                  {"SpotToSpotConsolidation": True, "NodeRepair": False})
    assert env["FEATURE_GATES"] == "NodeRepair=false,SpotToSpotConsolidation=true"


def test_the_scenarios_min_values_policy_reaches_the_controller(tmp_path):
    """given.loop.minValuesPolicy is the controller's MIN_VALUES_POLICY (sigs.k8s.io/karpenter v1.14.0
    pkg/operator/options/options.go); the loop's bounds are not the controller's."""
    ep, files = _files(tmp_path)
    env = settings.controller_env({"region": "eastus", "nodeResourceGroup": "MC_rg"}, ep, files, "sub", files["az_dir"],
                                  {"metrics": 1, "health": 2, "probe": 3}, None,
                                  {"minValuesPolicy": "BestEffort", "preferencePolicy": "Ignore", "maxIterations": 5})
    assert env["MIN_VALUES_POLICY"] == "BestEffort" and env["PREFERENCE_POLICY"] == "Ignore"


def test_the_cloud_is_public_unless_the_scenario_asks_for_the_compiled_in_prices():
    """Public cloud (default): ARM at management.azure.com, port 443 reaches the fake and Azure's names
    resolve to it, so the controller polls the Retail Prices API. `pricing: compiled-in`: the fake's
    loopback address is the ARM endpoint, so auth.IsPublic is false and the controller keeps its
    compiled-in table (provider v1.14.0 pkg/providers/pricing/pricing.go NewProvider)."""
    arm, fwd, hosts = settings.cloud({}, 40123)
    assert arm == "https://management.azure.com/" and (fwd.port, fwd.target_port) == (443, 40123)
    assert "prices.azure.com" in hosts and "management.azure.com" in hosts
    assert settings.cloud({"pricing": "retail"}, 40123) == (arm, fwd, hosts)
    arm, fwd, hosts = settings.cloud({"pricing": "compiled-in"}, 40123)
    assert arm == "https://127.0.0.1:40123/" and (fwd.port, fwd.target_port) == (40123, 40123) and hosts == ()


def test_a_release_that_cuts_the_endpoint_host_to_33_characters_gets_an_aks_fqdn(tmp_path):
    """provider v1.6.8 pkg/operator/options/options.go getAKSClusterID slices the host to [:33] and panics on
    127.0.0.1; such a tree gets the AKS-style name (resolving to 127.0.0.1 in the sandbox), others the URL."""
    rule = settings.engine_data()["cluster_fqdn"]
    old = tmp_path / "old"
    (old / rule["file"]).parent.mkdir(parents=True)
    (old / rule["file"]).write_text("func getAKSClusterID(apiServerFQDN string) string {\n\tdnsPrefix := apiServerFQDN[:33]\n")
    new = tmp_path / "new"
    (new / rule["file"]).parent.mkdir(parents=True)
    (new / rule["file"]).write_text("func getAKSClusterID(apiServerFQDN string) string {\n\tparts := strings.Split\n")
    assert settings.cluster_fqdn(old) == rule["host"] and len(rule["host"]) >= 33
    assert settings.cluster_fqdn(new) is None and settings.cluster_fqdn(None) is None
    ep, files = _files(tmp_path)
    env = settings.controller_env({"region": "eastus", "nodeResourceGroup": "MC_rg"}, ep, files, "sub", files["az_dir"],
                                  {"metrics": 1, "health": 2, "probe": 3}, fqdn=rule["host"])
    assert env["CLUSTER_ENDPOINT"] == f"https://{rule['host']}:6443" and env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert env["ARM_SUBSCRIPTION_ID"] == env["AZURE_SUBSCRIPTION_ID"] == "sub"      # both names: before v1.10, ARM_ only
    assert env["ARM_TENANT_ID"] == env["AZURE_TENANT_ID"]


@pytest.mark.parametrize("azidentity, value", [
    (None, "AzureCLICredential"),           # the pinned v1.14.0 module
    ("v1.13.1", "AzureCLICredential"),      # provider v1.6.8 .. v1.10.2: one credential's name
    ("v1.11.0", "AzureCLICredential"),
    ("v1.10.1", "dev"),                      # provider v1.5.5, v1.6.1: "dev" or "prod" only
    ("v1.8.0", None),                        # provider v0.7.5: not read
])
def test_token_credentials_follow_the_azidentity_the_release_builds_with(tmp_path, azidentity, value):
    tree = None
    if azidentity:
        tree = tmp_path
        (tree / "go.mod").write_text("module x\n\nrequire (\n"
                                     f"\tgithub.com/Azure/azure-sdk-for-go/sdk/azidentity {azidentity}\n)\n")
    assert settings.token_credentials(tree) == value


@pytest.mark.parametrize("mode, want", [
    ("aksscriptless", {}),
    ("bootstrappingclient", {"NODEBOOTSTRAPPING_SERVER_URL": "127.0.0.1:8080"}),
    ("aksmachineapi", {"AKS_MACHINES_POOL_NAME": "testmpool", "USE_SIG": "true", "SIG_SUBSCRIPTION_ID": "sub"}),
    ("aksmachineapiheaderbatch", {"AKS_MACHINES_POOL_NAME": "testmpool", "USE_SIG": "true",
                                  "SIG_SUBSCRIPTION_ID": "sub"}),
])
def test_each_provision_mode_gets_what_its_validation_requires(tmp_path, mode, want):
    """provider v1.14.0 pkg/operator/options/options_validation.go validateProvisionMode, validateUseSIG: the
    mode's environment, and the cluster settings it implies (USE_SIG: aksmachine.cluster_settings, which
    azureside.cluster_settings adds for both engines)."""
    from harness.model.labels.aksmachine import cluster_settings
    ep, files = _files(tmp_path)
    cfg = {"region": "eastus", "nodeResourceGroup": "MC_rg", "clusterName": "c", "provisionMode": mode,
           **cluster_settings(mode)}
    env = settings.controller_env(cfg, ep, files, "sub", files["az_dir"], {"metrics": 1, "health": 2, "probe": 3},
                                  bootstrap="127.0.0.1:8080")
    assert env["PROVISION_MODE"] == mode
    assert {k: env[k] for k in want} == want
    assert not {"NODEBOOTSTRAPPING_SERVER_URL", "AKS_MACHINES_POOL_NAME", "USE_SIG"} - set(want) & set(env)


def test_what_aks_writes_on_a_machines_node_is_the_simulations_rule():
    """azureside.machine_labeler: fakeazure's AKS writes aksmachine.aks_writes of the cluster's base labels for the
    NodeClaim's AKSNodeClass (normalized as the provider normalizes them) and the machine's mode."""
    from harness.model.upstream.profile import load_profile
    from harness.runner.engines.azureside import NODECLAIM_TAG, machine_labeler

    class Cluster:
        objects = {("NodeClaim", "nc"): {"spec": {"nodeClassRef": {"name": "al"}}},
                   ("AKSNodeClass", "al"): {"spec": {"imageFamily": "AzureLinux"}}}

        def get(self, kind, name):
            return self.objects.get((kind, name))
    cfg = {"nodeResourceGroup": "MC_rg_(prod)", "region": "x", "vnetGUID": "g", "subnetName": "sn"}
    label = machine_labeler(cfg, load_profile("upstream"), Cluster())
    labels = label({"mode": "System", "tags": {NODECLAIM_TAG: "nc"}}, None)
    assert labels["kubernetes.azure.com/cluster"] == "MC_rg_-prod-z"
    assert labels["kubernetes.azure.com/azure-cni-overlay"] == "true" and labels["kubernetes.azure.com/network-subnet"] == "sn"
    assert labels["kubernetes.azure.com/mode"] == "system" and labels["kubernetes.azure.com/os-sku"] == "AzureLinux"
    assert labels["kubernetes.azure.com/os-sku-requested"] == "AzureLinux"
    assert all(k.startswith("kubernetes.azure.com/") for k in labels)
    assert labels["kubernetes.azure.com/scalesetpriority"] == labels["kubernetes.azure.com/priority"] == "regular"
    spot = label({"tags": {}, "priority": "Spot", "kubernetes": {"orchestratorVersion": "1.33.2"}}, None)
    assert spot["kubernetes.azure.com/mode"] == "user" and spot["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert spot["kubernetes.azure.com/network-stateless-cni"] == "false"        # the version the machine was sent

