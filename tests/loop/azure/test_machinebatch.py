"""harness/loop/azure/machinebatch.py: the header batch's key, template, header and per-machine answers, as the
provider's aksmachinesheaderbatch builds and reads them (v1.14.0 batchkey.go, header.go, apiresponseutils.go)."""
from __future__ import annotations

import json

import pytest

from harness.loop.azure.machinebatch import (BatchAnswerError, batch_header, batch_key, per_machine_errors,
                                             shared_template)


def body(zone="1", tags=None, size="Standard_D2s_v3", ultra=False):
    return {"zones": [zone], "properties": {"hardware": {"vmSize": size, "ultraSsdEnabled": ultra},
                                           "mode": "User", "tags": tags or {"karpenter.sh_nodepool": "default"}}}


def test_machines_differing_in_tags_and_zones_share_a_batch_unless_ultra_ssd():
    assert batch_key(body("1", {"a": "1"})) == batch_key(body("2", {"a": "2"}))
    assert batch_key(body(size="Standard_D4s_v3")) != batch_key(body())
    assert batch_key(body("1", ultra=True)) != batch_key(body("2", ultra=True))
    assert shared_template(body()) == {"properties": {"hardware": {"vmSize": "Standard_D2s_v3", "ultraSsdEnabled": False},
                                                      "mode": "User"}}


def test_the_header_names_each_machine_with_its_zones_and_tags():
    header = json.loads(batch_header([("m1", body("1", {"b": "2", "a": "1"})), ("m2", body("3"))]))
    assert header == {"batchMachines": [{"machineName": "m1", "zones": ["1"], "tags": {"a": "1", "b": "2"}},
                                        {"machineName": "m2", "zones": ["3"],
                                         "tags": {"karpenter.sh_nodepool": "default"}}]}


def test_a_batch_client_error_fails_only_its_machines():
    err = {"code": "BatchMachineClientError", "message": "batch client error",
           "details": [{"code": "VMSizeNotSupported", "message": "no", "target": "m2"}]}
    assert per_machine_errors(err, ["m1", "m2"]) == {"m1": None, "m2": ("VMSizeNotSupported", "no")}
    server = {"error": {"code": "BatchMachineInternalServerError", "message": json.dumps(
        {"details": [{"code": "InternalError", "message": "x", "target": "m1"}]})}}
    assert per_machine_errors(server, ["m1", "m2"]) == {"m1": ("InternalError", "x"), "m2": None}


def test_another_error_is_every_machines():
    assert per_machine_errors({"code": "Throttled", "message": "slow"}, ["m1", "m2"]) == \
        {"m1": ("Throttled", "slow"), "m2": ("Throttled", "slow")}


@pytest.mark.parametrize("details", [[], [{"code": "X", "message": "y"}], [{"code": "X", "target": "other"}]])
def test_a_batch_error_breaking_the_contract_fails_the_whole_batch(details):
    with pytest.raises(BatchAnswerError):
        per_machine_errors({"code": "BatchMachineClientError", "message": "m", "details": details}, ["m1"])
