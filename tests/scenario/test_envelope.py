"""The envelope: unmodeled manifest fields and catalog notices (harness/scenario/envelope.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.model.upstream.profile import load_profile
from harness.model.upstream.releaseindex import release_profiles
from harness.scenario.envelope import HASH_READS, HASHED, _data, nodepool_hash_reads, rules_for, unmodeled_fields
from harness.scenario.load import load_scenarios_text

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def fields(obj):
    return {f.field: f.advice for f in unmodeled_fields(obj)}


def test_nodepool_disruption_expiry_and_replicas_are_modeled():
    np = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "d"},
          "spec": {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1m",
                                  "budgets": [{"nodes": "1", "reasons": ["Empty"]}]},
                   "limits": {"cpu": "4"}, "weight": 3, "replicas": 2,
                   "template": {"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}},
                                "spec": {"expireAfter": "720h", "terminationGracePeriod": "1h",
                                         "nodeClassRef": {"name": "x"}, "requirements": []}}}}
    assert fields(np) == {}


@pytest.mark.parametrize("gates, profiles, said", [
    ("{}", "[v1.14.2]", "gate"),
    ("{StaticCapacity: true}", "[v1.14.2]", None),
    ("{}", "[v1.7.2]", "pruned"),              # core v1.7.1 has no such field to gate
])
def test_replicas_with_the_static_capacity_gate_off_are_said_at_their_line(tmp_path, gates, profiles, said):
    text = f"""\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: s}}
given:
  profiles: {profiles}
  featureGates: {gates}
manifests:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {{name: d}}
    spec:
      replicas: 2
      template:
        spec:
          nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
"""
    (sc,) = load_scenarios_text(text, "x.scenario.yaml", tmp_path)
    texts = [(n.line, n.message) for n in sc.warnings]
    if said is None:
        assert texts == []
    elif said == "gate":
        assert texts == [(12, "NodePool d: spec.replicas needs core's StaticCapacity feature gate, off here "
                              "(given.featureGates): core starts no static capacity controller, and its provisioner "
                              "still leaves a static NodePool out, so no node is made for it (sigs.k8s.io/karpenter "
                              "v1.14.0 pkg/controllers/controllers.go NewControllers, "
                              "pkg/controllers/provisioning/provisioner.go NewScheduler)")]
    else:
        assert [line for line, _ in texts] == [12] and "is not in core's NodePool schema (profile v1.7.2)" in texts[0][1]


def test_a_limitrange_claim_item_is_reported_by_value():
    from harness.scenario.envelope import unmodeled_values
    lr = {"kind": "LimitRange", "metadata": {"name": "d"}, "spec": {"limits": [{"type": "PersistentVolumeClaim"}]}}
    assert unmodeled_values(lr) == [(("spec", "limits", 0, "type"), "spec.limits.type", "PersistentVolumeClaim",
                                     "limitrange-pvc")]
    lr["spec"]["limits"][0]["type"] = "Container"
    assert unmodeled_values(lr) == []


def test_a_balanced_consolidation_policy_is_modeled():
    # core v1.14.0's Balanced scoring is simulated (harness/loop/disruption/balanced.py)
    from harness.scenario.envelope import unmodeled_values
    np = {"kind": "NodePool", "metadata": {"name": "d"}, "spec": {"disruption": {"consolidationPolicy": "Balanced"}}}
    assert unmodeled_values(np) == [] and fields(np) == {}


def test_pod_disruption_budgets_are_modeled():
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}}
    assert fields(pdb) == {}


def test_pod_fields_in_deployment_templates_use_the_pod_rules():
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": 1, "template": {"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}},
                                               "spec": {"containers": [{"name": "c", "image": "i",
                                                                        "ports": [{"containerPort": 80, "hostPort": 80}]}],
                                                        "initContainers": [{"name": "i", "image": "i",
                                                                            "ports": [{"containerPort": 81, "hostPort": 81}]}],
                                                        "resourceClaims": [{"name": "gpu"}], "futureField": 1}}}}
    # a container's host port is modeled (harness/loop/scheduling/hostports.py); an init container's is not
    assert fields(dep) == {
        "spec.template.spec.initContainers.ports.hostPort": "hostports",
        "spec.template.spec.resourceClaims": "dra",
        "spec.template.spec.futureField": "unlisted"}


def test_modeled_and_inert_fields_are_quiet():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
           "spec": {"nodeSelector": {"a": "b"}, "tolerations": [], "containers": [
               {"name": "c", "image": "i", "env": [], "resources": {"requests": {"cpu": "1"}}}],
               "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "x"}}]}, "status": {"phase": "Pending"}}
    assert fields(pod) == {}


def test_notice_points_at_the_field_line(tmp_path):
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
given: {skus: [Standard_D2s_v3]}
manifests:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: d}
    spec:
      disruption:
        consolidationPolicy: WhenEmpty
      template:
        spec:
          nodeClassRef: {name: default}
  - apiVersion: v1
    kind: LimitRange
    metadata: {name: r}
    spec:
      limits:
        - type: PersistentVolumeClaim
"""
    (sc,) = load_scenarios_text(text, "x.scenario.yaml", tmp_path)
    (n,) = sc.warnings
    assert n.line == 20 and "LimitRange r: spec.limits.type: PersistentVolumeClaim is not modeled" in n.message


