"""Which release decided: the core switches and provider facts whose value at the run's release, and not the
newest release's, changed the run's outcome - each named at the decision where it acted.

A run at a release profile reads core switches whose value differs from the newest core's
(`RunResult.core_consulted`, harness/model/corebehaviour.py SwitchValues) and carries provider facts that differ
from the newest release's (harness.model.factchange differing_facts). Each is a suspect. The scenario runs again
on the simulated engine with suspects set to their newest value (`given.knobs`, merged over the profile as
harness.model.profile.profile_with_knobs does); a suspect decided the outcome when setting it alone changes what
the run did. What a run did is compared twice: its behaviour (nodes, pods, NodeClaims and disruptions, with
their times) and its words (events). The first decision where the two records part (harness/loop/decisions.py
Decision.key) is where the suspect acted. Why it is built this way: docs/architecture/runner.md.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from harness.runner.outcome import digest, outcome_view
from harness.runner.scenario import Scenario

SINGLE_FLIPS_UP_TO = 8        # suspects tried one by one; more are halved first (group testing)
AUTO_UP_TO_SECONDS = 5.0      # `harness run` looks for deciders unasked only after a run this short


@dataclass
class Decider:
    """One switch or fact that decided: what it says at the run's release, whether it changed the run's
    behaviour or only its words, and where the run and the newest behaviour part."""

    fact: str                        # core.behaviour.<switch> | provider.<...>
    sentence: str                    # harness.model.factchange FactChange.sentence()
    effect: str                      # one of EFFECTS: what changed with it
    at: object = None                # the run's decision where the two part (harness.loop.decisions.Decision)
    instead: object = None           # the decision the newest behaviour took there
    newest_outcome: str = ""         # the outcome with this switch at its newest value (report.outcome_summary)
    together: tuple[str, ...] = ()   # other facts it decided with (none of them alone changed the outcome)
    same_change: tuple[str, ...] = ()    # facts one provider change brought with it, set with it (units_of)
    change: object = field(default=None, repr=False)   # the FactChange

    def to_json(self, start: float | None = None) -> dict:
        out = {"fact": self.fact, "sentence": self.sentence, "effect": self.effect, "newestOutcome": self.newest_outcome}
        if self.together:
            out["together"] = list(self.together)
        if self.same_change:
            out["sameChange"] = list(self.same_change)
        if self.at is not None:
            out["at"] = self.at.to_json(start)
        if self.instead is not None:
            out["instead"] = self.instead.to_json(start)
        if self.change is not None:
            ch = self.change
            out.update({k: getattr(ch, k) for k in ("value", "pr", "next_release", "next_value", "next_pr")
                        if getattr(ch, k, None) is not None})
        return out

    def brief(self) -> str:
        """`skuSeries (v1.6.6, #1234)`: the fact, and the release that changes it."""
        ch = self.change
        nxt = getattr(ch, "next_tag", None) or getattr(ch, "next_release", None)
        pr = getattr(ch, "next_pr", None)
        tail = ", ".join(x for x in (nxt or "", f"#{pr}" if pr else "") if x)
        return _short(self.fact).removeprefix("provider.") + (f" ({tail})" if tail else "")

    def render(self, start: float | None = None) -> list[str]:
        if self.effect != "outcome":         # said in one line: the outcome is the same
            return [f"{self.sentence} [{EFFECT_WORDS[self.effect]}]"]
        lines = [self.sentence]
        if self.same_change:
            named = ", ".join(_short(f) for f in self.same_change)
            lines.append(f"  set with {named}: one provider change brought them")
        if self.together:
            lines.append(f"  together with {', '.join(_short(f) for f in self.together)} (none alone changes the outcome)")
        if self.at is not None:
            lines.append(f"  decided at {self.at.render(start)}")
        if self.instead is not None:
            lines.append(f"  with the newest behaviour: {self.instead.render(start)}")
        if self.newest_outcome:
            lines.append(f"  outcome with the newest behaviour: {self.newest_outcome}")
        return lines


@dataclass
class Deciding:
    """What decided a run at a release: the deciders, and the suspects that changed nothing."""

    profile: str
    suspects: list[str] = field(default_factory=list)
    deciders: list[Decider] = field(default_factory=list)
    runs: int = 0                    # counterfactual runs made
    skipped: str | None = None       # why no counterfactual was run
    unjudged: list[str] = field(default_factory=list)   # suspects whose counterfactual no release could have run

    def to_json(self, start: float | None = None) -> dict:
        out = {"profile": self.profile, "suspects": self.suspects, "runs": self.runs,
               "deciders": [d.to_json(start) for d in self.deciders], "unjudged": self.unjudged}
        if self.skipped:
            out["skipped"] = self.skipped
        return out

    def render(self, start: float | None = None) -> list[str]:
        if self.skipped:
            return [f"not looked for: {self.skipped}"] if "--deciding" in self.skipped else []
        if not self.suspects:
            return []
        lines = []
        if not any(d.effect == "outcome" for d in self.deciders):
            named = ", ".join(_short(s) for s in self.suspects[:6]) + (f", +{len(self.suspects) - 6}" if len(self.suspects) > 6 else "")
            lines.append(f"the release decided nothing in what happened: the {len(self.suspects)} switch(es) and "
                         f"fact(s) it holds otherwise than the newest release leave nodes, pods and disruptions as "
                         f"they are ({named})")
        for effect in EFFECTS:
            ds = [d for d in self.deciders if d.effect == effect]
            if effect == "outcome" or len(ds) <= FULL_LINES_UP_TO:
                for d in ds:
                    lines += d.render(start)
            else:                 # a release's many label changes in one line: the outcome is the same
                lines.append(f"{len(ds)} switch(es) and fact(s) {EFFECT_WORDS[effect].removeprefix('changes ')}: "
                             + "; ".join(d.brief() for d in ds))
        lines += [f"not judged: {u}" for u in self.unjudged]
        return lines


def _short(fact: str) -> str:
    return fact.removeprefix("core.behaviour.")


# -- what a run did ------------------------------------------------------------------------------------
# the node fields that are labels: what a label-only difference is made of
LABEL_FIELDS = ("labels", "kubeletNodeLabels")
# what a difference is in, from the most to the least telling: a decider is reported under the first
EFFECTS = ("outcome", "labels", "wording")
EFFECT_WORDS = {"labels": "changes only the Nodes' labels", "wording": "changes only what events say"}
FULL_LINES_UP_TO = 2          # label or wording deciders said one per line up to this many, else in one line


def behaviour_view(r) -> dict:
    """What the run did, compared between a run and its counterfactual: the final outcome (outcome.py) without
    the Nodes' labels, and when NodeClaims came and went and what disruption did (generated names left out)."""
    view = outcome_view(r)
    view["nodes"] = [{k: v for k, v in n.items() if k not in LABEL_FIELDS} for n in view["nodes"]]
    claims = sorted((c.nodepool, round(c.at.get("created", 0.0)), round(c.at.get("deleted", -1.0)), c.launched,
                     c.deleted or "") for c in r.nodeclaims)
    disrupted = sorted((d.get("reason"), d.get("method"), d.get("decision"), d.get("nodePool"),
                        d.get("instanceType"), round(d.get("at") or 0.0)) for d in r.disruptions)
    # every pod, a DaemonSet's too (one evicted early is what core's eviction order decides), by its owner
    pods = sorted((p.owner_name or p.name, p.state) for p in r.pods.values())
    return {"outcome": view, "claims": claims, "disrupted": disrupted, "pods": pods}


