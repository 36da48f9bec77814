"""Which release decided: the core switches and provider facts whose value at the run's release, and not the
newest release's, changed what the user asked about - each named at the decision where it acted.

A run at a release profile reads core switches whose value differs from the newest core's
(`RunResult.core_consulted`, harness/model/upstream/corebehaviour.py SwitchValues) and carries provider facts that differ
from the newest release's (harness.model.upstream.factchange differing_facts). Each is a suspect. The scenario runs again
on the simulated engine with suspects set to their newest value (`given.knobs`, merged over the profile as
harness.model.upstream.profile.profile_with_knobs does). A suspect decided the outcome when setting it alone changes what
the user asked about: what the scenario's expectations judge, or the outcome line the run prints. One that
keeps the outcome for other reasons (a node kept by its nomination here, by its budget at the newest), or
changes only what happened on the way, the Nodes' labels or the words of events, is said apart, in one line.
The first decision where the two records part (harness/loop/decisions.py Decision.key) is where it acted. Why
it is built this way, and what it costs: docs/architecture/runner.md.
"""
from __future__ import annotations

import copy
import dataclasses
import gc
import time
from dataclasses import dataclass, field

from harness.judge.outcome import digest, outcome_view
from harness.scenario.load import Scenario

SINGLE_FLIPS_UP_TO = 8        # suspects tried one by one when the record names none; more are halved first
AUTO_UP_TO_SECONDS = 5.0      # `harness run` looks for deciders unasked only after a run this short
NOT_JUDGED_CHARS = 160        # a run's error in a "not judged" line is shortened to this, at a word's end


@dataclass
class Decider:
    """One switch or fact that decided: what it says at the run's release, what it changed (EFFECTS), and where
    the run and the newest behaviour part."""

    fact: str                        # core.behaviour.<switch> | provider.<...>
    sentence: str                    # harness.model.upstream.factchange FactChange.sentence()
    effect: str                      # one of EFFECTS: what changed with it
    at: object = None                # the run's decision where the two part (harness.loop.decisions.Decision)
    instead: object = None           # the decision the newest behaviour took there
    newest_outcome: str = ""         # the outcome with this switch at its newest value (report.outcome_summary)
    together: tuple[str, ...] = ()   # other facts it decided with (none of them alone changed the outcome)
    same_change: tuple[str, ...] = ()    # facts one provider change brought with it, set with it (units_of)
    change: object = field(default=None, repr=False)   # the FactChange
    newest_verdict: str = ""         # what the scenario's expectations say with it at its newest value, when
    #                                  that differs from the run's ("pass", or the first mismatch)
    detail: str = ""                 # effect "reasons": the kept objects and their reasons at both values;
    #                                  effect "behaviour": what on the way changes

    def to_json(self, start: float | None = None) -> dict:
        out = {"fact": self.fact, "sentence": self.sentence, "effect": self.effect, "newestOutcome": self.newest_outcome}
        if self.effect != "outcome":
            out["effectWords"] = EFFECT_WORDS[self.effect]
        if self.newest_verdict:
            out["newestVerdict"] = self.newest_verdict
        if self.detail:
            out["detail"] = self.detail
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
        if self.effect != "outcome":         # said in one line: what the user asked about is the same
            return [f"{self.sentence} [{EFFECT_WORDS[self.effect]}" + (f"; {self.detail}" if self.detail else "") + "]"]
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
        if self.newest_verdict:
            lines.append(f"  the scenario's expectations with the newest behaviour: {self.newest_verdict}")
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
    seconds: float = 0.0             # CPU seconds the counterfactual runs took

    def to_json(self, start: float | None = None) -> dict:
        out = {"profile": self.profile, "suspects": self.suspects, "runs": self.runs,
               "deciders": [d.to_json(start) for d in self.deciders], "unjudged": self.unjudged,
               "cpuSeconds": round(self.seconds, 1)}
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
            if any(d.effect == "reasons" for d in self.deciders):
                lines.append(f"the release reaches the same outcome for other reasons: of the {len(self.suspects)} "
                             f"switch(es) and fact(s) it holds otherwise than the newest release ({named}), none "
                             "changes the outcome or what the scenario expects; the ones below change why")
            else:
                lines.append(f"the release decided nothing the scenario expects or the outcome shows: the "
                             f"{len(self.suspects)} switch(es) and fact(s) it holds otherwise than the newest release "
                             f"leave both as they are ({named})")
        for effect in EFFECTS:
            ds = [d for d in self.deciders if d.effect == effect]
            if effect in ("outcome", "reasons") or len(ds) <= FULL_LINES_UP_TO:
                for d in ds:
                    lines += d.render(start)
            else:                 # a release's many label changes in one line: the outcome is the same
                lines.append(f"{len(ds)} switch(es) and fact(s) {EFFECT_WORDS[effect].removeprefix('changes ')}: "
                             + "; ".join(d.brief() for d in ds))
        lines += [f"not judged: {u}" for u in self.unjudged]
        if self.seconds >= AUTO_UP_TO_SECONDS:           # what it cost, where that is worth saying
            lines.append(f"(looked for in {self.runs} more run(s) of the scenario: {self.seconds:.0f} CPU-s)")
        return lines


