#!/usr/bin/env bash
# Model-checks Workrow's job protocol (queue-faults/model/job-protocol.pml) with spin: the safety
# properties over every reachable state, the liveness property under weak fairness, and five
# mutants of the protocol that must each be caught, so that the checks are shown able to fail.
#
#   queue-faults/scripts/model-check.sh
#
# Needs spin (Debian package spin) and a C compiler. Prints one line per check; exits non-zero
# when a property fails or a mutant passes.
set -euo pipefail
model="$(cd "$(dirname "$0")/../model" && pwd)/job-protocol.pml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

failures=0

# check NAME EXPECT(pass|fail) "SPIN DEFINES" "CC DEFINES" "PAN FLAGS" [WHAT A FAILURE MUST SAY]
check() {
    local name=$1 expect=$2 defines=$3 cc=$4 flags=$5 says=${6:-}
    # shellcheck disable=SC2086
    spin $defines -a "$model" >/dev/null
    # shellcheck disable=SC2086
    gcc -O2 -w $cc -o pan pan.c
    # shellcheck disable=SC2086
    ./pan $flags >pan.out 2>&1 || true
    local errors states
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | head -1)
    if grep -q "max search depth too small" pan.out; then
        echo "$name: search depth too small" >&2
        failures=$((failures + 1))
        return
    fi
    local outcome=pass
    [ "${errors:-1}" = "0" ] || outcome=fail
    if [ "$outcome" = fail ] && [ -n "$says" ] && ! grep -q "$says" pan.out; then
        outcome="fail for another reason than '$says'"
    fi
    if [ "$outcome" = "$expect" ]; then
        echo "$name: $outcome as expected (errors ${errors:-?}, ${states:-?} states)"
    else
        echo "$name: $outcome, expected $expect (errors ${errors:-?}, ${states:-?} states)" >&2
        sed -n '1,20p' pan.out >&2
        failures=$((failures + 1))
    fi
}

check "safety: fenced finalize, completed at most once, token iff running" pass "" "-DSAFETY -DNOCLAIM" "-m200000"
check "liveness: every job ends completed or dead (weak fairness)" pass "" "-DNFAIR=5" "-a -f -N ends -m200000"
check "mutant: finalize without the token" fail "-DUNFENCED" "-DSAFETY -DNOCLAIM" "-m200000" "assertion violated"
check "mutant: a claim that does not check the row is pending" fail "-DUNCHECKED_CLAIM" "-DSAFETY -DNOCLAIM" "-m200000" "assertion violated"
check "mutant: no sweeper" fail "-DNO_SWEEPER" "-DNFAIR=5" "-a -f -N ends -m200000" "acceptance cycle"
check "mutant: the sweeper ignores the holders' vouches" fail "-DNO_VOUCH" "-DSAFETY -DNOCLAIM" "-m200000" "assertion violated"
check "mutant: a vouch that never runs out" fail "-DENDLESS_VOUCH" "-DNFAIR=5" "-a -f -N ends -m200000" "acceptance cycle"

exit $failures
