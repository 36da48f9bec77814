"""Partial matching of a scenario's `expect` block against a RunResult.

Maps are subsets (say only what you care about); lists of requirements, taints, offerings and
VMs match by natural key, order-insensitive; absence is first-class (`labelsAbsent`, counts of 0).
Each mismatch names the expectation's path, the expected and actual values, and where the actual
value came from (the label writer, the rejection stage), so a failure reads without a debugger.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fakeazure.faults import body_condition, body_matches
from harness.loop.result import NodeResult, RunResult
from harness.model.values.durations import scenario_duration
from harness.model.crd.validation import ADMISSION
from harness.scenario.expect.fold import fold_counts


# `pending` is "not bound" (harness/data/scenario.schema.json): a pod Karpenter ignores is not bound either, so it
# is pending too; `ignored` says which of the two
PENDING_STATES = ("pending", "ignored")


def in_state(p, state: str) -> bool:
    """Whether pod result `p` is in the expectation's `state` (scheduled, pending, ignored, rejected, succeeded)."""
    return p.state in PENDING_STATES if state == "pending" else p.state == state


@dataclass
class Mismatch:
    path: str
    expected: object
    actual: object
    detail: str = ""
    line: int | None = None

    def render(self) -> str:
        text = f"{self.path}: expected {_fmt(self.expected)}, got {_fmt(self.actual)}"
        if self.detail:
            text += f" ({self.detail})"
        return text


def _fmt(v) -> str:
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (list, tuple, set, frozenset)):
        return "[" + ", ".join(_fmt(x) for x in (sorted(v) if isinstance(v, (set, frozenset)) else v)) + "]"
    if v is None:
        return "nothing"
    return str(v)