def labels_view(r) -> list:
    """The Nodes' labels (the kubelet's --node-labels too), in outcome.py's pairing order."""
    return [{k: n[k] for k in LABEL_FIELDS} for n in outcome_view(r)["nodes"]]


def words_view(r) -> list:
    """What the run's events said."""
    return sorted((e.get("kind"), e.get("reason"), e.get("message")) for e in r.events)


def _stranded(outcome) -> int:
    """The pods a run left with nothing: never bound and no NodeClaim launched for them (DaemonSet pods aside;
    deleted ones included, since a later step may scale away what an earlier one left). A provider fact set
    alone that strands pods both releases provision for has made a world neither had."""
    r = outcome.final
    launched = {c.name for c in r.nodeclaims if c.launched}
    return sum(1 for p in r.pods.values()
               if "bound" not in p.at and not launched & set(p.nodeclaims) and p.owner_kind != "DaemonSet")


def _empty_pools(outcome) -> set[str]:
    """The NodePools whose requirements left no instance type (their NoCompatibleInstanceTypes event)."""
    return {e.get("name") for e in outcome.final.events
            if e.get("kind") == "NodePool" and e.get("reason") == "NoCompatibleInstanceTypes"}


def incoherent(flipped, base, newest_run) -> str | None:
    """Why a counterfactual with provider facts set alone is a run no release could make, or None: it strands
    pods both releases provision for, or empties a NodePool both releases fill."""
    if _stranded(flipped) > _stranded(base) and _stranded(flipped) > _stranded(newest_run()):
        return f"no NodeClaim launches for {_stranded(flipped)} pod(s) that both releases provision for"
    emptied = _empty_pools(flipped) - _empty_pools(base) - _empty_pools(newest_run())
    if emptied:
        return f"NodePool {', '.join(sorted(emptied))} is left with no instance type, at neither release"
    return None


