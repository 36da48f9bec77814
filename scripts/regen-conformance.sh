#!/usr/bin/env bash
# Regenerate docs/conformance/: every upstream-profile scenario of the library on the real
# Karpenter-on-Azure controller and on the simulated engine, side by side (harness/judge/conformance.py),
# then fail on a difference no strict xfail explains (which side is wrong, from the upstream source).
# Needs the control plane and the controller (built here when missing: ~15 + ~5-20 min cold).
# About 55-60 min warm for the whole report on 2 busy cores with JOBS=2 (each worker runs its own API
# server and controller); JOBS defaults to `auto`, three workers per core on the real engine (harness/data/
# real-engine.yaml xdist_workers_per_core: the library outside upstream-core in 11 min instead of 30 on 2 cores).
#   bash scripts/regen-conformance.sh [OUT_DIR] [pytest selection...]   # the whole report (or the selection's)
#   bash scripts/regen-conformance.sh --stale [OUT_DIR]      # only the runs the report no longer describes
#                                                             # (a scenario added or edited, a simulated outcome changed)
#   MERGE=1 bash scripts/regen-conformance.sh OUT_DIR selection...   # rerun a selection, keep the other entries
#   MODE=aksmachineapi bash scripts/regen-conformance.sh '' scenarios/design-0006   # one provision mode's report
#   PROFILE=v1.12.0 MODE=aksmachineapi KARPENTER_PROVIDER_GIT=DIR bash scripts/regen-conformance.sh '' ...
#                                                             # at another release: its controller, built from
#                                                             # DIR (a provider clone with its tags), and profile
#   NO_CHECK=1 ...                                           # write the report, leave `check` to the caller
#                                                             # (the nightly joins one report per part first)
set -euo pipefail
cd "$(dirname "$0")/.."
stale=
if [ "${1:-}" = "--stale" ]; then stale=1; shift; fi
# MODE=<provision mode>: every run in that mode (both engines; harness/model/upstream/provisionmodes.py), into
# docs/conformance/modes/<mode> unless OUT_DIR is given; the check and --stale read it too
if [ -n "${MODE:-}" ]; then export HARNESS_PROVISION_MODE=$MODE; fi
# PROFILE=<release>: the controller of that release tag (built from KARPENTER_PROVIDER_GIT) and its profile forced
# on every scenario (harness/scenario/selection.py), into docs/conformance/modes/<mode>-<release> by default
release=()
build=()
if [ -n "${PROFILE:-}" ]; then
  : "${KARPENTER_PROVIDER_GIT:?PROFILE=$PROFILE needs KARPENTER_PROVIDER_GIT, a karpenter-provider-azure clone with its tags}"
  release=(--harness-provider-version "$PROFILE" --harness-provider-git "$KARPENTER_PROVIDER_GIT")
  build=(--provider-git "$KARPENTER_PROVIDER_GIT" --provider-ref "$PROFILE")
fi
out=${1:-docs/conformance${MODE:+/modes/$MODE${PROFILE:+-$PROFILE}}}
shift || true
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$HOME/.cache/karpenter-harness/pycache}"
if [ -n "$stale" ]; then
  mapfile -t runs < <(python3 -m harness.judge.conformance stale "$out")
  if [ ${#runs[@]} -eq 0 ]; then
    echo "regen-conformance: $out describes the library; nothing to rerun" >&2
    exec python3 -m harness.judge.conformance check "$out"
  fi
  printf 'regen-conformance: stale: %s\n' "${runs[@]}" >&2
  # `file::scenario [profile]: why` -> the files and a -k expression of the scenario names
  mapfile -t files < <(printf '%s\n' "${runs[@]}" | sed 's/::.*//' | sort -u)
  names=$(printf '%s\n' "${runs[@]}" | sed 's/^[^:]*::\([^ ]*\) .*/\1/' | sort -u | paste -sd' ' | sed 's/ / or /g')
  set -- "${files[@]}" -k "$names"
  MERGE=1
fi
python3 -m harness.backends build >/dev/null
python3 -m harness.backends build --controller "${build[@]}" >/dev/null
dest=$out
if [ -n "${MERGE:-}" ]; then dest=$(mktemp -d); trap 'rm -rf "$dest"' EXIT; fi
rm -rf "$dest/entries"
set +e
python3 -m pytest "${@:-scenarios/}" --harness-engine real --harness-profile "${PROFILE:-upstream}" "${release[@]}" \
  -n "${JOBS:-auto}" -p no:cacheprovider -q --harness-conformance "$dest"
rc=$?
set -e
# 1: some real runs failed their expectations; the report holds them and `check` judges them.
# Anything else (an interrupted or broken session) is a failure of this script.
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
  echo "regen-conformance: pytest ended with $rc" >&2
  exit "$rc"
fi
if [ -n "${MERGE:-}" ]; then python3 -m harness.judge.conformance merge "$dest" "$out"; fi
if [ -n "${NO_CHECK:-}" ]; then exit 0; fi
python3 -m harness.judge.conformance check "$out"