def _s(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _text_matches(spec: dict, text: str | None, extra: list[str] = ()) -> str | None:
    """Check message/messageRegex/messageContains (or reason*) against a text; None when it matches.
    `message` equals the full text or one of `extra` (a rejection's individual causes)."""
    candidates = [t for t in [text, *extra] if t is not None]
    for key in ("message", "reason"):
        if key in spec:
            if spec[key] not in candidates:
                return key
    for key in ("messageRegex", "reasonRegex"):
        if key in spec and not (text is not None and re.search(spec[key], text)):
            return key
    for key in ("messageContains", "reasonContains"):
        if key in spec and not any(spec[key] in c for c in candidates):
            return key
    return None


class Checker:
    def __init__(self, result: RunResult, scenario=None, root: str = "expect", profile: str | None = None,
                 explored: list[RunResult] | None = None):
        self.r = result
        self.scenario = scenario
        self.root = root
        self.profile = profile
        # the runs of the scenario under every explored seed at this check point (harness/judge/explore.py);
        # `outcomes` is judged over them. None: this run alone is the set
        self.explored = explored
        self.nodes_root = f"{root}.nodes"
        self.out: list[Mismatch] = []
        self._pods_index = None

    def pods_of(self, name: str) -> list:
        """RunResult.pods_of, indexed once per check point (the result does not change while it is judged)."""
        if self._pods_index is None:
            self._pods_index = self.r.pods_index()
        return self._pods_index(name)

    def fail(self, path: str, expected, actual, detail: str = "") -> None:
        line = None
        if self.scenario is not None:
            parts = tuple(int(p) if p.isdigit() else p for p in re.findall(r'[^.\[\]"]+', path))
            line = self.source_line(parts)
        self.out.append(Mismatch(path, expected, actual, detail, line))

    def source_line(self, parts: tuple) -> int:
        """The line that set the failed expectation: `expectByProfile.<profile>` where the override
        reaches at least as deep into the path as `expect` does (the override is merged over it)."""
        doc = self.scenario.doc
        root = tuple(int(p) if p.isdigit() else p for p in re.findall(r'[^.\[\]"]+', self.root))
        rest = parts[len(root):]
        if self.profile is None or not root or root[-1] != "expect":
            return doc.line(parts)
        override = root[:-1] + ("expectByProfile", self.profile)

        def depth(prefix: tuple) -> int:
            return max((n for n in range(1, len(rest) + 1) if prefix + rest[:n] in doc.lines), default=0)
        base_depth, override_depth = depth(root), depth(override)
        if override_depth and override_depth >= base_depth:
            return doc.lines[override + rest[:override_depth]]
        return doc.line(parts)

    # -- requirements -------------------------------------------------------------------------
    def requirement(self, path: str, want, have) -> None:
        """`want` is a list (In values), "Exists"/"DoesNotExist", or {operator, values, ...}."""
        if have is None:
            self.fail(path, want, None, "key not in the requirements")
            return
        if isinstance(want, list):
            want = {"operator": "In", "values": want}
        elif isinstance(want, str):
            want = {"operator": want}
        op = have.operator
        values = sorted(have.values)
        if "operator" in want and want["operator"] != op:
            self.fail(f"{path}.operator", want["operator"], op, f"requirement is {have}")
        if "values" in want and sorted(_s(v) for v in want["values"]) != values:
            self.fail(f"{path}.values", sorted(_s(v) for v in want["values"]), values, f"requirement is {have}")
        for v in want.get("valuesInclude") or []:
            if _s(v) not in have.values:
                self.fail(f"{path}.valuesInclude", _s(v), values, f"requirement is {have}")
        for v in want.get("valuesExclude") or []:
            if _s(v) in have.values:
                self.fail(f"{path}.valuesExclude", _s(v), values, f"requirement is {have}")
        if "minValues" in want and want["minValues"] != have.min_values:
            self.fail(f"{path}.minValues", want["minValues"], have.min_values)

    def instance_types(self, spec: dict) -> None:
        for name, want in spec.items():
            path = f'{self.root}.instanceTypes["{name}"]'
            it = self.r.instance_types.get(name)
            if isinstance(want, bool):
                want = {"present": want}
            if "present" in want and want["present"] != (it is not None):
                why = self.r.dropped_skus.get(name)
                self.fail(f"{path}.present", want["present"], it is not None,
                          f"dropped: {why}" if why else ("" if it else "not in the catalog's SKU list"))
            if "dropped" in want:
                why = self.r.dropped_skus.get(name)
                if want["dropped"] is True and why is None or want["dropped"] is False and why is not None:
                    self.fail(f"{path}.dropped", want["dropped"], why)
                elif isinstance(want["dropped"], str) and (why is None or want["dropped"] not in why):
                    self.fail(f"{path}.dropped", want["dropped"], why)
            if it is None:
                if any(k in want for k in ("requirements", "requirementsAbsent", "offerings", "offeringsExactly",
                                           "capacity", "allocatable")):
                    self.fail(path, "an instance type", None, f"dropped: {self.r.dropped_skus.get(name, 'not listed')}")
                continue
            for key, rwant in (want.get("requirements") or {}).items():
                self.requirement(f'{path}.requirements["{key}"]', rwant, it.requirements[key] if key in it.requirements else None)
            for key in want.get("requirementsAbsent") or []:
                if key in it.requirements:
                    self.fail(f"{path}.requirementsAbsent", f"no {key}", str(it.requirements[key]))
            offers = [{"zone": o.zone, "capacityType": o.capacity_type, "available": o.available, "price": o.price}
                      for o in it.offerings]
            for i, ow in enumerate(want.get("offerings") or []):
                if not any(all(_s(o.get(k)) == _s(v) if k != "price" else abs(o[k] - v) < 1e-9 for k, v in ow.items())
                           for o in offers):
                    self.fail(f"{path}.offerings[{i}]", ow, [f"{o['zone']}/{o['capacityType']}"
                                                            f"{'' if o['available'] else ' (unavailable)'}" for o in offers])
            if want.get("offeringsExactly") and len(offers) != len(want.get("offerings") or []):
                self.fail(f"{path}.offerings", f"exactly {len(want.get('offerings') or [])}", len(offers))
            for kind in ("capacity", "allocatable"):
                have = it.capacity if kind == "capacity" else it.allocatable()
                from harness.model.values.resources import parse_resource
                for res, q in (want.get(kind) or {}).items():
                    if parse_resource(res, q) != have.get(res):
                        from harness.model.values.resources import format_resource
                        self.fail(f"{path}.{kind}.{res}", str(q), format_resource(res, have.get(res, 0)))

    # -- nodepools and pods ---------------------------------------------------------------------
    def nodepools(self, spec: dict) -> None:
        for name, want in spec.items():
            path = f'{self.root}.nodePools["{name}"]'
            np = self.r.nodepools.get(name)
            if np is None:
                self.fail(path, want, None, "no such NodePool was applied")
                continue
            if isinstance(want, str):
                want = {"accepted": True} if want == "accepted" else {"rejected": True}
            where = f"rejected at {np.stage}: {np.message}" if np.rejected else "accepted"
            if "accepted" in want and want["accepted"] != (not np.rejected):
                self.fail(f"{path}.accepted", want["accepted"], not np.rejected, where)
            if "ready" in want and want["ready"] != np.ready:
                self.fail(f"{path}.ready", want["ready"], np.ready, where)
            rej = want.get("rejected")
            if isinstance(rej, bool):
                if rej != np.rejected:
                    self.fail(f"{path}.rejected", rej, np.rejected, where)
            elif rej is not None and not np.rejected:
                self.fail(f"{path}.rejected", rej, "accepted")
            elif rej is not None:
                if "stage" in rej and rej["stage"] != np.stage:
                    self.fail(f"{path}.rejected.stage", rej["stage"], np.stage, np.message or "")
                bad = _text_matches(rej, np.message, np.causes)
                if bad:
                    self.fail(f"{path}.rejected.{bad}", rej[bad], np.message,
                              f"stage {np.stage}" + (f"; causes: {np.causes}" if np.causes else ""))
            for i, ev in enumerate(want.get("events") or []):
                text = {k: v for k, v in ev.items() if k != "reason"}     # `reason` is the event's reason
                if not any(_text_matches(text, e.get("message")) is None and ev.get("reason", e["reason"]) == e["reason"]
                           for e in np.events):
                    self.fail(f"{path}.events[{i}]", ev, np.events)

    def nodeclasses(self, spec: dict) -> None:
        """AKSNodeClass admission: accepted or refused (message or a cause), pruned fields, stored spec."""
        for name, want in spec.items():
            path = f'{self.root}.nodeClasses["{name}"]'
            nc = self.r.nodeclasses.get(name)
            if nc is None:
                self.fail(path, want, None, "no such AKSNodeClass was applied")
                continue
            if isinstance(want, str):
                want = {"accepted": want == "accepted"}
            where = f"rejected: {nc.message}" if not nc.accepted else "accepted"
            if "accepted" in want and want["accepted"] != nc.accepted:
                self.fail(f"{path}.accepted", want["accepted"], nc.accepted, where)
            rej = want.get("rejected")
            if isinstance(rej, bool) and rej == nc.accepted:
                self.fail(f"{path}.rejected", rej, not nc.accepted, where)
            elif isinstance(rej, dict):
                if nc.accepted:
                    self.fail(f"{path}.rejected", rej, "accepted")
                else:
                    bad = _text_matches(rej, nc.message, nc.causes)
                    if bad:
                        self.fail(f"{path}.rejected.{bad}", rej[bad], nc.message, f"causes: {nc.causes}")
            if "pruned" in want and sorted(want["pruned"]) != sorted(nc.pruned):
                self.fail(f"{path}.pruned", want["pruned"], nc.pruned)
            stored = _flatten(nc.spec, "")
            for key, value in _flatten(want.get("spec") or {}, "").items():
                have = stored.get(key)
                if have != value:
                    self.fail(f"{path}.spec{key}", value, have, "the stored spec (after pruning and defaulting)")

    def unexpected_refusals(self, nodeclasses: dict, nodepools: dict) -> None:
        """An AKSNodeClass or NodePool the API server refused is an input error unless the scenario expects
        it: otherwise its pods silently find no NodePool and just stay pending, and the run would pass.
        (A NodePool core's RuntimeValidate refuses is stored, and says so on its Ready condition: not this.)"""
        for name, nc in self.r.nodeclasses.items():
            if not nc.accepted and name not in nodeclasses:
                self.fail(f'{self.root}.nodeClasses["{name}"]', "accepted (not mentioned)", "refused",
                          f"{nc.message}; fix the AKSNodeClass, or expect the refusal with "
                          f"nodeClasses.{name}.rejected")
        for name, np in self.r.nodepools.items():
            if np.rejected and np.stage == ADMISSION and name not in nodepools:
                self.fail(f'{self.root}.nodePools["{name}"]', "accepted (not mentioned)", "refused at admission",
                          f"{np.message}; fix the NodePool, or expect the refusal with nodePools.{name}.rejected")

    def pods(self, spec: dict) -> None:
        """`pods.<name>`: the pod of that name or the pods its Deployment, StatefulSet or DaemonSet owns. With
        `count`, the state that is `true` (if one is) selects which pods are counted, and every
        other key is checked on each of them; `count: 0` is the one way to say there are none."""
        for name, want in spec.items():
            path = f'{self.root}.pods["{name}"]'
            pods = self.pods_of(name)
            if isinstance(want, str):
                want = {want: True}
            if "failedCreate" in want:
                self.failed_create(f"{path}.failedCreate", name, want["failedCreate"])
            if not pods and want.get("count") != 0:
                there = sorted({p.owner_name or p.name for p in self.r.pods.values()})
                self.fail(path, want, None, "no pod, Deployment, StatefulSet or DaemonSet by that name; there are: "
                          + (", ".join(there[:20]) + (", ..." if len(there) > 20 else "") if there else "none"))
                continue
            if "count" in want:
                state = next((s for s in ("scheduled", "pending", "ignored", "rejected", "succeeded") if want.get(s) is True), None)
                counted = [p for p in pods if state is None or in_state(p, state)]
                if len(counted) != want["count"]:
                    self.fail(f"{path}.count", want["count"], len(counted),
                              f"{state or 'all'} pods of {len(pods)}: " +
                              ", ".join(f"{p.name} {p.state}" for p in pods))
                    continue
                pods = counted
            for p in pods:
                label = path if len(pods) == 1 else f"{path} (pod {p.name})"
                for s in ("scheduled", "pending", "ignored", "rejected", "succeeded"):
                    if s in want and want[s] != in_state(p, s):
                        self.fail(f"{label}.{s}", want[s], in_state(p, s),
                                  f"pod is {p.state}" + (f": {p.reason}" if p.reason else "") +
                                  (f" on {p.node}" if p.node else ""))
                if "node" in want:
                    idx = next((n.index for n in self.r.nodes if n.name == p.node), None)
                    if idx != want["node"]:
                        self.fail(f"{label}.node", want["node"], idx, f"bound to {p.node}" if p.node else "not bound")
                bad = _text_matches(want, p.reason, [p.karpenter_error or "", p.scheduler_error or ""])
                if bad:
                    self.fail(f"{label}.{bad}", want[bad], p.reason,
                              f"events: {p.events}" if p.events else f"kube-scheduler: {p.scheduler_error}")
            self.pod_placement(path, pods, want)

    def failed_create(self, path: str, name: str, want) -> None:
        """`pods.<name>.failedCreate`: the workload's controller recorded FailedCreate (the API server refused its
        pods; RunResult.failed_creates), with a message matching `message`/`messageRegex`/`messageContains`;
        `false`: it recorded none."""
        mine = [f for f in self.r.failed_creates()
                if name in (f["workload"].split("/", 1)[1], f"{f['namespace']}/{f['workload'].split('/', 1)[1]}")]
        texts = [f["message"] for f in mine]
        if want is False:
            if mine:
                self.fail(path, False, texts, "its controller could not create pods")
            return
        spec = want if isinstance(want, dict) else {}
        if not texts:
            _text_matches(spec, None)          # (what it names is read either way)
        if not any(_text_matches(spec, t) is None for t in texts):
            self.fail(path, want, texts or None,
                      "no FailedCreate on its controller" if not texts else "no FailedCreate with that message")

    def pod_placement(self, path: str, pods: list, want: dict) -> None:
        """Where pods are relative to each other (core's tests compare node names):
        `sameNodeAs` / `notSameNodeAs` another pod (or Deployment: each of its pods), `nodeCount`
        the distinct nodes the pods are bound to, `noEvents` no Karpenter FailedScheduling event."""
        bound = [p.node for p in pods if p.node]
        for key, same in (("sameNodeAs", True), ("notSameNodeAs", False)):
            if key not in want:
                continue
            others = want[key] if isinstance(want[key], list) else [want[key]]
            for other in others:
                theirs = [p for p in self.pods_of(other)]
                if not theirs:
                    self.fail(f"{path}.{key}", other, None, "no pod or Deployment by that name")
                    continue
                nodes = {p.node for p in theirs}
                for p in pods:
                    if same and (p.node is None or nodes != {p.node}):
                        self.fail(f"{path}.{key}", f"{other} on {p.node or 'no node'}", sorted(n or "no node" for n in nodes),
                                  f"pod {p.name} is on {p.node or 'no node'}")
                    elif not same and (p.node is None or p.node in nodes):
                        self.fail(f"{path}.{key}", f"not on {p.node or 'no node'}", sorted(n or "no node" for n in nodes),
                                  f"pod {p.name} is on {p.node or 'no node'}")
        if "nodeCount" in want and len(set(bound)) != want["nodeCount"]:
            self.fail(f"{path}.nodeCount", want["nodeCount"], len(set(bound)), ", ".join(sorted(set(bound))))
        if want.get("noEvents") and any(p.events for p in pods):
            self.fail(f"{path}.noEvents", "no FailedScheduling event", [e for p in pods for e in p.events])

    # -- nodes ------------------------------------------------------------------------------------
    NODE_SELECTORS = ("pod", "nodePool", "index")

    def _select(self, want: dict, i: int) -> list[NodeResult]:
        """The nodes an entry of `nodes` is about: every selector it gives (`pod`, `nodePool`,
        `index`) must hold (they are ANDed); an entry with none is the i-th node in launch order."""
        by_index = "index" in want or not any(k in want for k in self.NODE_SELECTORS)
        if by_index and "pod" not in want:      # the one node at the index (a dump's thousands of entries)
            idx = want.get("index", i)
            nodes = [self.r.nodes[idx]] if idx < len(self.r.nodes) else []
            return [n for n in nodes if n.nodepool == want["nodePool"]] if "nodePool" in want else nodes
        nodes = list(self.r.nodes)
        if "pod" in want:
            pods = self.pods_of(want["pod"])
            names = {p.node for p in pods if p.node}
            nodes = [n for n in self.r.nodes if n.name in names]
            if not nodes:   # not bound: the node launched for it
                claims = {c for p in pods for c in p.nodeclaims}
                nodes = [n for n in self.r.nodes if n.nodeclaim in claims]
        if "nodePool" in want:
            nodes = [n for n in nodes if n.nodepool == want["nodePool"]]
        if by_index:
            idx = want.get("index", i)
            at = self.r.nodes[idx] if idx < len(self.r.nodes) else None
            nodes = [n for n in nodes if n is at]
        return nodes

    def _nodes_there(self, want: dict) -> str:
        """What there is, for a selector that matched nothing: every node, and where the pod went."""
        text = "; ".join(f"[{j}] {n.name} (nodePool {n.nodepool}, {n.instance_type}"
                         + (f", pods {', '.join(n.pods)}" if n.pods else "") + ")"
                         for j, n in enumerate(self.r.nodes))
        if "pod" in want:
            pods = self.pods_of(want["pod"])
            where = ", ".join(f"{p.name} {p.state}" + (f" on {p.node}" if p.node else "")
                              + (f" (NodeClaims {', '.join(p.nodeclaims)})" if p.nodeclaims else "") for p in pods)
            text += f"; pod {want['pod']}: {where or 'no such pod'}"
        return text

    def node(self, want: dict, i: int) -> None:
        path = f"{self.nodes_root}[{i}]"
        nodes = self._select(want, i)
        sel = {k: want[k] for k in self.NODE_SELECTORS if k in want} or {"index": i}
        if "count" in want and len(nodes) != want["count"]:
            self.fail(f"{path}.count", want["count"], len(nodes),
                      f"nodes matching {sel}; {len(self.r.nodes)} node(s): {self._nodes_there(want)}")
            return
        if not nodes:
            if want.get("count") == 0:
                return
            self.fail(path, f"a node matching {sel}", f"{len(self.r.nodes)} node(s)", self._nodes_there(want))
            return
        for n in nodes:
            p = path if len(nodes) == 1 else f"{path} (node {n.name})"
            for key in ("instanceType", "zone", "capacityType"):
                attr = {"instanceType": n.instance_type, "zone": n.zone, "capacityType": n.capacity_type}[key]
                if key in want and _s(want[key]) != attr:
                    self.fail(f"{p}.{key}", _s(want[key]), attr)
            if "deleted" in want and want["deleted"] != (n.deleted is not None):
                self.fail(f"{p}.deleted", want["deleted"], n.deleted or False)
            if "deleting" in want and want["deleting"] != n.deleting:
                self.fail(f"{p}.deleting", want["deleting"], n.deleting, f"deleted: {n.deleted}" if n.deleted else "")
            self.nodeclaim_conditions(p, n, want)
            if "drifted" in want and want["drifted"] != (n.drifted is not None):
                self.fail(f"{p}.drifted", want["drifted"], n.drifted or False,
                          f"deleted: {n.deleted}" if n.deleted else "")
            for key in ("registered", "initialized"):
                if key in want and want[key] != getattr(n, key):
                    self.fail(f"{p}.{key}", want[key], getattr(n, key),
                              n.kubelet_refused or n.node_restriction_denied or "")
            for key, lw in (want.get("labels") or {}).items():
                self.label(f'{p}.labels["{key}"]', n, key, lw)
            for key in want.get("labelsAbsent") or []:
                if key in n.labels:
                    self.fail(f'{p}.labelsAbsent["{key}"]', "absent", n.labels[key],
                              f"written by {', '.join(n.writers(key)) or 'unknown'}")
            for key, v in (want.get("kubeletNodeLabels") or {}).items():
                if n.kubelet_node_labels.get(key) != _s(v):
                    why = (f"not sent to AKS: {n.not_sent_to_aks[key]}" if key in n.not_sent_to_aks
                           else "dropped by the provider's kubelet filter" if key in n.kubelet_dropped else "")
                    self.fail(f'{p}.kubeletNodeLabels["{key}"]', _s(v), n.kubelet_node_labels.get(key), why)
            for key in want.get("kubeletNodeLabelsAbsent") or []:
                if key in n.kubelet_node_labels:
                    self.fail(f'{p}.kubeletNodeLabelsAbsent["{key}"]', "absent", n.kubelet_node_labels[key])
            if "kubeletRefused" in want:
                kr = want["kubeletRefused"]
                if isinstance(kr, bool):
                    if kr != (n.kubelet_refused is not None):
                        self.fail(f"{p}.kubeletRefused", kr, n.kubelet_refused)
                else:
                    bad = _text_matches(kr, n.kubelet_refused)
                    if bad:
                        self.fail(f"{p}.kubeletRefused.{bad}", kr[bad], n.kubelet_refused)
            if "nodeRestrictionDenied" in want:
                nr = want["nodeRestrictionDenied"]
                got = n.node_restriction_denied
                if isinstance(nr, bool):
                    if nr != (got is not None):
                        self.fail(f"{p}.nodeRestrictionDenied", nr, got)
                else:
                    for key in nr:
                        if not got or key not in got:
                            self.fail(f"{p}.nodeRestrictionDenied", key, got)
            for j, t in enumerate(want.get("taints") or []):
                if not any(t["key"] == h["key"] and t.get("effect", h.get("effect")) == h.get("effect") and
                           t.get("value", h.get("value", "")) == h.get("value", "") for h in n.taints):
                    self.fail(f"{p}.taints[{j}]", t, n.taints)
            for key in want.get("taintsAbsent") or []:
                if any(h["key"] == key for h in n.taints):
                    self.fail(f"{p}.taintsAbsent", key, n.taints)
            for key, v in (want.get("nodeClaimLabels") or {}).items():
                if n.nodeclaim_labels.get(key) != _s(v):
                    self.fail(f'{p}.nodeClaimLabels["{key}"]', _s(v), n.nodeclaim_labels.get(key))
            self.nodeclaim_requests(p, n, want)
            if want.get("nodeClaimRequirements"):
                from harness.model.labels.requirements import Requirements
                from harness.model.labels.semantics import semantics_for
                reqs = Requirements.from_node_selector_terms(n.nodeclaim_requirements, semantics_for(self.r.profile))
                for key, rw in want["nodeClaimRequirements"].items():
                    self.requirement(f'{p}.nodeClaimRequirements["{key}"]', rw, reqs[key] if key in reqs else None)

    def nodeclaim_conditions(self, path: str, n: NodeResult, want: dict) -> None:
        """`nodeClaimConditions`: each named termination condition of the node's NodeClaim has that status
        (as the NodeClaim last had it: a deleted one's too); `nodeClaimConditionsAbsent`: it has none of these."""
        have = n.nodeclaim_conditions
        for key, status in (want.get("nodeClaimConditions") or {}).items():
            if have.get(key) != status:
                self.fail(f'{path}.nodeClaimConditions["{key}"]', status, have.get(key),
                          f"conditions: {have}" if have else "no termination condition")
        for key in want.get("nodeClaimConditionsAbsent") or []:
            if key in have:
                self.fail(f'{path}.nodeClaimConditionsAbsent["{key}"]', "absent", have[key])

    def nodeclaim_requests(self, path: str, n: NodeResult, want: dict) -> None:
        """`nodeClaimRequests`: the NodeClaim's spec.resources.requests (the pods' sum plus daemon
        overhead), each given resource equal; `nodeClaimRequestsExactly` also allows no other."""
        from harness.model.values.resources import parse_resource
        have = n.nodeclaim_requests
        for key in ("nodeClaimRequests", "nodeClaimRequestsExactly"):
            spec = want.get(key)
            if spec is None:
                continue
            for res, q in spec.items():
                got = have.get(res)
                if got is None or parse_resource(res, got) != parse_resource(res, q):
                    self.fail(f'{path}.{key}["{res}"]', str(q), got, f"requests: {have}")
            if key == "nodeClaimRequestsExactly" and set(have) - set(spec):
                self.fail(f"{path}.{key}", sorted(spec), sorted(have), f"requests: {have}")

    def label(self, path: str, n: NodeResult, key: str, want) -> None:
        have = n.labels.get(key)
        writes = n.provenance.get(key, [])
        trail = ", ".join(f"{w.writer}={w.value!r}{'' if w.accepted else ' (refused)'}" for w in writes)
        detail = f"writer: {n.writer(key)}" if have is not None else "never written"
        if trail:
            detail += f"; writes: {trail}"
        if key in n.not_sent_to_aks:
            detail += f"; not sent to AKS by the provider: {n.not_sent_to_aks[key]}"
        elif key in n.kubelet_dropped:
            detail += "; dropped from --node-labels by the provider's kubelet filter"
        if not isinstance(want, dict):
            want = {"value": want}
        if "value" in want and have != _s(want["value"]):
            self.fail(path, _s(want["value"]), have, detail)
        if "notValue" in want and have == _s(want["notValue"]):
            self.fail(f"{path}.notValue", f"not {_s(want['notValue'])}", have, detail)
        if "valueRegex" in want and (have is None or not re.fullmatch(want["valueRegex"], have)):
            self.fail(f"{path}.valueRegex", want["valueRegex"], have, detail)
        if "writer" in want and n.writer(key) != want["writer"]:
            self.fail(f"{path}.writer", want["writer"], n.writer(key), detail)
        owners = n.field_owners        # kind: the real Node's managedFields
        if "writer" in want and owners is not None and have is not None:
            real = owners.get(key)
            # managedFields name whoever last changed the value; a later writer of the same value
            # (an update that changes nothing takes nothing over) still counts as its writer
            run = n.current_writers(key)
            if real != want["writer"] and not (real in run and want["writer"] in run):
                self.fail(f"{path}.writer", want["writer"], real, f"managedFields owner: {real}; {detail}")
        if "writers" in want and not set(want["writers"]) <= set(n.writers(key)):
            self.fail(f"{path}.writers", want["writers"], n.writers(key), detail)
        if "writersExactly" in want and sorted(want["writersExactly"]) != n.writers(key):
            self.fail(f"{path}.writersExactly", sorted(want["writersExactly"]), n.writers(key), detail)

    # -- azure, loop -----------------------------------------------------------------------------
    @staticmethod
    def _vm_view(vm: dict) -> dict:
        """A VM as expectations name it: size, zone (the ARM zone number, "" when regional),
        priority (Regular/Spot) and nodePool (the karpenter.sh_nodepool tag)."""
        zones = vm.get("zones") or []
        return {"name": vm.get("name"), "size": vm.get("size"), "zone": zones[0] if zones else "",
                "priority": vm.get("priority"), "nodePool": (vm.get("tags") or {}).get("karpenter.sh_nodepool")}

    def azure(self, spec: dict) -> None:
        vms = [self._vm_view(v) for v in self.r.azure.get("vms") or []]
        path = f"{self.root}.azure"
        if "vmCount" in spec and spec["vmCount"] != len(vms):
            self.fail(f"{path}.vmCount", spec["vmCount"], len(vms), ", ".join(v.get("name", "?") for v in vms))
        if "nicCount" in spec and spec["nicCount"] != len(self.r.azure.get("nics") or []):
            self.fail(f"{path}.nicCount", spec["nicCount"], len(self.r.azure.get("nics") or []))
        for i, want in enumerate(spec.get("vms") or []):
            matches = [v for v in vms if all(_s(want[k]) == _s(v.get(k)) for k in ("size", "zone", "priority", "nodePool") if k in want)]
            n = want.get("count")
            if (n is None and not matches) or (n is not None and len(matches) != n):
                self.fail(f"{path}.vms[{i}]", want, [{k: v.get(k) for k in ("size", "zone", "priority", "nodePool")}
                                                     for v in vms], f"{len(matches)} match")
        for i, want in enumerate(spec.get("unavailableOfferings") or []):
            if not any(all(_s(v) == _s(u.get(k)) for k, v in want.items() if k != "ttl") and
                       ("ttl" not in want or abs(scenario_duration(want["ttl"]) - u["ttl"]) < 1e-6)
                       for u in self.r.unavailable_offerings):
                self.fail(f"{path}.unavailableOfferings[{i}]", want, self.r.unavailable_offerings)
        if "unavailableOfferingCount" in spec and spec["unavailableOfferingCount"] != len(self.r.unavailable_offerings):
            self.fail(f"{path}.unavailableOfferingCount", spec["unavailableOfferingCount"],
                      len(self.r.unavailable_offerings), str([u["key"] for u in self.r.unavailable_offerings]))
        reqs = self.r.azure.get("request_log") or []
        for i, want in enumerate(spec.get("requests") or []):
            hits = [q for q in reqs if (want.get("method") in (None, q.get("method"))) and
                    ("status" not in want or want["status"] == q.get("status")) and
                    ("operation" not in want or want["operation"] == q.get("operation")) and
                    ("path" not in want or want["path"] == q.get("path")) and
                    ("pathRegex" not in want or re.search(want["pathRegex"], q.get("path", ""))) and
                    ("body" not in want or body_matches(q.get("body"), want["body"]))]
            if ("count" in want and len(hits) != want["count"]) or ("count" not in want and not hits):
                seen = sorted({f"{q.get('method')} {q.get('path')} {q.get('status')}" for q in reqs})
                detail = f"{len(reqs)} request(s): " + "; ".join(seen[:12]) + ("; ..." if len(seen) > 12 else "")
                if "body" in want:          # what the requests otherwise matching sent at those paths
                    near = [q for q in reqs if q.get("body") is not None and
                            (want.get("method") in (None, q.get("method"))) and
                            ("operation" not in want or want["operation"] == q.get("operation"))]
                    sent = sorted({f"{p}={body_condition(q['body'], p, c)[1]}" for q in near for p, c in want["body"].items()})
                    detail += "; bodies sent: " + ("; ".join(sent[:8]) if sent else "none")
                self.fail(f"{path}.requests[{i}]", want, f"{len(hits)} matching request(s)", detail)

    def nodeclaims(self, spec: dict) -> None:
        path = f"{self.root}.nodeClaims"
        launched = sum(1 for c in self.r.nodeclaims if c.launched)
        summary = "; ".join(f"{c.name}: " + ("launched" if c.launched else (c.rejected or (c.failure or {}).get("message") or "not launched"))
                            + (f" after {len(c.failures)} failed attempt(s)" if c.launched and c.failures else "")
                            for c in self.r.nodeclaims)
        if "launched" in spec and spec["launched"] != launched:
            self.fail(f"{path}.launched", spec["launched"], launched, summary)
        if "minLaunched" in spec and launched < spec["minLaunched"]:
            self.fail(f"{path}.minLaunched", spec["minLaunched"], launched, summary)
        if "maxLaunched" in spec and launched > spec["maxLaunched"]:
            self.fail(f"{path}.maxLaunched", spec["maxLaunched"], launched, summary)
        failed = [c for c in self.r.nodeclaims if c.failures or c.rejected]
        if "failed" in spec and spec["failed"] != len(failed):
            self.fail(f"{path}.failed", spec["failed"], len(failed), summary)
        reasons = [f.get("reason") for c in self.r.nodeclaims for f in c.failures]
        for r in spec.get("reasons") or []:
            if r not in reasons:
                self.fail(f"{path}.reasons", r, reasons)

    def loop(self, spec: dict) -> None:
        path = f"{self.root}.loop"
        launched = sum(1 for c in self.r.nodeclaims if c.launched)
        for key, have in (("runaway", self.r.runaway), ("steady", self.r.steady), ("iterations", self.r.iterations),
                          ("nodeClaimsLaunched", launched)):
            if key in spec and spec[key] != have:
                self.fail(f"{path}.{key}", spec[key], have, self.r.runaway_reason or "")
        if "maxIterations" in spec and self.r.iterations > spec["maxIterations"]:
            self.fail(f"{path}.maxIterations", spec["maxIterations"], self.r.iterations)

    def run(self, expect: dict) -> list[Mismatch]:
        if "instanceTypes" in expect:
            self.instance_types(expect["instanceTypes"])
        if "instanceTypeCount" in expect and expect["instanceTypeCount"] != len(self.r.instance_types):
            self.fail(f"{self.root}.instanceTypeCount", expect["instanceTypeCount"], len(self.r.instance_types),
                      ", ".join(sorted(self.r.instance_types)))
        if "nodePools" in expect:
            self.nodepools(expect["nodePools"])
        if "nodeClasses" in expect:
            self.nodeclasses(expect["nodeClasses"])
        if self.root == "expect":
            self.unexpected_refusals(expect.get("nodeClasses") or {}, expect.get("nodePools") or {})
        elif self.scenario is not None and (m := re.fullmatch(r"steps\[(\d+)\]\.expect", self.root)):
            # a step's update refused: expected if the scenario or this or an earlier step names it
            said = [expect, self.scenario.expect] + [s.get("expect") or {} for s in self.scenario.steps[:int(m[1]) + 1]]
            self.unexpected_refusals({k: 1 for e in said for k in (e.get("nodeClasses") or {})},
                                     {k: 1 for e in said for k in (e.get("nodePools") or {})})
        if "pods" in expect:
            self.pods(expect["pods"])
        if "nodeCount" in expect:
            self.node_count(expect["nodeCount"])
        nodes = expect.get("nodes")
        if isinstance(nodes, dict):          # {oneOf: [[...], [...]]}: one of these node lists holds
            self.node_lists(nodes)
        else:
            for i, want in enumerate(nodes or []):
                self.node(want, i)
        if "nodeClaims" in expect:
            self.nodeclaims(expect["nodeClaims"])
        if "azure" in expect:
            self.azure(expect["azure"])
        if "loop" in expect:
            self.loop(expect["loop"])
        if "restarts" in (expect.get("controller") or {}):
            want, have = expect["controller"]["restarts"], self.r.restarts
            if want != len(have):
                self.fail(f"{self.root}.controller.restarts", want, len(have),
                          "; ".join(r.get("why") or "" for r in have))
        for i, want in enumerate(expect.get("skew") or []):
            self.skew(want, i)
        for i, want in enumerate(expect.get("domains") or []):
            self.domains(want, i)
        for i, want in enumerate(expect.get("nodeClaimInstanceTypes") or []):
            self.nodeclaim_instance_types(want, i)
        if "disruption" in expect:
            from harness.scenario.expect.disruption import check_disruption
            check_disruption(self, expect["disruption"])
        for i, ev in enumerate(expect.get("events") or []):
            # every event of the run (RunResult.events); kind, name and reason are the event's own
            text = {k: v for k, v in ev.items() if k not in ("kind", "name", "reason")}
            if not any(_text_matches(text, e.get("message")) is None and
                       all(ev[k] == e.get(k) for k in ("kind", "name", "reason") if k in ev)
                       for e in self.r.events):
                self.fail(f"{self.root}.events[{i}]", ev, fold_counts([f"{e['kind']}/{e['name']} {e['reason']}: "
                                                                      f"{e['message']}" for e in self.r.events]))
        if "oneOf" in expect:
            self.one_of(expect["oneOf"])
        if "outcomes" in expect:
            self.outcomes(expect["outcomes"])
        return self.out

    # -- alternatives, ranges and outcome sets (issue 28: where upstream is random or racy) ----------
    def node_count(self, want) -> None:
        """The live nodes at the end (a deleted one is named apart): an integer, or a range `{min, max}`
        (either bound alone is fine)."""
        live = [n for n in self.r.nodes if n.deleted is None]
        have = len(live)
        there = ", ".join(f"{n.name} ({n.instance_type})" for n in live)
        gone = [n for n in self.r.nodes if n.deleted is not None]
        if gone:
            there += "; deleted: " + ", ".join(f"{n.name} ({n.deleted})" for n in gone)
        path = f"{self.root}.nodeCount"
        if isinstance(want, dict):
            if "min" in want and have < want["min"]:
                self.fail(f"{path}.min", want["min"], have, there)
            if "max" in want and have > want["max"]:
                self.fail(f"{path}.max", want["max"], have, there)
        elif want != have:
            self.fail(path, want, have, there)

    def _alternatives(self, path: str, checks: list) -> None:
        """Passes when one of `checks` (each a function of a fresh Checker, which it fills) finds no
        mismatch; otherwise one mismatch at `path` naming the closest alternative's misses."""
        tried = []
        for fill in checks:
            sub = Checker(self.r, self.scenario, self.root, self.profile, self.explored)
            fill(sub)
            if not sub.out:
                return
            tried.append(sub.out)
        if not tried:
            return
        best = min(range(len(tried)), key=lambda k: len(tried[k]))
        self.fail(path, f"one of {len(tried)} alternatives", "none holds",
                  f"closest is [{best}]: " + "; ".join(m.render() for m in tried[best][:4])
                  + ("; ..." if len(tried[best]) > 4 else ""))

    def node_lists(self, spec: dict) -> None:
        """`nodes: {oneOf: [[...], [...]]}`: the nodes match one of the lists."""
        path = f"{self.root}.nodes.oneOf"

        def alternative(k: int, entries: list):
            def fill(sub: "Checker") -> None:
                sub.nodes_root = f"{path}[{k}]"
                for i, want in enumerate(entries):
                    sub.node(want, i)
            return fill
        self._alternatives(path, [alternative(k, alt) for k, alt in enumerate(spec.get("oneOf") or [])])

    def one_of(self, alternatives: list) -> None:
        """`oneOf: [{...}, {...}]`: the run satisfies one of these expectation blocks (each is checked
        like `expect` itself)."""
        path = f"{self.root}.oneOf"

        def alternative(k: int, block: dict):
            def fill(sub: "Checker") -> None:
                sub.root = f"{path}[{k}]"
                sub.nodes_root = f"{sub.root}.nodes"
                sub.run(block)
            return fill
        self._alternatives(path, [alternative(k, b) for k, b in enumerate(alternatives)])

    def outcomes(self, spec: dict) -> None:
        """`outcomes: {possible, always, never}`: expectation blocks judged over the runs of every
        explored seed (`self.explored`; this run alone when none were explored): `possible` holds in
        at least one run, `always` in each, `never` in none."""
        runs = self.explored or [self.r]
        n = len(runs)
        for kind in ("possible", "always", "never"):
            for i, block in enumerate(spec.get(kind) or []):
                path = f"{self.root}.outcomes.{kind}[{i}]"
                verdicts = [(r, Checker(r, self.scenario, path, self.profile).run(block)) for r in runs]
                held = [r.seed for r, ms in verdicts if not ms]
                missed = [(r.seed, ms) for r, ms in verdicts if ms]
                if kind == "possible" and not held:
                    seed, ms = min(missed, key=lambda x: len(x[1]))
                    self.fail(path, "in at least one run", f"in none of {n} run(s)",
                              f"closest (seed {seed}): " + "; ".join(m.render() for m in ms[:4]))
                elif kind == "always" and missed:
                    seed, ms = missed[0]
                    self.fail(path, f"in every run ({n})", f"fails in {len(missed)} of {n} (seeds {_seeds(s for s, _ in missed)})",
                              f"seed {seed}: " + "; ".join(m.render() for m in ms[:4]))
                elif kind == "never" and held:
                    self.fail(path, "in no run", f"holds in {len(held)} of {n} (seeds {_seeds(held)})")


    # -- topology: pods per domain ------------------------------------------------------------------
    def _domain_of(self, node: str | None, key: str) -> str | None:
        """The pod's domain: its Node's name for kubernetes.io/hostname (core's ExpectSkew counts by
        node name), else the Node's label (None: the Node lacks it, the pod is not counted)."""
        if not node:
            return None
        if key == "kubernetes.io/hostname":
            return node
        n = next((n for n in self.r.nodes if n.name == node), None)
        return None if n is None else n.labels.get(key)

    def skew(self, want: dict, i: int) -> None:
        """Scheduled pods per domain of `topologyKey`, as core's ExpectSkew / ExpectMaxSkew count them
        (sigs.k8s.io/karpenter v1.14.0 pkg/test/expectations/expectations.go ExpectSkew; scheduling
        suite_test.go ExpectMaxSkew): pods of `namespace` (default "default", "" for all) matching
        `labelSelector` (absent: every pod), scheduled and not terminating. `counts` is the multiset
        of per-domain counts (Gomega ConsistOf), `max` bounds every count, `maxSkew` bounds
        max - min."""
        from harness.loop.scheduling.topology import selector_matches
        path = f"{self.root}.skew[{i}]"
        key = want["topologyKey"]
        ns = want.get("namespace", "default")
        selector = want.get("labelSelector", {})
        counts: dict[str, int] = {}
        for p in self.r.pods.values():
            if p.state != "scheduled" or (ns and p.namespace != ns):
                continue
            if not selector_matches(selector if selector is not None else {}, p.labels):
                continue
            d = self._domain_of(p.node, key)
            if d is not None:
                counts[d] = counts.get(d, 0) + 1
        have = sorted(counts.values())
        detail = ", ".join(f"{d}: {n}" for d, n in sorted(counts.items())) or "no scheduled pod counted"
        if "counts" in want and sorted(want["counts"]) != have:
            self.fail(f"{path}.counts", sorted(want["counts"]), have, detail)
        if ("max" in want or "maxSkew" in want) and not have:
            # a bound over no domain holds for anything (core's ExpectMaxSkew too): the pods it bounds must be there
            self.fail(f"{path}.topologyKey", f"scheduled pods in domains of {key}", "none", detail)
        if "max" in want and have and have[-1] > want["max"]:
            self.fail(f"{path}.max", want["max"], have[-1], detail)
        if "maxSkew" in want and have and have[-1] - have[0] > want["maxSkew"]:
            self.fail(f"{path}.maxSkew", want["maxSkew"], have[-1] - have[0], detail)

    def domains(self, want: dict, i: int) -> None:
        """How many distinct domains of `topologyKey` (default kubernetes.io/hostname: the Node) the
        named pods (or the pods of the named Deployments) are scheduled in: 1 is "together", the
        number of pods is "all apart". Every named pod must be scheduled."""
        path = f"{self.root}.domains[{i}]"
        key = want.get("topologyKey", "kubernetes.io/hostname")
        seen: dict[str, str | None] = {}
        for name in want["pods"]:
            pods = self.pods_of(name)
            if not pods:
                self.fail(f"{path}.pods", name, None, "no pod or Deployment by that name")
                continue
            for p in pods:
                seen[f"{p.namespace}/{p.name}"] = self._domain_of(p.node, key) if p.state == "scheduled" else None
        unplaced = sorted(k for k, d in seen.items() if d is None)
        if unplaced:
            self.fail(f"{path}.pods", "scheduled in a domain", "not", ", ".join(unplaced))
        values = sorted({d for d in seen.values() if d is not None})
        if "count" in want and len(values) != want["count"]:
            self.fail(f"{path}.count", want["count"], len(values),
                      "; ".join(f"{k}: {d}" for k, d in sorted(seen.items())))

    def nodeclaim_instance_types(self, want: dict, i: int) -> None:
        """The instance types the first NodeClaim created for `pod` lists (core's
        supportedInstanceTypes(cloudProvider.CreateCalls[0]), scheduling suite_test.go): at least
        `minCount`; each has `labels` among its requirement values (ExpectInstancesWithLabel; for the
        zone and capacity-type keys: an offering there); each has an offering of `offering`'s capacity
        type and zone (ExpectInstancesWithOffering); `allocatableExceedsRequests: true`: each one's
        allocatable CPU and memory exceed the summed requests of the NodeClaim's pods (core checks
        requests + overhead < capacity), `false`: some one's do not."""
        path = f"{self.root}.nodeClaimInstanceTypes[{i}]"
        pods = self.pods_of(want["pod"])
        claims = [c for p in pods for c in p.nodeclaims]
        claim = next((c for c in self.r.nodeclaims if claims and c.name == claims[0]), None)
        if claim is None:
            self.fail(f"{path}.pod", f"a NodeClaim created for {want['pod']}", None, "no NodeClaim was created for it")
            return
        names = sorted({v for r in claim.requirements if r.get("key") == "node.kubernetes.io/instance-type"
                        and r.get("operator") == "In" for v in r.get("values") or []})
        its = [self.r.instance_types.get(n) for n in names]
        missing = [n for n, it in zip(names, its) if it is None]
        if missing:
            self.fail(f"{path}", "instance types the run knows", missing)
            return
        if "minCount" in want and len(names) < want["minCount"]:
            self.fail(f"{path}.minCount", want["minCount"], len(names), f"{claim.name}: {', '.join(names)}")
        for key, value in (want.get("labels") or {}).items():
            value = _s(value)
            if key in ("topology.kubernetes.io/zone", "karpenter.sh/capacity-type"):
                attr = "zone" if key == "topology.kubernetes.io/zone" else "capacity_type"
                bad = [it.name for it in its if not any(getattr(o, attr) == value for o in it.offerings)]
            else:
                bad = [it.name for it in its if key not in it.requirements or not it.requirements[key].has(value)]
            if bad:
                self.fail(f'{path}.labels["{key}"]', value, bad, f"instance types of {claim.name} without it")
        off = want.get("offering")
        if off:
            bad = [it.name for it in its if not any(o.available and
                                                    o.capacity_type == off.get("capacityType", o.capacity_type) and
                                                    o.zone == _s(off.get("zone", o.zone)) for o in it.offerings)]
            if bad:
                self.fail(f"{path}.offering", off, bad, f"instance types of {claim.name} without that offering")
        if "allocatableExceedsRequests" in want:
            total: dict[str, int] = {}
            for key in claim.pods:
                pr = self.r.pods.get(key)
                if pr is not None:
                    for k, v in pr.requests.items():
                        total[k] = total.get(k, 0) + v
            bad = [it.name for it in its if any(total.get(k, 0) >= it.allocatable().get(k, 0) for k in ("cpu", "memory"))]
            if bool(bad) == bool(want["allocatableExceedsRequests"]):
                self.fail(f"{path}.allocatableExceedsRequests", want["allocatableExceedsRequests"], not bad,
                          f"requests {total}; not exceeded by: {', '.join(bad) or 'none'}")


def _seeds(seeds) -> str:
    seeds = list(seeds)
    return ", ".join(map(str, seeds[:8])) + (", ..." if len(seeds) > 8 else "")


def check(expect: dict, result: RunResult, scenario=None, root: str = "expect",
          profile: str | None = None, explored: list[RunResult] | None = None) -> list[Mismatch]:
    """Mismatches of `expect` (already merged for `profile`); each carries the line that set it.
    `explored`: the runs under every explored seed at this check point, over which `outcomes` is
    judged (default: this run alone)."""
    return Checker(result, scenario, root, profile, explored).run(expect)


def check_explored(expect: dict, results: list[RunResult], scenario=None, root: str = "expect",
                   profile: str | None = None, per_run: list[list[Mismatch]] | None = None) -> list[Mismatch]:
    """The mismatches of one check point over the runs of several seeds: every expectation but
    `outcomes` holds in each run (a miss is reported once, with the runs it happened in), and
    `outcomes` is judged over the set. `per_run`: the per-run mismatches already found (by the
    engine's own check), in the order of `results`; computed here when None."""
    if per_run is None:
        rest = {k: v for k, v in expect.items() if k != "outcomes"}
        per_run = [check(rest, r, scenario, root, profile) for r in results]
    out = merge_runs([(r.seed, ms) for r, ms in zip(results, per_run)])
    if "outcomes" in expect and results:
        checker = Checker(results[0], scenario, root, profile, results)
        checker.outcomes(expect["outcomes"])
        out += checker.out
    return out


def merge_runs(per_seed: list[tuple[int, list[Mismatch]]]) -> list[Mismatch]:
    """Mismatches of several runs, each path and expected value once, saying in which runs it
    happened (when more than one run was made)."""
    groups: dict[tuple, list[tuple[int, Mismatch]]] = {}
    for seed, ms in per_seed:
        for m in ms:
            groups.setdefault((m.path, _fmt(m.expected)), []).append((seed, m))
    if len(per_seed) <= 1:
        return [m for hits in groups.values() for _, m in hits]
    out = []
    for hits in groups.values():
        seed, first = hits[0]
        where = f"in {len(hits)} of {len(per_seed)} explored run(s), seeds {_seeds(s for s, _ in hits)}; seed {seed}"
        out.append(Mismatch(first.path, first.expected, first.actual,
                            f"{where}: {first.detail}" if first.detail else where, first.line))
    return out


def _flatten(d: dict, prefix: str) -> dict:
    """{"a": {"b": 1}} -> {".a.b": 1}: nested spec expectations compared leaf by leaf."""
    out: dict = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_flatten(v, f"{prefix}.{k}"))
        else:
            out[f"{prefix}.{k}"] = v
    return out