def _short(fact: str) -> str:
    return fact.removeprefix("core.behaviour.")


def clip(text: str, limit: int = NOT_JUDGED_CHARS) -> str:
    """`text` shortened to at most `limit` characters at a word's end, with "..." where it was cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 3].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "..."


# -- what a run did ------------------------------------------------------------------------------------
# the node fields that are labels: what a label-only difference is made of
LABEL_FIELDS = ("labels", "kubeletNodeLabels")
# what a difference is in, from the most to the least telling: a decider is reported under the first.
# outcome: what the user asked about (the expectations' verdict, the outcome line); reasons: the same, for other
# reasons (what kept which node); behaviour: what happened on the way (when NodeClaims came and went, what
# disruption did, the nodes' zones and taints, a DaemonSet's pods); labels; wording: the events' words
EFFECTS = ("outcome", "reasons", "behaviour", "labels", "wording")
EFFECT_WORDS = {"reasons": "the same outcome for other reasons",
                "behaviour": "changes only what happens on the way, not the outcome or what the scenario expects",
                "labels": "changes only the Nodes' labels", "wording": "changes only what events say"}
FULL_LINES_UP_TO = 2          # behaviour, label or wording deciders said one per line up to this many, else in one
REASONS_SHOWN = 3             # kept objects named per "other reasons" line
# behaviour_view's parts, as a "changes only ..." line names them
BEHAVIOUR_PARTS = {"outcome": "the nodes' zones, taints or pods", "claims": "when NodeClaims come and go",
                   "disrupted": "when disruption acts", "pods": "the pods' states (a DaemonSet's included)"}


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


def verdict_view(o) -> tuple:
    """What the scenario's expectations said of the run: each mismatch's path, expected and actual value."""
    return tuple(sorted((m.path, repr(m.expected), repr(m.actual)) for m in o.mismatches))


def reasons_view(r) -> dict:
    """Why the disruption side did what it did: (what, method) -> the subjects it applies to, for each candidate
    a method left, by what (the decision record's `by`: budget, nominated, pdb, do-not-disrupt, unconsolidatable,
    ...), each protection the run recorded, and each NodeClaim disrupted, as which reason (Empty, Drifted, ...).
    Compared by counts (reasons_counts): generated names are not reasons."""
    out: dict[tuple[str, str], set] = {}
    for d in r.decisions:
        if d.action == "candidate-kept" and d.data.get("by"):
            out.setdefault((f"kept by {d.data['by']}", str(d.data.get("method") or "")), set()).add(d.subject)
    for p in r.protected:
        subject = f"NodeClaim/{p['nodeClaim']}" if p.get("nodeClaim") else f"Node/{p.get('node')}"
        out.setdefault((f"kept by {p.get('by')}", str(p.get("method") or "")), set()).add(subject)
    for d in r.disruptions:
        out.setdefault((f"disrupted as {d.get('reason')}", str(d.get("method") or "")), set()).add(
            f"NodeClaim/{d.get('nodeClaim')}")
    return {k: sorted(v) for k, v in out.items()}


def reasons_counts(view: dict) -> list:
    return sorted((what, method, len(subjects)) for (what, method), subjects in view.items())


def reasons_text(ours: dict, theirs: dict) -> str:
    """What differs between two reasons views: `here: disrupted as Drifted (Drift) x1 (NodeClaim/a); with the
    newest behaviour: disrupted as Empty (Emptiness) x1 (NodeClaim/a)`, the first REASONS_SHOWN of each."""
    from harness.loop.disruption.record import METHODS
    def said(mine: dict, other: dict) -> str:
        keys = [k for k in sorted(mine) if len(mine[k]) != len(other.get(k, ()))]
        parts = [f"{what}" + (f" ({METHODS.get(m, m)})" if m else "") + f" x{len(mine[(what, m)])} ("
                 + ", ".join(mine[(what, m)][:2]) + (", ..." if len(mine[(what, m)]) > 2 else "") + ")"
                 for what, m in keys[:REASONS_SHOWN]]
        more = len(keys) - REASONS_SHOWN
        return ("; ".join(parts) + (f"; and {more} more" if more > 0 else "")) or "nothing else"
    return f"here {said(ours, theirs)}; with the newest behaviour {said(theirs, ours)}"


def _stranded(r) -> int:
    """The pods a run left with nothing: never bound and no NodeClaim launched for them (DaemonSet pods aside;
    deleted ones included, since a later step may scale away what an earlier one left). A provider fact set
    alone that strands pods both releases provision for has made a world neither had."""
    launched = {c.name for c in r.nodeclaims if c.launched}
    return sum(1 for p in r.pods.values()
               if "bound" not in p.at and not launched & set(p.nodeclaims) and p.owner_kind != "DaemonSet")


def _empty_pools(r) -> frozenset[str]:
    """The NodePools whose requirements left no instance type (their NoCompatibleInstanceTypes event)."""
    return frozenset(e.get("name") for e in r.events
                     if e.get("kind") == "NodePool" and e.get("reason") == "NoCompatibleInstanceTypes")


@dataclass
class Trial:
    """What decide() keeps of one run, the run's own or a counterfactual: its views as digests (one per
    EFFECTS, and behaviour_view's parts), the outcome line and the verdict, the decision record, and what
    `incoherent` reads. The run itself (its Nodes, pods and events: ~80 MB at 1,000 nodes) is let go."""

    error: str | None = None
    views: tuple[str, ...] = ()
    parts: dict = field(default_factory=dict)
    summary: str = ""
    verdict: tuple = ()
    reasons: dict = field(default_factory=dict)
    decisions: list = field(default_factory=list)
    stranded: int = 0
    empty_pools: frozenset = frozenset()

    @staticmethod
    def of(o) -> "Trial":
        from harness.report.console import outcome_summary
        if o.error is not None:
            return Trial(error=o.error)
        r = o.final
        behaviour = behaviour_view(r)
        verdict = verdict_view(o)
        summary = outcome_summary(r)
        reasons = reasons_view(r)
        views = (digest([summary, list(verdict)]), digest(reasons_counts(reasons)), digest(behaviour),
                 digest(labels_view(r)), digest(words_view(r)))
        return Trial(None, views, {k: digest(v) for k, v in behaviour.items()}, summary, verdict, reasons,
                     list(r.decisions), _stranded(r), _empty_pools(r))

    def verdict_text(self) -> str:
        """`pass`, or the first mismatch's path (and how many more)."""
        if not self.verdict:
            return "pass"
        path, expected, actual = self.verdict[0]
        more = len(self.verdict) - 1
        return f"fail: {path}: expected {expected}, got {actual}" + (f" (+{more} more)" if more else "")


