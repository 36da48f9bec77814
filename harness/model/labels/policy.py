"""Label-key policy: domains, restricted labels, kubelet rules, NodeRestriction, Kubernetes name rules.

Every rule lives here once; the profile supplies the sets. Upstream: sigs.k8s.io/karpenter v1.14.0
pkg/apis/v1/labels.go (GetLabelDomain, IsRestrictedLabel), k8s.io/kubelet pkg/apis/well_known_labels.go
(IsKubeletLabel), k8s.io/kubernetes cmd/kubelet/app/options/options.go (ValidateKubeletFlags) and
plugin/pkg/admission/noderestriction/admission.go, the provider's pkg/providers/labels/labels.go
(CanKubeletSetLabel); sigs.k8s.io/karpenter v1.6.2 pkg/scheduling/requirement.go;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/labels.go init,
pkg/providers/launchtemplate/launchtemplate.go getStaticParameters.
"""
from __future__ import annotations

import functools
import re

from harness.model.upstream.profile import Profile

# k8s.io/apimachinery v0.35.1 pkg/api/validate/content/kube.go (IsLabelKey, IsLabelValue, behind
# pkg/util/validation IsQualifiedName / IsValidLabelValue; sigs.k8s.io/karpenter v1.14.0
# pkg/apis/v1/nodepool_validation.go RuntimeValidate); the CRDs' label-value
# OpenAPI pattern is the same regex (sigs.k8s.io/karpenter v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml).
LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
LABEL_VALUE_RE = re.compile(LABEL_VALUE_PATTERN)
_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
                      "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                         "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                         "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def go_list(items) -> str:
    """Go's %v rendering of a []string: `[a b c]`."""
    return "[" + " ".join(items) + "]"


def go_set(items) -> str:
    """Go's %v rendering of a k8s.io/apimachinery sets.Set[string] (a map[string]Empty, printed with
    sorted keys): `map[a:{} b:{}]`."""
    return "map[" + " ".join(f"{k}:{{}}" for k in sorted(items)) + "]"


def label_domain(key: str) -> str:
    """core GetLabelDomain (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/labels.go): text before
    the first '/',
    or "" without one."""
    return key.split("/", 1)[0] if "/" in key else ""


def _in_domain(domain: str, parent: str) -> bool:
    return domain == parent or domain.endswith("." + parent)


# -- apimachinery name rules -----------------------------------------------------------------------
def qualified_name_errors(key: str) -> list[str]:
    return list(_qualified_name_errors(key))


# The name rules below are pure functions of one string, asked again for the same label keys and values
# every run (each Node's labels at its kubelet's start, NodeRestriction on each write): kept per string.
@functools.lru_cache(maxsize=8192)
def _qualified_name_errors(key: str) -> tuple[str, ...]:
    return tuple(_name_errors(key))