def _views(outcome) -> tuple[str, str, str]:
    r = outcome.final
    return digest(behaviour_view(r)), digest(labels_view(r)), digest(words_view(r))


# -- the counterfactual runs --------------------------------------------------------------------------
def with_knobs(scenario: Scenario, values: dict[str, object]) -> Scenario:
    """The scenario with `values` (dotted fact -> value) over its own given.knobs, under its own seed, without
    `outcomes` (one run answers, not a set)."""
    from harness.runner.explore import with_seed
    knobs = copy.deepcopy(dict(scenario.given.get("knobs") or {}))
    for fact, value in values.items():
        node = knobs
        *path, last = fact.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    sc = with_seed(scenario, scenario.seed, strip_outcomes=True)
    return dataclasses.replace(sc, given={**sc.given, "knobs": knobs})


def newest_value(fact: str):
    """The fact's value at the newest release (the `upstream` profile)."""
    from harness.model.factchange import fact_value
    from harness.model.profile import DEFAULT_PROFILE
    return fact_value(DEFAULT_PROFILE, fact)


def changed_by(older, newer) -> list[str]:
    """Between two runs of one scenario (Outcomes with `deciding`), the deciders of either whose value differs
    between the two profiles: what the across-releases table names beside `<- changed`."""
    from harness.model.factchange import fact_value
    out = []
    for o in (older, newer):
        for d in (getattr(getattr(o, "deciding", None), "deciders", None) or []):
            if d.effect != "outcome" or _short(d.fact) in out:
                continue
            if fact_value(older.profile, d.fact) != fact_value(newer.profile, d.fact):
                out.append(_short(d.fact))
    return out


def suspects_of(outcome) -> list[str]:
    """The run's differing core switches it read, then the provider facts its release holds otherwise."""
    from harness.model.factchange import differing_facts
    core = [f"core.behaviour.{n}" for n in outcome.final.core_consulted]
    try:
        facts = differing_facts(outcome.profile)
    except ValueError:      # a profile the release index cannot place (FactError, ProfileError): core only
        facts = []
    return core + [f for f in facts if not f.startswith("core.behaviour.") and f not in core]


def units_of(profile: str, suspects: list[str]) -> list[tuple[str, ...]]:
    """The suspects as the units flipped together: each core switch alone (each is one change of core's); the
    provider facts one provider change brought (the same next release and pull request) together, since one
    of them alone may make a world no release had (offering keys without the labels that match them)."""
    from harness.model.factchange import fact_change
    units: dict[object, list[str]] = {}
    switch_of = {f.rsplit(".", 1)[-1]: f for f in suspects if f.startswith("core.behaviour.")}
    for fact in suspects:
        if fact.startswith("core.behaviour."):
            units.setdefault(fact, []).append(fact)
            continue
        if fact.rsplit(".", 1)[-1] in switch_of:     # a probe of the same option as a switch (core.minValuesPolicy:
            units.setdefault(switch_of[fact.rsplit(".", 1)[-1]], []).append(fact)   # whether the option exists)
            continue
        ch = fact_change(profile, fact)
        key = ("provider", ch.next_release, ch.next_pr) if ch.next_pr is not None else fact
        units.setdefault(key, []).append(fact)
    return [tuple(u) for u in units.values()]