def effect_of(flipped: Trial, base: Trial) -> tuple[str, str]:
    """What a counterfactual changed, the first of EFFECTS whose views differ, and the line's detail. A verdict
    that moves only because the scenario's expectations read an event's words (the outcome line and every other
    view the same) is a wording change: the words are what it changes, and the line names the expectation."""
    differ = [e for e, a, b in zip(EFFECTS, flipped.views, base.views) if a != b]
    effect = differ[0]
    if differ == ["outcome", "wording"] and flipped.summary == base.summary:
        paths = sorted({path for path, *_ in set(flipped.verdict) ^ set(base.verdict)})
        return "wording", f"the scenario's expectations read them at {', '.join(paths[:2])}" + (
            f" and {len(paths) - 2} more" if len(paths) > 2 else "")
    if effect == "reasons":
        return effect, reasons_text(base.reasons, flipped.reasons)
    if effect == "behaviour":
        return effect, ", ".join(w for k, w in BEHAVIOUR_PARTS.items() if flipped.parts.get(k) != base.parts.get(k))
    return effect, ""


def incoherent(flipped: Trial, base: Trial, newest_run) -> str | None:
    """Why a counterfactual with provider facts set alone is a run no release could make, or None: it strands
    pods both releases provision for, or empties a NodePool both releases fill."""
    if flipped.stranded > base.stranded and flipped.stranded > newest_run().stranded:
        return f"no NodeClaim launches for {flipped.stranded} pod(s) that both releases provision for"
    emptied = flipped.empty_pools - base.empty_pools - newest_run().empty_pools
    if emptied:
        return f"NodePool {', '.join(sorted(emptied))} is left with no instance type, at neither release"
    return None


