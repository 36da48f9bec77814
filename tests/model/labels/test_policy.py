"""Label policy tables: the kubelet label filter (github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/launchtemplate/launchtemplate.go getStaticParameters / labels_test.go
TestIsKubeletLabel, karpenter-provider-azure v1.14.0 pkg/providers/labels/labels_test.go; k8s.io/kubelet v0.36.3
pkg/apis/well_known_labels.go IsKubeletLabel), kubelet flag validation (k8s.io/kubernetes v1.36.3
cmd/kubelet/app/options/options.go ValidateKubeletFlags) and NodeRestriction (k8s.io/kubernetes v1.36.3
plugin/pkg/admission/noderestriction/admission.go; k8s.io/kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go), and
IsRestrictedLabel per core
version (sigs.k8s.io/karpenter v1.14.0 and v1.6.2 pkg/apis/v1/labels.go; sigs.k8s.io/karpenter v1.6.2
pkg/scheduling/requirement.go)."""
from __future__ import annotations

import pytest

from harness.model.labels.policy import (can_kubelet_set_label, is_kubelet_label, kubelet_flag_error, label_value_errors,
                                  node_restriction_forbids, qualified_name_errors, restricted_label_error)
from harness.model.upstream.profile import load_profile

UP = load_profile("upstream")
OLD = load_profile("before-0006")


@pytest.mark.parametrize("key, allowed", [
    ("kubernetes.io/hostname", True),
    ("topology.kubernetes.io/zone", True),
    ("topology.kubernetes.io/region", True),
    ("failure-domain.beta.kubernetes.io/zone", True),
    ("beta.kubernetes.io/instance-type", True),
    ("node.kubernetes.io/instance-type", True),
    ("kubernetes.io/os", True),
    ("kubernetes.io/arch", True),
    ("node.kubernetes.io/windows-build", True),       # allowed namespace
    ("kubelet.kubernetes.io/custom-label", True),
    ("foo.node.kubernetes.io/x", True),
    ("karpenter.sh/nodepool", True),                  # not a kubernetes label
    ("kubernetes.azure.com/mode", True),
    ("example.com/x", True),
    ("app", True),                                    # un-prefixed
    ("node-restriction.kubernetes.io/foo", False),
    ("scheduler.kubernetes.io/x", False),
    ("kubernetes.io/custom-label", False),
    ("k8s.io/custom-label", False),
    ("example.k8s.io/x", False),
    ("node-role.kubernetes.io/worker", False),
    ("app.kubernetes.io/managed-by", False),
])
def test_can_kubelet_set_label(key, allowed):
    assert can_kubelet_set_label(key, UP) == allowed


def test_is_kubelet_label_namespaces():
    assert is_kubelet_label("node.kubernetes.io/anything", UP)
    assert not is_kubelet_label("kubernetes.io/anything", UP)


def test_kubelet_refuses_unknown_kubernetes_io_labels():
    err = kubelet_flag_error({"node-restriction.kubernetes.io/foo": "bar", "example.com/ok": "1"}, UP)
    assert err.startswith("failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified "
                          "with --node-labels: [node-restriction.kubernetes.io/foo]\n--node-labels in the "
                          "'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, "
                          "node.kubernetes.io) or be in the specifically allowed set (beta.kubernetes.io/arch, ")
    assert kubelet_flag_error({"kubernetes.azure.com/mode": "user"}, UP) is None


def test_kubelet_invalid_node_labels_one_entry_per_key_or_value():
    """k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags `invalid node labels: '<k or
    v>' - <msgs>; ...`: a key's messages share one entry (", "-joined,
    as ValidateKubeletFlags does); entries are "; "-joined (k8s.io/kubernetes v1.36.3
    cmd/kubelet/app/options/options.go ValidateKubeletFlags)."""
    long_bad = "example.com/" + "a" * 63 + "-"       # name part too long and not ending alphanumeric
    err = kubelet_flag_error({long_bad: "ok", "example.com/v": "-bad"}, UP)
    name_errs = qualified_name_errors(long_bad)
    assert len(name_errs) == 2
    assert err == ("failed to validate kubelet flags: invalid node labels: "
                   f"'{long_bad}' - {name_errs[0]}, {name_errs[1]}; "
                   f"'-bad' - {label_value_errors('-bad')[0]}")


@pytest.mark.parametrize("key, forbidden", [
    ("node-restriction.kubernetes.io/foo", True),
    ("x.node-restriction.kubernetes.io/foo", True),
    ("kubernetes.io/custom", True),
    ("kubernetes.io/hostname", False),
    ("node.kubernetes.io/foo", False),
    ("kubernetes.azure.com/cluster", False),
])
def test_node_restriction(key, forbidden):
    assert node_restriction_forbids(key, UP) == forbidden


def test_restricted_label_upstream_message():
    msg = restricted_label_error("karpenter.sh/custom", UP)
    assert msg.startswith("using label karpenter.sh/custom is not allowed as it might interfere with the internal "
                          "provisioning logic; specify a well known label: [karpenter.azure.com/placement-scope ")
    assert msg.endswith("or a custom label that does not use a restricted domain: [karpenter.azure.com karpenter.sh]")
    assert restricted_label_error("notkarpenter.sh/x", UP) is None            # dot boundary at HEAD
    # (IsRestrictedLabel, GetLabelDomain: sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/labels.go)
    assert restricted_label_error("kubernetes.io/hostname", UP) is not None   # RestrictedLabels
    assert restricted_label_error("app.kubernetes.io/x", UP) is None          # relaxed in core v1.9


def test_restricted_label_before_v19():
    assert restricted_label_error("app.kubernetes.io/x", OLD).startswith(
        "label is restricted; specify a well known label or a custom label that does not use a restricted domain "
        "(label=app.kubernetes.io/x, restricted-labels=[k8s.io karpenter.azure.com karpenter.sh kubernetes.io], "
        "well-known-labels=[")
    assert restricted_label_error("node-restriction.kubernetes.io/x", OLD) is None   # exception domain
    assert restricted_label_error("kops.k8s.io/x", OLD) is None
    assert restricted_label_error("mykubernetes.io/x", OLD) is not None             # plain suffix, sigs.k8s.io/karpenter v1.6.2 pkg/scheduling/requirement.go
    # (IsRestrictedLabel: sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go)


def test_qualified_names():
    assert qualified_name_errors("example.com/ok") == []
    assert qualified_name_errors("spaces are not allowed")
    assert qualified_name_errors("a/b/c")
    assert qualified_name_errors("UPPER.com/x") == [qualified_name_errors("UPPER.com/x")[0]]


def test_name_rules_kept_per_string_hand_out_fresh_lists():
    """The rules are kept per string (policy.py): a caller that changes the list it got changes nothing kept."""
    first = qualified_name_errors("a/b/c")
    first.append("changed")
    assert qualified_name_errors("a/b/c") == first[:-1]
    values = label_value_errors("-bad")
    values.clear()
    assert label_value_errors("-bad")