def decide(engine, scenario: Scenario, profile: str, cluster, outcome) -> Deciding:
    """The deciders of `outcome` (a simulated run of `scenario` under `profile`)."""
    from harness.model.factchange import fact_change
    from harness.runner.engines.base import execute_guarded
    from harness.runner.report import outcome_summary
    out = Deciding(profile)
    if engine.name != "simulated":
        out.skipped = "the real controller's switches cannot be set one by one"
        return out
    if outcome.error or outcome.skipped:
        out.skipped = "the run did not finish"
        return out
    release = outcome.final.release or {}
    if release.get("policy") or not release.get("release") or profile == "upstream":
        out.skipped = "not a release profile: nothing to compare with the newest release"
        return out
    out.suspects = suspects_of(outcome)
    if not out.suspects:
        return out
    units = units_of(profile, out.suspects)
    newest = {f: newest_value(f) for f in out.suspects}
    base = _views(outcome)
    runs: dict[frozenset, object] = {}

    def run(facts: frozenset):
        if facts not in runs:
            out.runs += 1
            runs[facts] = execute_guarded(engine, with_knobs(scenario, {f: newest[f] for f in facts}), profile,
                                          cluster)
        return runs[facts]

    def differs(group: list[tuple[str, ...]], which: int) -> bool | None:
        """Whether setting `group` changes what the run did (`which` view); None: the run could not be made."""
        o = run(frozenset(f for unit in group for f in unit))
        return None if o.error is not None else _views(o)[which] != base[which]

    newest_runs: list = []

    def newest_run():
        if not newest_runs:
            out.runs += 1
            newest_runs.append(execute_guarded(engine, with_knobs(scenario, {}), "upstream", cluster))
        return newest_runs[0]

    attributed: set[str] = set()
    failed: list[str] = []
    for which, effect in enumerate(EFFECTS):      # a unit found for the outcome is not looked for again below
        # core's switches and the provider's facts apart: a provider fact set alone can make a run no release
        # could have made (one that fails to start), which must not hide a switch that decided
        for family in (lambda u: u[0].startswith("core."), lambda u: not u[0].startswith("core.")):
            left = [u for u in units if family(u) and not attributed & set(u)]
            if not left or differs(left, which) is False:
                continue
            for group in _narrow(left, lambda g, w=which: differs(g, w), failed):
                facts = [f for unit in group for f in unit]
                attributed.update(facts)
                flipped = run(frozenset(facts))
                why = incoherent(flipped, outcome, newest_run) if effect == "outcome" and \
                    not all(f.startswith("core.behaviour.") for f in facts) else None
                if why:
                    # provider facts set alone made a world no release had (their release changed tables the
                    # profile holds beside them): not a verdict about either release
                    out.unjudged.append(f"{', '.join(_short(f) for f in facts)}: set to the newest release's value "
                                        f"alone, {why}")
                    continue
                at, instead = first_parting(outcome.final.decisions, flipped.final.decisions)
                for unit in group:
                    for fact in unit:
                        ch = fact_change(profile, fact)
                        out.deciders.append(Decider(
                            fact, ch.sentence(), effect, at, instead,
                            outcome_summary(flipped.final) if effect == "outcome" else "",
                            together=tuple(f for u in group if u is not unit for f in u),
                            same_change=tuple(f for f in unit if f != fact), change=ch))
    for unit in dict.fromkeys(failed):
        if not attributed & set(unit):
            o = run(frozenset(unit))
            out.unjudged.append(f"{', '.join(_short(f) for f in unit)}: set to the newest release's value alone, "
                                f"the run cannot be made ({(o.error or '').splitlines()[0][:160]})")
    return out


def _narrow(facts: list, differs, failed: list) -> list[list]:
    """The smallest groups of `facts` (units) that change the outcome (`differs(group)`: True, False, or None
    where the run could not be made), given that all of them together do or could not be run: each alone when
    there are few, else halves first. A group of several is a change no one of them makes alone. A unit whose
    run alone cannot be made goes to `failed`."""
    if len(facts) <= SINGLE_FLIPS_UP_TO:
        found = []
        for f in facts:
            d = differs([f])
            if d:
                found.append([f])
            elif d is None:
                failed.append(f)
        if found or len(facts) == 1 or differs(facts) is not True:
            return found
        return [_shrink(facts, differs)]
    half = len(facts) // 2
    found = []
    for part in (facts[:half], facts[half:]):
        if differs(part) is not False:
            found += _narrow(part, differs, failed)
    if not found and differs(facts) is True:
        return [_shrink(facts, differs)]
    return found


def _shrink(group: list, differs) -> list:
    """A group that changes the outcome only together, less each unit without which it still does (one pass, one
    run per unit): the drift checks and the hash version of a release without an AKSNodeClass hash, not every
    other fact the release holds beside them."""
    kept = list(group)
    for unit in group:
        rest = [u for u in kept if u != unit]
        if len(rest) > 1 and differs(rest) is True:
            kept = rest
    return kept


def first_parting(ours: list, theirs: list) -> tuple[object, object]:
    """The first decision where two records part: (ours, theirs); either may be None (one record ended)."""
    for a, b in zip(ours, theirs):
        if a.key() != b.key():
            return a, b
    if len(ours) == len(theirs):
        return None, None
    return (ours[len(theirs)] if len(ours) > len(theirs) else None,
            theirs[len(ours)] if len(theirs) > len(ours) else None)
