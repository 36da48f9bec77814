"""Request-aware faults: a rule matches a field of the request body with Azure Policy's condition
vocabulary, and RequestDisallowedByPolicy answers as an Azure Policy deny does (403, the message
naming the assignment and definition, one additionalInfo entry of type PolicyViolation; shapes:
https://learn.microsoft.com/azure/automation/enforce-job-execution-hybrid-worker and
https://learn.microsoft.com/azure/governance/policy/concepts/effect-deny)."""
from __future__ import annotations

import json

import pytest
from azure.core.exceptions import HttpResponseError

from fakeazure.faults import body_condition, body_matches, evaluated_expressions, make_fault

from fa_helpers import RG, SUB, create_nic, vm_body

ENCRYPTION = "properties.securityProfile.encryptionAtHost"
DENY_NO_EAH = {"code": "RequestDisallowedByPolicy", "match": {"operation": "vm.create",
                                                              "body": {ENCRYPTION: {"notEquals": True}}}}


def _put(env, name, eah=None):
    nic_id = create_nic(env, name)
    body = vm_body(nic_id=nic_id)
    if eah is not None:
        body["properties"]["securityProfile"] = {"encryptionAtHost": eah}
    try:
        env.compute.virtual_machines.begin_create_or_update(RG, name, body).result()
    except HttpResponseError as e:
        return e
    return None


def test_policy_denies_vm_without_encryption_at_host(fake):
    fake.state.add_fault(DENY_NO_EAH)
    e = _put(fake, "vm1")
    assert e is not None and e.status_code == 403 and e.error.code == "RequestDisallowedByPolicy"
    assert e.error.target == "vm1"
    assert e.error.message.startswith("Resource 'vm1' was disallowed by policy. Policy identifiers: '[")
    ids = json.loads(e.error.message.split("Policy identifiers: '", 1)[1][:-2])
    assert ids == [{"policyAssignment": {"name": "deny-policy",
                                         "id": f"/subscriptions/{SUB}/providers/Microsoft.Authorization/policyAssignments/deny-policy"},
                    "policyDefinition": {"name": "deny-policy",
                                         "id": f"/subscriptions/{SUB}/providers/Microsoft.Authorization/policyDefinitions/deny-policy"}}]
    raw = e.response.json()["error"]
    [info] = raw["additionalInfo"]
    assert info["type"] == "PolicyViolation"
    assert info["info"]["policyDefinitionEffect"] == "Deny"
    assert info["info"]["evaluationDetails"]["evaluatedExpressions"] == [
        {"result": "True", "expressionKind": "Field", "expression": ENCRYPTION, "path": ENCRYPTION,
         "targetValue": True, "operator": "NotEquals"}]
    assert fake.state.vms() == []                               # refused before the resource provider
    assert _put(fake, "vm2", eah=False).error.code == "RequestDisallowedByPolicy"
    assert _put(fake, "vm3", eah=True) is None                  # compliant: created


def test_policy_reason_message_and_named_builtin(fake):
    fake.state.add_fault({**DENY_NO_EAH, "policy": {
        "assignment": "require-eah", "definition": "/providers/Microsoft.Authorization/policyDefinitions/"
                                                   "fc4d8e41-e223-45ea-9bf5-eada37891d87",
        "definitionDisplayName": "Virtual machines and virtual machine scale sets should have encryption at host enabled",
        "reason": "Encryption at host is required"}})
    e = _put(fake, "vm1")
    assert e.error.message == ("Resource 'vm1' was disallowed by policy. Reasons: 'Encryption at host is required'. "
                               "See error details for policy resource IDs.")
    info = e.response.json()["error"]["additionalInfo"][0]["info"]
    assert info["policyDefinitionName"] == "fc4d8e41-e223-45ea-9bf5-eada37891d87"
    assert info["policyAssignmentId"].endswith("/policyAssignments/require-eah")


def test_policy_without_body_match_denies_writes_not_reads(fake):
    fake.state.add_fault({"code": "policy", "match": {"operation": "nic.create"}})
    with pytest.raises(HttpResponseError) as ei:
        create_nic(fake, "n1")
    assert ei.value.status_code == 403 and ei.value.error.code == "RequestDisallowedByPolicy"
    # a GET is never a policy's business
    r = fake.http.get(fake.url(f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/"
                               f"networkInterfaces/n1", **{"api-version": "2023-09-01"}))
    assert r.status_code == 404


def test_body_conditions():
    body = {"properties": {"securityProfile": {"encryptionAtHost": True}, "priority": "Spot",
                           "networkProfile": {"networkInterfaces": [{"id": "a/nic1"}, {"id": "a/nic2"}]}}}
    assert body_matches(body, {"properties.priority": "spot"})                    # case-insensitive, as Policy
    assert body_matches(body, {"properties.priority": ["Regular", "Spot"]})       # a list is `in`
    assert body_matches(body, {"Properties.SecurityProfile.EncryptionAtHost": "true"})
    assert not body_matches(body, {ENCRYPTION: {"notEquals": "true"}})
    assert body_matches(body, {"properties.billingProfile": {"exists": False}})
    assert body_matches(body, {"properties.networkProfile.networkInterfaces[*].id": {"like": "a/*"}})
    assert not body_matches(body, {"properties.networkProfile.networkInterfaces[*].id": {"like": "*1"}})  # every element
    assert body_matches(body, {"properties.networkProfile.networkInterfaces[1].id": "a/nic2"})
    assert body_matches(body, {"properties.priority": {"notIn": ["Regular"]}})
    assert not body_matches(None, {"properties.priority": "Spot"})
    assert body_condition({}, ENCRYPTION, {"notEquals": True}) == (True, [None])
    [expr] = evaluated_expressions(body, {"properties.priority": {"in": ["Spot"]}})
    assert expr["expressionValue"] == "Spot" and expr["operator"] == "In"


@pytest.mark.parametrize("bad,why", [
    ({"body": "x"}, "expected {<path in the request body>"),
    ({"body": {"Microsoft.Compute/virtualMachines/securityProfile.encryptionAtHost": True}}, "not a policy alias"),
    ({"body": {"a..b": 1}}, "bad segment"),
    ({"body": {"a": {"greater": 1}}}, "one of equals"),
    ({"body": {"a": {"in": "x"}}}, "expects a list"),
])
def test_bad_body_conditions_are_refused(bad, why):
    with pytest.raises(ValueError, match=why.replace("{", r"\{").replace("[", r"\[")):
        make_fault({"code": "RequestDisallowedByPolicy", "match": bad})
    with pytest.raises(ValueError, match="unknown policy keys"):
        make_fault({"code": "RequestDisallowedByPolicy", "policy": {"name": "x"}})