def test_validate_prints_warnings_and_still_passes(capsys):
    assert cli_main(["validate", str(SCENARIOS / "bugs" / "any-region-catalog.scenario.yaml")]) == 0
    out = capsys.readouterr()
    assert "Standard_D8ds_v5 is synthesized from its name" in out.err
    assert "2 warning(s)" in out.out


@pytest.mark.filterwarnings("error")
def test_every_library_field_is_either_listed_or_reported():
    # the library loads; each notice names a field and its line
    from harness.scenario.load import find_scenario_files, load_scenarios
    for f in find_scenario_files([SCENARIOS]):
        for sc in load_scenarios(f):
            for n in sc.warnings:
                assert n.line >= 1 and n.message


def test_a_field_at_its_api_default_is_not_warned():
    """`kubectl get -o yaml` shows every defaulted field: schedulerName default-scheduler asks for nothing."""
    pod = {"kind": "Pod", "spec": {"schedulerName": "default-scheduler", "containers": []}}
    assert "spec.schedulerName" not in fields(pod)
    assert fields({"kind": "Pod", "spec": {"schedulerName": "gpu-scheduler", "containers": []}})["spec.schedulerName"] \
        == "scheduler"
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"schedulerName": "default-scheduler"}}}}
    assert "spec.template.spec.schedulerName" not in fields(deployment)


def test_kinds_that_cannot_change_a_scheduling_outcome_are_accepted_and_named_once(tmp_path):
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
given: {skus: [Standard_D2s_v3]}
manifests:
  - {apiVersion: v1, kind: Service, metadata: {name: web}, spec: {selector: {app: web}}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, data: {x: "1"}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}
steps:
  - apply: [{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: deny}}]
"""
    (sc,) = load_scenarios_text(text, "x.scenario.yaml", tmp_path)
    assert [m.obj["kind"] for m in sc.manifests] == ["Pod"] and sc.step_manifests == [[]]
    got = {n.line: n.message for n in sc.warnings}
    assert got[6].startswith("Service web: accepted, not applied: Karpenter does not read Services")
    assert got[7].startswith("2 ConfigMaps (a, b): accepted, not applied: no scheduling decision reads them")
    assert got[11].startswith("NetworkPolicy deny: accepted, not applied")
    assert len(got) == 3


def test_a_kind_that_can_change_an_outcome_is_still_refused(tmp_path):
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
manifests:
  - {apiVersion: storage.k8s.io/v1, kind: CSINode, metadata: {name: l}}
"""
    from harness.scenario.yamlsource import SourceError
    with pytest.raises(SourceError, match="unsupported kind 'CSINode'"):
        load_scenarios_text(text, "x.scenario.yaml", tmp_path)