# -- the counterfactual runs --------------------------------------------------------------------------
def with_knobs(scenario: Scenario, values: dict[str, object]) -> Scenario:
    """The scenario with `values` (dotted fact -> value) over its own given.knobs, under its own seed, without
    `outcomes` (one run answers, not a set)."""
    from harness.judge.explore import with_seed
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
    from harness.model.upstream.factchange import fact_value
    from harness.model.upstream.profile import DEFAULT_PROFILE
    return fact_value(DEFAULT_PROFILE, fact)


def changed_by(older, newer) -> list[str]:
    """Between two runs of one scenario (Outcomes with `deciding`), the deciders of either whose value differs
    between the two profiles: what the across-releases table names beside `<- changed`."""
    from harness.model.upstream.factchange import fact_value
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
    from harness.model.upstream.factchange import differing_facts
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
    from harness.model.upstream.factchange import fact_change
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


def unread_facts(scenario: Scenario, outcome) -> frozenset[str]:
    """The facts a run notes where they read (harness/model/upstream/factreads.py NOTED: provider facts by the
    instance-type builds, core's two probes by the requirement algebra, two more by the one controller that reads
    each) that this run never noted: no value of
    any of them changes the run, so a counterfactual setting only these is this run. Not the quota gate when the
    scenario's expectations may read the Azure requests (its read is a request of its own), nor a fact noted for
    sizes no NodePool took when they read the list of instance types."""
    from harness.model.upstream.factreads import NOTED, QUOTA_GATES
    noted = set(getattr(outcome.final, "facts_consulted", None) or ())
    expects = (scenario.expect, scenario.expect_by_profile, scenario.steps)
    if _names_key(expects, "instanceTypes") or _names_key(expects, "instanceTypeCount"):
        noted |= set(getattr(outcome.final, "facts_listed_only", None) or ())
    unread = {f for f in NOTED if f not in noted}
    if _names_key(expects, "azure"):
        unread.discard(QUOTA_GATES)
    return frozenset(unread)


def _names_key(data, key: str) -> bool:
    """Whether `key` is a key of any mapping in `data` (lists, tuples and mappings walked)."""
    if isinstance(data, dict):
        return key in data or any(_names_key(v, key) for v in data.values())
    if isinstance(data, (list, tuple)):
        return any(_names_key(v, key) for v in data)
    return False


def looked_for(engine, profile: str, outcome) -> str | None:
    """Why the deciders of `outcome` are not looked for at all (None: they are)."""
    if engine.name != "simulated":
        return "the real controller's switches cannot be set one by one"
    if outcome.error or outcome.skipped:
        return "the run did not finish"
    release = outcome.final.release or {}
    if release.get("policy") or not release.get("release") or profile == "upstream":
        return "not a release profile: nothing to compare with the newest release"
    return None


