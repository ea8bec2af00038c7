#!/usr/bin/env bash
# Model-checks Workrow's protocols with spin: the batch protocol of the write-once layout
# (queue-faults/model/batch-protocol.pml, docs/storage-layout.md) and the cluster-wide concurrency
# cap by shares (queue-faults/model/cap-protocol.pml, docs/patterns.md): the safety properties over every
# reachable state, the batch protocol's liveness under weak fairness, and mutants that must each be
# caught, so that the checks are shown able to fail.
#
#   queue-faults/scripts/model-check.sh
#
# Needs spin (Debian package spin) and a C compiler. Prints one line per check; exits non-zero
# when a property fails or a mutant passes.
set -euo pipefail
models="$(cd "$(dirname "$0")/../model" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# check MODEL NAME EXPECT(pass|fail) "SPIN DEFINES" "CC DEFINES" "PAN FLAGS" [WHAT A FAILURE MUST SAY]
# Runs in the current directory; returns non-zero when the outcome is not the expected one.
check() {
    local model=$models/$1-protocol.pml name="$1: $2" expect=$3 defines=$4 cc=$5 flags=$6 says=${7:-}
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
        return 1
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
        return 1
    fi
}

# The checks are independent: run them side by side, one per core, each in a directory of its own,
# and print their lines in the order they were scheduled.
parallel=$(nproc 2>/dev/null || echo 2)
scheduled=0
schedule() {
    scheduled=$((scheduled + 1))
    mkdir "$work/$scheduled"
    (cd "$work/$scheduled" && check "$@"; echo $? >"$work/$scheduled.status") >"$work/$scheduled.out" 2>&1 &
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do
        wait -n || true
    done
}

# The batch protocol's verifiers keep their states compressed (-DCOLLAPSE): 2 jobs, 2 workers. Its
# liveness runs without graceful stops and resent statements: both only settle jobs, so neither
# can keep one from ending, and without them the check takes seconds instead of six minutes.
quiet="-DMAX_STOPS=0 -DMAX_RESENDS=0"
safety="-DSAFETY -DNOCLAIM -DCOLLAPSE"
liveness="-DNFAIR=5 -DCOLLAPSE"
schedule batch "safety: one home per job, ends fenced by the claim row, completed at most once, no lease lapses under a live holder" pass "" "$safety" "-m200000"
schedule batch "liveness: every job ends completed, dead or cancelled (weak fairness)" pass "$quiet" "$liveness" "-a -f -N ends -m400000"
schedule batch "mutant: an end checks that the job runs, not its claim row" fail "-DUNFENCED" "$safety" "-m200000" "assertion violated"
schedule batch "mutant: an end ignores the settled bit (a statement sent again counts twice)" fail "-DUNSETTLED" "$safety" "-m200000" "assertion violated"
schedule batch "mutant: a claim takes a job that is not ready" fail "-DUNCHECKED_CLAIM" "$safety" "-m200000" "assertion violated"
schedule batch "mutant: cancelling a running job does not mark it dropped" fail "-DCANCEL_UNMARKED" "$safety" "-m200000" "assertion violated"
schedule batch "mutant: the sweeper ignores the holders' vouches" fail "-DNO_VOUCH" "$safety" "-m200000" "assertion violated"
schedule batch "mutant: no sweeper" fail "-DNO_SWEEPER $quiet" "$liveness" "-a -f -N ends -m400000" "acceptance cycle"
schedule batch "mutant: a vouch that never runs out" fail "-DENDLESS_VOUCH $quiet" "$liveness" "-a -f -N ends -m400000" "acceptance cycle"

# The cluster-wide cap by shares: 2 nodes of 2 slots, a cap of 2, 3 jobs (cap-protocol.pml).
schedule cap "safety: never more handlers running than the cap, nor live shares above it" pass "" "$safety" "-m200000"
schedule cap "mutant: the read of the other's share and the write of one's own are two steps, without the lock" fail "-DUNLOCKED" "$safety" "-m200000" "assertion violated"
schedule cap "mutant: a share written below what the node runs" fail "-DNO_FLOOR" "$safety" "-m200000" "assertion violated"
schedule cap "mutant: handler threads take slots while a change reads the floor" fail "-DUNFROZEN" "$safety" "-m200000" "assertion violated"

wait
failures=0
for n in $(seq 1 "$scheduled"); do
    cat "$work/$n.out"
    [ "$(cat "$work/$n.status" 2>/dev/null)" = 0 ] || failures=$((failures + 1))
done
exit $failures