def test_a_replication_controller_runs_as_a_replicaset_and_says_so(tmp_path):
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
given: {skus: [Standard_D2s_v3]}
manifests:
  - apiVersion: v1
    kind: ReplicationController
    metadata: {name: web}
    spec:
      replicas: 2
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: i}]}
"""
    sc = load_scenarios_text(text, "x.scenario.yaml", tmp_path)[0]
    rs = sc.manifests[0].obj
    assert (rs["apiVersion"], rs["kind"], rs["spec"]["replicas"]) == ("apps/v1", "ReplicaSet", 2)
    # the API server defaults the selector and the object's labels to the template's
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web"}} and rs["metadata"]["labels"] == {"app": "web"}
    said = [n.message for n in sc.warnings if "ReplicationController web" in n.message]
    assert len(said) == 1 and "run as a ReplicaSet of the same pods" in said[0] and sc.manifests[0].line == 6


def test_fields_the_api_server_drops_are_said_in_its_words(tmp_path):
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
given: {skus: [Standard_D2s_v3]}
manifests:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: d}
    spec:
      template:
        spec:
          kubelet: {maxPods: 50}
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: kubernetes.io/os, operator: In, values: [linux]}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers: [{name: c, image: i, madeUp: 1}]
"""
    (sc,) = load_scenarios_text(text, "x.scenario.yaml", tmp_path)
    got = {n.line: n.message for n in sc.warnings}
    assert got == {
        12: "NodePool d: spec.template.spec.kubelet is not in core's NodePool schema (profile upstream): the API "
            "server prunes it, so Karpenter never sees it (kubectl prints: Warning: unknown field "
            "\"spec.template.spec.kubelet\")",
        19: "Pod p: spec.containers[0].madeUp is no field of a Pod (Kubernetes v1.36.3): the API server drops it "
            "(kubectl prints: Warning: unknown field \"spec.containers[0].madeUp\")"}


@pytest.mark.parametrize("profile", release_profiles())
def test_aksnodeclass_inert_fields_are_inert_at_every_release(profile):
    """envelope.yaml's AKSNodeClass `inert` list is a claim about every release: no release's AKSNodeClass hash reads
    one of those fields (a field the hash reads drifts every node of the AKSNodeClass when it changes: spec.tags
    before provider v1.6.2), and every spec field of the release's AKSNodeClass CRD has a rule (modeled, or
    unmodeled with its reason; none unlisted)."""
    prof = load_profile(profile)
    section = _data()["kinds"]["AKSNodeClass"]
    inert = [p for p in section.get("inert") or [] if p.startswith("spec.")]
    assert [p for p in inert if p.split(".")[1] in prof.nodeclass_hashed_fields] == []
    rules = rules_for("AKSNodeClass")
    fields = (prof.aks_nodeclass_schema or {}).get("properties") or {}
    assert [f for f in fields if ("spec", f) not in rules.status and not rules.deeper(("spec", f))] == []


def test_aksnodeclass_tags_are_hashed_before_v1_6_2_so_not_inert():
    assert "tags" in load_profile("v1.4.1").nodeclass_hashed_fields
    assert "tags" not in load_profile("v1.6.2").nodeclass_hashed_fields
    assert rules_for("AKSNodeClass").status[("spec", "tags")] == "modeled"


def _nodepool_paths(status: str) -> list[str]:
    section = _data()["kinds"]["NodePool"]
    common = [p for p in (_data()["common"].get(status) or []) if p.startswith("spec.")]
    own = section.get(status) or []
    return common + (list(own) if isinstance(own, list) else list(own))


@pytest.mark.parametrize("profile", release_profiles())
def test_nodepool_fields_say_what_each_release_hashes(profile):
    """envelope.yaml's NodePool fields, each read at every release for what its NodePool hash does with it
    (derived: core-behaviour.yaml nodePoolHashedFields / nodePoolHashIgnored): no `inert` field is one a release
    hashes (a change of it drifts every node of the NodePool), and every spec.template.spec field of the release's
    NodePool CRD is hashed or left out by derivation (none unaccounted for) and has a rule."""
    prof = load_profile(profile)
    reads = {p: nodepool_hash_reads(p, prof) for s in ("modeled", "inert", "unmodeled") for p in _nodepool_paths(s)}
    assert set(reads.values()) <= set(HASH_READS)
    assert [p for p in _nodepool_paths("inert") if reads[p] == HASHED] == []
    rules = rules_for("NodePool")
    spec = (((prof.crd_spec_schema("NodePool") or {})["properties"]["template"]["properties"]["spec"])["properties"])
    assert set(spec) == prof.nodepool_hashed_fields | prof.nodepool_hash_ignored
    assert [f for f in spec if ("spec", "template", "spec", f) not in rules.status] == []


