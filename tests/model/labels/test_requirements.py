"""The requirement algebra against sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go,
pkg/scheduling/requirements.go (examples from sigs.k8s.io/karpenter v1.14.0
pkg/scheduling/requirements_test.go and requirement_test.go) and its laws (hypothesis)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.model.labels.requirements import IN, LABEL_REQUIREMENTS, MAX_INT64, Requirement, Requirements
from harness.model.labels.semantics import semantics_for

UP = semantics_for("upstream")
OLD = semantics_for("before-0006")


def R(key, op, *values, sem=UP, mv=None):
    return Requirement.new(key, op, list(values), sem, mv)


def Rs(*reqs):
    return Requirements(reqs)


# -- construction and rendering (sigs.k8s.io/karpenter v1.14.0
# pkg/scheduling/requirement.go NewRequirementWithFlexibility, String) -------
@pytest.mark.parametrize("req, text", [
    (R("greaterThan1", "Gt", "1"), "greaterThan1 Exists >=2"),
    (R("lessThan9", "Lt", "9"), "lessThan9 Exists <=8"),
    (R("notIn12", "NotIn", "1", "2"), "notIn12 NotIn [1 2]"),
    (R("exists", "Exists"), "exists Exists"),
    (R("dne", "DoesNotExist"), "dne DoesNotExist"),
    (R("many", "In", *"abcdefg"), "many In [a b c d e and 2 others]"),
    (R("k", "In", "a", mv=1), "k In [a] minValues 1"),
    (R("greaterThan1", "Gt", "1", sem=OLD), "greaterThan1 Exists >1"),
])
def test_string(req, text):
    assert str(req) == text


def test_normalizes_beta_and_csi_zone_keys():
    assert R("failure-domain.beta.kubernetes.io/zone", "In", "a").key == "topology.kubernetes.io/zone"
    assert R("beta.kubernetes.io/arch", "In", "amd64").key == "kubernetes.io/arch"
    z = R("topology.disk.csi.azure.com/zone", "In", "")
    assert z.key == "topology.kubernetes.io/zone" and z.values == {"0"}   # "" -> "0" (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go NewRequirement;
    # karpenter-provider-azure v1.14.0 pkg/utils/zones/normalization.go RegisterCSIZoneNormalization)
    # before-0006: the key is normalized but the value is not (docs/research/before-0006.md section 3;
    # sigs.k8s.io/karpenter v1.6.2
    # pkg/apis/v1/labels.go has NormalizedLabels but no NormalizedLabelValues)
    assert R("topology.disk.csi.azure.com/zone", "In", "", sem=OLD).values == {""}


def test_gt_max_int_is_does_not_exist():
    assert R("k", "Gt", str(MAX_INT64)).operator == "DoesNotExist"


def test_serialization_round_trip_gt_as_gte():
    assert R("k", "Gt", "1").node_selector() == [{"key": "k", "operator": "Gte", "values": ["2"]}]
    assert R("k", "Gt", "1", sem=OLD).node_selector() == [{"key": "k", "operator": "Gt", "values": ["1"]}]
    both = Rs(R("k", "Gt", "1"), R("k", "Lt", "9"))
    assert [e["operator"] for e in both.node_selector_requirements()] == ["Gte", "Lte"]


def test_len_and_operator():
    assert len(R("k", "In", "a", "b")) == 2
    assert len(R("k", "NotIn", "a")) == MAX_INT64 - 1
    assert R("k", "In").operator == "DoesNotExist"        # empty In reads as DoesNotExist
    # (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go Operator; sigs.k8s.io/karpenter v1.14.0
    # pkg/apis/v1/labels.go)


# -- intersection (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go Intersection;
# sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go Intersection) ------------------------------------------
def test_bounds_intersection_empty_is_does_not_exist():
    r = R("k", "Gt", "5").intersection(R("k", "Lt", "5"))
    assert r.operator == "DoesNotExist"


def test_exclusive_bounds_before_v19():
    # Gt 1 and Lt 3 leave the integer 2 in both models
    assert R("k", "Gt", "1", sem=OLD).intersection(R("k", "Lt", "3", sem=OLD)).has("2")
    # Gt 1 and Lt 2: empty set of integers; pre-v1.9 checks greaterThan >= lessThan only
    old = R("k", "Gt", "1", sem=OLD).intersection(R("k", "Lt", "2", sem=OLD))
    new = R("k", "Gt", "1").intersection(R("k", "Lt", "2"))
    assert new.operator == "DoesNotExist"
    assert old.operator == "Exists" and not old.has("1") and not old.has("2")


def test_has_respects_bounds_and_non_integers():
    r = R("k", "Gt", "3")
    assert r.has("4") and not r.has("3") and not r.has("abc")


# -- Compatible vs Intersects (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go;
# sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go Compatible) -------------------------------------------
def test_undefined_custom_key_fails_compatible_but_not_intersects():
    node = Rs(R("zone", "In", "a"))
    pod = Rs(R("foo", "In", "bar"))
    assert node.intersects(pod) is None
    assert node.compatible(pod) == 'label "foo" does not have known values'


def test_allow_undefined_well_known():
    unconstrained = Rs()
    pod = Rs(R("topology.kubernetes.io/zone", "Exists"))
    assert unconstrained.compatible(pod, frozenset({"topology.kubernetes.io/zone"})) is None
    assert unconstrained.compatible(pod) is not None


def test_typo_hint():
    base = Rs(R("topology.kubernetes.io/zone", "In", "a"))
    assert base.compatible(Rs(R("zone", "In", "a"))) == \
        'label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'
    assert Rs().compatible(Rs(R("deployment", "In", "a"))) == 'label "deployment" does not have known values'


@pytest.mark.parametrize("existing, incoming, ok", [
    (R("k", "DoesNotExist"), R("k", "NotIn", "a"), True),
    (R("k", "Exists"), R("k", "DoesNotExist"), False),
    (R("k", "In", "a"), R("k", "NotIn", "1", "2"), True),
    (R("k", "In", "1"), R("k", "NotIn", "1", "2"), False),
    (R("k", "NotIn", "1"), R("k", "DoesNotExist"), True),
])
def test_compatible_table(existing, incoming, ok):
    assert (Rs(existing).compatible(Rs(incoming)) is None) == ok


def test_negative_operators_pass_on_undefined_keys():
    assert Rs().compatible(Rs(R("foo", "NotIn", "x"))) is None
    assert Rs().compatible(Rs(R("foo", "DoesNotExist"))) is None


def test_intersects_error_text():
    existing = Rs(R("topology.kubernetes.io/zone", "In", "test-zone-1", "test-zone-2"))
    incoming = Rs(R("topology.kubernetes.io/zone", "In", "z9"))
    assert existing.intersects(incoming) == ("key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [z9] "
                                             "not in topology.kubernetes.io/zone In [test-zone-1 test-zone-2]")


def test_missing_key_reads_as_exists():
    assert Rs().get("anything").operator == "Exists"


def test_any_is_seeded_and_in_range():
    rng = random.Random(7)
    assert R("k", "In", "a", "b").any(rng) in ("a", "b")
    v = int(R("k", "Gt", "10").intersection(R("k", "Lt", "20")).any(rng))
    assert 11 <= v <= 19
    assert R("k", "DoesNotExist").any(rng) == ""
    assert R("k", "In", "a", "b", "c").any(random.Random(1)) == R("k", "In", "c", "b", "a").any(random.Random(1))


# -- laws (hypothesis) -----------------------------------------------------------------------------
VALUES = st.sampled_from(["1", "2", "5", "10", "a", "b"])
OPS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"])


@st.composite
def requirement(draw, sem=UP):
    op = draw(OPS)
    if op in ("Gt", "Lt", "Gte", "Lte"):
        vals = [draw(st.sampled_from(["0", "1", "2", "5", "10"]))]
    elif op in ("In", "NotIn"):
        vals = draw(st.lists(VALUES, min_size=1, max_size=4))
    else:
        vals = []
    return Requirement.new("k", op, vals, sem)


@settings(max_examples=300, deadline=None)
@given(requirement(), requirement())
def test_intersection_commutes(a, b):
    x, y = a.intersection(b), b.intersection(a)
    for v in ["0", "1", "2", "3", "5", "7", "10", "11", "a", "b", "z"]:
        assert x.has(v) == y.has(v)
    assert x.complement == y.complement


@settings(max_examples=300, deadline=None)
@given(requirement(), requirement())
def test_intersection_is_set_intersection(a, b):
    x = a.intersection(b)
    for v in ["0", "1", "2", "3", "5", "7", "10", "11", "a", "b", "z"]:
        assert x.has(v) == (a.has(v) and b.has(v))


@settings(max_examples=300, deadline=None)
@given(requirement(), requirement(), requirement())
def test_intersection_associates(a, b, c):
    x, y = a.intersection(b).intersection(c), a.intersection(b.intersection(c))
    for v in ["0", "1", "2", "3", "5", "7", "10", "11", "a", "b", "z"]:
        assert x.has(v) == y.has(v)


@settings(max_examples=300, deadline=None)
@given(requirement(), requirement())
def test_has_intersection_agrees_with_intersection(a, b):
    # HasIntersection ignores the excluded values of two complements (sigs.k8s.io/karpenter v1.14.0
    # pkg/scheduling/requirement.go HasIntersection), so it may say yes
    # where the full intersection is a complement; for everything else the two agree.
    x = a.intersection(b)
    if not (a.complement and b.complement):
        assert a.has_intersection(b) == (len(x) > 0 and (x.complement or any(x.has(v) for v in x.values)))


@settings(max_examples=200, deadline=None)
@given(requirement())
def test_intersection_idempotent(a):
    x = a.intersection(a)
    for v in ["0", "1", "2", "5", "10", "a", "b", "z"]:
        assert x.has(v) == a.has(v)


# -- integers are read with Go's strconv (harness/model/values/gostrconv.py parse_int64) ------------------
def test_a_value_past_pythons_int_digit_limit_does_not_crash():
    """Python's int() refuses strings over 4300 digits (sys.int_info.str_digits_check_threshold);
    Go's Atoi reports a range error, which NewRequirementWithFlexibility ignores (the bound reads 0),
    and a label value that does not parse is outside any bound."""
    huge = "9" * 5000
    assert R("k", "Gt", huge) == R("k", "Gt", "0")
    assert R("k", "Lt", "-" + huge) == R("k", "Lt", "0")
    assert not R("k", "Gt", "1").has(huge)
    assert R("k", "Exists").has(huge)


def test_label_requirements_are_interned_per_semantics():
    sem = semantics_for("upstream")
    labels = {"topology.kubernetes.io/zone": "eastus-1", "failure-domain.beta.kubernetes.io/region": "eastus"}
    a, b = Requirements.from_labels(labels, sem), Requirements.from_labels(dict(labels), sem)
    assert dict(a) == {r.key: r for r in (Requirement.new(k, IN, [v], sem) for k, v in labels.items())}
    assert all(a[k] is b[k] for k in a)
    assert LABEL_REQUIREMENTS.get("k", "v", semantics_for("before-0006")) is not LABEL_REQUIREMENTS.get("k", "v", sem)