def _name_errors(key: str) -> list[str]:
    parts = key.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
    else:
        return ["a qualified name " + QUALIFIED_NAME_MSG + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    errs: list[str] = []
    if prefix:
        if len(prefix) > 253:
            errs.append("prefix part must be no more than 253 characters")
        if not _DNS1123_SUBDOMAIN_RE.match(prefix):
            errs.append("prefix part " + DNS1123_SUBDOMAIN_MSG)
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _NAME_RE.match(name):
        errs.append("name part " + QUALIFIED_NAME_MSG)
    return errs


def label_value_errors(value: str) -> list[str]:
    return list(_label_value_errors(value))


@functools.lru_cache(maxsize=8192)
def _label_value_errors(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not LABEL_VALUE_RE.match(value):
        errs.append(LABEL_VALUE_MSG)
    return tuple(errs)


# -- Karpenter core ------------------------------------------------------------------------------
def restricted_label_error(key: str, profile: Profile) -> str | None:
    """core IsRestrictedLabel (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/labels.go
    at v1.14.0, sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirement.go before v1.9). None
    when allowed."""
    if key in profile.well_known_labels:
        return None
    if profile.uses_restricted_node_label:
        # before v1.9 (sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go IsRestrictedNodeLabel;
        # sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirement.go)
        restricted = is_restricted_node_label(key, profile)
    else:
        domain = label_domain(key)
        restricted = any(_in_domain(domain, d) for d in profile.restricted_label_domains) or (
            key in profile.restricted_labels)
    if not restricted:
        return None
    return profile.core["restrictedLabelMessage"].format(
        key=key,
        wellKnown=go_list(sorted(profile.well_known_labels)),
        domains=go_list(sorted(profile.restricted_label_domains)),
    )


def is_restricted_node_label(key: str, profile: Profile) -> bool:
    """Pre-v1.9 core IsRestrictedNodeLabel (sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go;
    sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirement.go): well-known counts as
    restricted, since the cloud provider (not core)
    injects it. Used by Requirements.Labels() before v1.9."""
    if key in profile.well_known_labels:
        return True
    domain = label_domain(key)
    if any(domain.endswith(e) for e in profile.label_domain_exceptions):
        return False
    if any(domain.endswith(d) for d in profile.restricted_label_domains):
        return True
    return key in profile.restricted_labels


# -- kubelet and NodeRestriction -----------------------------------------------------------------
@functools.lru_cache(maxsize=8192)
def is_kubernetes_label(key: str) -> bool:
    """Namespace kubernetes.io / k8s.io or a subdomain of either (k8s.io/kubernetes v1.36.3
    plugin/pkg/admission/noderestriction/admission.go isKubernetesLabel,
    cmd/kubelet/app/options/options.go ValidateKubeletFlags)."""
    d = label_domain(key)
    return _in_domain(d, "kubernetes.io") or _in_domain(d, "k8s.io")


def is_kubelet_label(key: str, profile: Profile) -> bool:
    """IsKubeletLabel (k8s.io/kubelet v0.36.3 pkg/apis/well_known_labels.go)."""
    if key in profile.kubelet_allowed_labels:
        return True
    d = label_domain(key)
    return any(_in_domain(d, ns) for ns in profile.kubelet_allowed_namespaces)


def can_kubelet_set_label(key: str, profile: Profile) -> bool:
    """provider CanKubeletSetLabel (karpenter-provider-azure v1.14.0 pkg/providers/labels/labels.go;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/launchtemplate/launchtemplate.go
    getStaticParameters) (= what
    kubelet flag validation accepts)."""
    return not is_kubernetes_label(key) or is_kubelet_label(key, profile)


def node_restriction_forbids(key: str, profile: Profile) -> bool:
    """Labels a node identity may not set or modify (NodeRestriction: k8s.io/kubernetes v1.36.3
    plugin/pkg/admission/noderestriction/admission.go Plugin.getForbiddenLabels
    rules (a) and (b))."""
    d = label_domain(key)
    if _in_domain(d, "node-restriction.kubernetes.io"):
        return True
    return is_kubernetes_label(key) and not is_kubelet_label(key, profile)


def kubelet_flag_error(labels: dict[str, str], profile: Profile) -> str | None:
    """ValidateKubeletFlags for --node-labels (k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go;
    k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags): the kubelet exits
    on error."""
    bad = sorted(k for k in labels if is_kubernetes_label(k) and not is_kubelet_label(k, profile))
    if bad:
        allowed = ", ".join(sorted(profile.kubelet_allowed_labels))
        namespaces = ", ".join(profile.kubelet_allowed_namespaces)
        return ("failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with "
                f"--node-labels: {go_list(bad)}\n--node-labels in the 'kubernetes.io' namespace must begin with an "
                f"allowed prefix ({namespaces}) or be in the specifically allowed set ({allowed})")
    # One entry per invalid key or value string, `'<k or v>' - <msgs>`, entries joined with "; "
    # (k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags). options.go joins an entry's
    # messages with ", " and ranges over a Go map (random order; ours is
    # label order).
    invalid: dict[str, list[str]] = {}
    for k, v in sorted(labels.items()):
        if errs := _qualified_name_errors(k):
            invalid.setdefault(k, []).extend(errs)
        if errs := _label_value_errors(v):
            invalid.setdefault(v, []).extend(errs)
    if invalid:
        return "failed to validate kubelet flags: invalid node labels: " + "; ".join(
            f"'{s}' - {', '.join(msgs)}" for s, msgs in invalid.items())
    return None