def test_nodepool_hash_reads_by_release():
    """The examples: the template's expireAfter is hashed from core v1.0 (v1), where v0.36 (v1beta1) keeps it
    in spec.disruption, outside the hash; the kubelet is hashed at v0.36 only; requirements never are."""
    v055, v075, newest = (load_profile(p) for p in ("v0.5.5", "v0.7.5", "upstream"))
    assert nodepool_hash_reads("spec.template.spec.expireAfter", v075) == HASHED
    assert nodepool_hash_reads("spec.template.spec.expireAfter", v055) == "not in the template"
    assert nodepool_hash_reads("spec.disruption.expireAfter", v055) == "not hashed"
    assert nodepool_hash_reads("spec.template.spec.kubelet", v055) == HASHED
    assert nodepool_hash_reads("spec.template.spec.kubelet", newest) == "not in the template"
    assert {nodepool_hash_reads("spec.template.spec.requirements", p) for p in (v055, v075, newest)} == {"ignored"}
    assert nodepool_hash_reads("spec.template.metadata.labels", v055) == HASHED
    assert nodepool_hash_reads("spec.disruption.budgets", newest) == "not hashed"


def test_statefulset_fields_are_modeled_and_max_unavailable_is_dropped(tmp_path):
    """A StatefulSet's template uses the Pod rules; rollingUpdate.maxUnavailable is a field kube-apiserver v1.36
    drops (its feature gate is off), said at its line as such."""
    st = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
          "spec": {"serviceName": "db", "replicas": 3, "podManagementPolicy": "Parallel", "minReadySeconds": 5,
                   "revisionHistoryLimit": 10, "selector": {"matchLabels": {"app": "db"}},
                   "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
                   "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
                   "template": {"metadata": {"labels": {"app": "db"}},
                                "spec": {"containers": [{"name": "c", "image": "i"}], "resourceClaims": [{"name": "g"}]}},
                   "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                             "metadata": {"name": "data"},
                                             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "managed-csi",
                                                      "resources": {"requests": {"storage": "1Gi"}},
                                                      "selector": {"matchLabels": {"disk": "a"}}}}]}}
    assert fields(st) == {"spec.template.spec.resourceClaims": "dra",
                          "spec.volumeClaimTemplates.spec.selector": "volume-selector"}
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
given: {skus: [Standard_D2s_v3]}
manifests:
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db}
    spec:
      serviceName: db
      selector: {matchLabels: {app: db}}
      updateStrategy:
        rollingUpdate:
          maxUnavailable: 2
      template:
        metadata: {labels: {app: db}}
        spec: {containers: [{name: c, image: i}]}
"""
    (sc,) = load_scenarios_text(text, "x.scenario.yaml", tmp_path)
    (n,) = sc.warnings
    assert n.line == 14 and n.message.startswith("StatefulSet db: spec.updateStrategy.rollingUpdate.maxUnavailable is "
                                                 "dropped by the API server: its feature gate MaxUnavailableStatefulSet")


def test_the_admission_kinds_and_pod_priority_are_modeled():
    """PriorityClass, LimitRange, ResourceQuota and a ReplicaSet's template are modeled; a LimitRange's claim item
    and a quota's non-pod objects are said by value and by name (harness/data/envelope.yaml)."""
    from harness.scenario.envelope import unmodeled_values
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "h"}, "value": 10,
          "globalDefault": False, "preemptionPolicy": "Never", "description": "d"}
    assert fields(pc) == {}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                   "template": {"spec": {"priorityClassName": "h", "priority": 10, "preemptionPolicy": "Never",
                                         "containers": [{"name": "c", "image": "i"}]}}}}
    assert fields(rs) == {}
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
          "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}, "maxLimitRequestRatio": {"cpu": "2"}},
                              {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}}]}}
    assert fields(lr) == {}
    assert [v[2:] for v in unmodeled_values(lr)] == [("PersistentVolumeClaim", "limitrange-pvc")]
    rq = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
          "spec": {"hard": {"pods": "4", "requests.cpu": "2", "services": "3"}, "scopes": ["NotBestEffort"]}}
    assert fields(rq) == {"spec.hard.services": "quota-objects"}