def estimate(engine, scenario: Scenario, profile: str, outcome) -> str | None:
    """What looking for the deciders of `outcome` will cost, said before a long run (None: nothing is run).
    One run again when the release decided nothing; about two more per unit that decides; at worst about
    twice per unit (a unit: one core switch, or the facts of one provider change; a unit of facts the run never
    noted is cleared without a run, as decide clears it). The runs are whole runs of the scenario:
    docs/architecture/runner.md says why none of them is shorter."""
    if looked_for(engine, profile, outcome) is not None:
        return None
    unread = unread_facts(scenario, outcome)
    units = [u for u in units_of(profile, suspects_of(outcome)) if not set(u) <= unread]
    if not units:
        return None
    worst = 2 * len(units) + 1
    return (f"{len(units)} switch(es) and fact(s) differ from the newest release; looking for the ones that decided "
            f"runs the scenario again: once if none did, about twice more for each that did, at most ~{worst} times, "
            f"each about as long as this run ({outcome.seconds:.0f}s): ~{outcome.seconds:.0f}s to "
            f"~{worst * outcome.seconds / 60:.0f} min")


def decide(engine, scenario: Scenario, profile: str, cluster, outcome) -> Deciding:
    """The deciders of `outcome` (a simulated run of `scenario` under `profile`)."""
    from harness.model.upstream.factchange import fact_change
    from harness.runner.engines.base import execute_guarded
    out = Deciding(profile)
    out.skipped = looked_for(engine, profile, outcome)
    if out.skipped:
        return out
    out.suspects = suspects_of(outcome)
    if not out.suspects:
        return out
    units = units_of(profile, out.suspects)
    newest = {f: newest_value(f) for f in out.suspects}
    base = Trial.of(outcome)
    trials: dict[frozenset, Trial] = {}
    t0 = time.process_time()

    def trial(o) -> Trial:
        t = Trial.of(o)
        del o
        gc.collect()           # the run's cluster, fake and result go before the next is made
        return t

    unread = unread_facts(scenario, outcome)

    def run(facts: frozenset) -> Trial:
        # the facts the run never noted are left out: set or not, the run is the same (a group of only those is
        # this run), and a group with them runs as the group without them did or will
        if facts and facts <= unread:
            return base
        facts = facts - unread
        if facts not in trials:
            out.runs += 1
            trials[facts] = trial(execute_guarded(engine, with_knobs(scenario, {f: newest[f] for f in facts}),
                                                  profile, cluster))
        return trials[facts]

    def differs(group: list[tuple[str, ...]]) -> bool | None:
        """Whether setting `group` changes anything the views hold; None: the run could not be made."""
        t = run(frozenset(f for unit in group for f in unit))
        return None if t.error is not None else t.views != base.views

    def hot(group: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """The units of `group` its run's record points at: the core switches read at the decision where that
        run and this one first part (and at the decisions of the same moment before it)."""
        t = run(frozenset(f for unit in group for f in unit))
        read = read_at_parting(base.decisions, t.decisions)
        return [u for u in group if any(f.startswith("core.behaviour.") and f[len("core.behaviour."):] in read
                                        for f in u)]

    def same(a: list[tuple[str, ...]], b: list[tuple[str, ...]]) -> bool:
        """Whether two groups' runs agree in every view (neither failing)."""
        ta, tb = (run(frozenset(f for unit in g for f in unit)) for g in (a, b))
        return ta.error is None and tb.error is None and ta.views == tb.views

    newest_runs: list[Trial] = []

    def newest_run() -> Trial:
        if not newest_runs:
            out.runs += 1
            newest_runs.append(trial(execute_guarded(engine, with_knobs(scenario, {}), "upstream", cluster)))
        return newest_runs[0]

    failed: list = []
    attributed: set[str] = set()
    # core's switches and the provider's facts apart: a provider fact set alone can make a run no release
    # could have made (one that fails to start), which must not hide a switch that decided
    for family in (lambda u: u[0].startswith("core."), lambda u: not u[0].startswith("core.")):
        left = [u for u in units if family(u)]
        if not left or differs(left) is False:
            continue
        for group in _narrow(left, differs, failed, hot, same):
            facts = [f for unit in group for f in unit]
            attributed.update(facts)
            flipped = run(frozenset(facts))
            effect, detail = effect_of(flipped, base)
            why = incoherent(flipped, base, newest_run) if effect == "outcome" and \
                not all(f.startswith("core.behaviour.") for f in facts) else None
            if why:
                # provider facts set alone made a world no release had (their release changed tables the
                # profile holds beside them): not a verdict about either release
                out.unjudged.append(f"{', '.join(_short(f) for f in facts)}: set to the newest release's value "
                                    f"alone, {why}")
                continue
            at, instead = first_parting(base.decisions, flipped.decisions)
            for unit in group:
                for fact in unit:
                    ch = fact_change(profile, fact)
                    out.deciders.append(Decider(
                        fact, ch.sentence(), effect, at, instead, flipped.summary if effect == "outcome" else "",
                        together=tuple(f for u in group if u is not unit for f in u),
                        same_change=tuple(f for f in unit if f != fact), change=ch,
                        newest_verdict=flipped.verdict_text()
                        if effect == "outcome" and flipped.verdict != base.verdict else "",
                        detail=detail))
    for unit in dict.fromkeys(failed):
        if not attributed & set(unit):
            t = run(frozenset(unit))
            out.unjudged.append(f"{', '.join(_short(f) for f in unit)}: set to the newest release's value alone, "
                                f"the run cannot be made ({clip((t.error or '').splitlines()[0])})")
    out.seconds = time.process_time() - t0
    return out


def _narrow(units: list, differs, failed: list, hot=None, same=None) -> list[list]:
    """The smallest groups of `units` that change the run (`differs(group)`: True, False, or None where the run
    could not be made), given that all of them together do or could not be run. Split first where the record
    points (`hot(group)`: the units read where the group's run parts from this one) against the rest, and when
    the pointed units alone run exactly as the whole group (`same(a, b)`), the rest adds nothing and is not run;
    without a pointer, each alone when there are few, else halves, and halves too where the group's run could not
    be made (a run that cannot start fails at its start: halving finds the units that break it for little, and
    clears the rest in one run). As in any group testing, a group that changes
    nothing is taken to hold no unit that would alone. A group of several is a change no one of them makes
    alone. A unit whose run alone cannot be made goes to `failed`."""
    if len(units) == 1:
        d = differs(units)
        if d is None:
            failed.append(units[0])
        return [units] if d else []
    whole = differs(units)
    pointed = hot(units) if hot is not None and whole else []
    if pointed and len(pointed) < len(units):
        parts = [pointed, [u for u in units if u not in pointed]]
    elif whole is not None and len(units) <= SINGLE_FLIPS_UP_TO:
        parts = [[u] for u in units]
    else:
        half = len(units) // 2
        parts = [units[:half], units[half:]]
    found = []
    for i, part in enumerate(parts):
        if i == 1 and pointed and same is not None and same(parts[0], units):
            break                    # the pointed units alone do all the group does: the rest adds nothing
        if len(part) == 1:
            found += _narrow(part, differs, failed, hot, same)
        elif differs(part) is not False:
            found += _narrow(part, differs, failed, hot, same)
    if not found and differs(units) is True:
        return [_shrink(units, differs)]
    return found


def _shrink(group: list, differs) -> list:
    """A group that changes the run only together, less each unit without which it still does (one pass, one
    run per unit): the drift checks and the hash version of a release without an AKSNodeClass hash, not every
    other fact the release holds beside them."""
    kept = list(group)
    for unit in group:
        rest = [u for u in kept if u != unit]
        if len(rest) > 1 and differs(rest) is True:
            kept = rest
    return kept


def read_at_parting(ours: list, theirs: list) -> set[str]:
    """The differing switches `ours` read at the decision where the two records first part, and at the
    decisions of the same moment before it (a switch read in a pass is named by the pass's next decision)."""
    n = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a.key() != b.key()), min(len(ours), len(theirs)))
    if n >= len(ours):
        return set()
    out: set[str] = set()
    i = n
    while i >= 0 and ours[i].t == ours[n].t:
        out.update(ours[i].switches)
        i -= 1
    return out


def first_parting(ours: list, theirs: list) -> tuple[object, object]:
    """The first decision where two records part: (ours, theirs); either may be None (one record ended)."""
    for a, b in zip(ours, theirs):
        if a.key() != b.key():
            return a, b
    if len(ours) == len(theirs):
        return None, None
    return (ours[len(theirs)] if len(ours) > len(theirs) else None,
            theirs[len(ours)] if len(theirs) > len(ours) else None)
