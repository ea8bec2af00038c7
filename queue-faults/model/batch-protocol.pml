/*
 * The batch protocol of the next storage layout (docs/storage-layout.md): jobs are claimed in
 * batches, each batch is one claim row that is the lease and the fence of all its jobs, and each
 * job of it settles on its own, in whichever statement its result arrives.
 *
 * Two jobs, worked by two workers that claim every ready job at once (one or both), crash, pause
 * (take no step), stop, send an end statement again after losing its reply, and let a handler go
 * past its timeout (its position ended as expired while it runs on); an operator cancels a job
 * and holds a claim row locked in an open transaction. Each action is one SQL statement and runs
 * atomically. Time is a lease that runs down in ticks while nobody acts.
 *
 * A job's home is where its live row is: READY (workrow_ready), CLAIMED (an open position of a
 * workrow_claim row), DEAD (workrow_dead), COMPLETED or CANCELLED (its last outcome row). A claim
 * row holds its jobs (ids), the positions that settled (settled) and the ones an operator
 * cancelled (dropped); it is deleted when no position is open.
 *
 * Checked by queue-faults/scripts/model-check.sh, as assertions after every step:
 *   - every job is in exactly one home: CLAIMED exactly while one claim row lists it open, and no
 *     claim row lists it open otherwise; no claim row outlives its last open position;
 *   - an accepted end (complete, fail, release, let-go) comes from the worker whose claim row
 *     holds the job open, never from a stale owner, a cancelled job's handler, a let-go
 *     handler's late end, or a statement sent again;
 *   - each job is completed at most once;
 *   - a lease never lapses under a live holder: the sweeper never takes a claim from a worker
 *     that still holds it and renewed it within the last lease, even while an operator's open
 *     transaction keeps the claim row locked;
 * and, under weak fairness, every job ends completed, dead or cancelled (ltl ends; checked
 * with MAX_STOPS and MAX_RESENDS 0, since both only settle jobs).
 * Mutants that must fail: -DUNFENCED (an end checks only that the job runs, not its claim row),
 * -DUNSETTLED (an end checks the claim row but not the job's settled bit, so a statement sent
 * again counts twice), -DUNCHECKED_CLAIM (a claim takes a job that is not ready),
 * -DCANCEL_UNMARKED (cancelling a running job does not mark its position dropped), -DNO_VOUCH
 * (the sweeper ignores the holders' vouches), -DNO_SWEEPER and -DENDLESS_VOUCH (a crashed
 * worker's jobs are never recovered).
 */

#define WORKERS 2
#define JOBS 2
#define CLAIMS 2         /* claim rows at once: a row holds at least one open job, and there are two */
#define LEASE 1          /* ticks a lease lasts without a renewal */
#define MAX_ATTEMPTS 2
#ifndef MAX_CRASHES
#define MAX_CRASHES 1    /* kill -9 of a worker holding a claim, in all */
#endif
#ifndef MAX_STOPS
#define MAX_STOPS 1      /* graceful shutdowns of a worker holding a claim, in all */
#endif
#ifndef MAX_BEATS
#define MAX_BEATS 2      /* renewals per claim: handlers end */
#endif
#ifndef MAX_LOCKS
#define MAX_LOCKS 1      /* an operator's transaction holding a claim row locked, in all */
#endif
#ifndef MAX_LETGO
#define MAX_LETGO 1      /* handlers let go past their timeout (positions ended as expired), in all */
#endif
#ifndef MAX_CANCELS
#define MAX_CANCELS 1    /* operator cancels, in all */
#endif
#ifndef MAX_RESENDS
#define MAX_RESENDS 1    /* end statements sent again after a lost reply, in all */
#endif

mtype = { READY, CLAIMED, DEAD, COMPLETED, CANCELLED };

/* The jobs' homes and counters. */
mtype home[JOBS];
byte attempts[JOBS];
byte in_claim[JOBS];     /* ghost: the claim slot + 1 that holds the job open, 0 when none */
byte completions[JOBS];  /* ghost */

/* workrow_claim: a slot with token 0 is no row. Jobs are bits: job j is (1 << j). */
byte token[CLAIMS];
byte worker[CLAIMS];
byte lease[CLAIMS];
byte ids[CLAIMS];
byte settled[CLAIMS];
byte dropped[CLAIMS];
bool locked[CLAIMS];     /* another session holds the row lock */

/* workrow_lease_holder: the token each worker's last renewal listed, and for how many ticks. */
byte vouched[WORKERS + 1];
byte vouch[WORKERS + 1];

/* Ghost state of the workers, for the properties. */
byte held[WORKERS + 1];      /* the token each worker holds (its mine) */
byte sent[WORKERS + 1];      /* the token of the end statement each worker may send again */
byte since[WORKERS + 1];     /* ticks since the worker's last renewal */
byte crashes = 0;
byte stops = 0;
byte locks = 0;
byte letgos = 0;
byte cancels = 0;
byte resends = 0;

#define BIT(j) (1 << (j))
#define OPEN(s) (ids[s] & ~(settled[s] | dropped[s]))
#define FINISHED(j) (home[j] == COMPLETED || home[j] == DEAD || home[j] == CANCELLED)
#define LOCKED_ROW(t) ((token[0] == (t) && locked[0]) || (token[1] == (t) && locked[1]))
/* A job an operator can cancel now: waiting, or running on a claim row no other session has
   locked (JOB_CANCEL waits for the row lock). */
#define CANCELLABLE(j) (home[j] == READY || (home[j] == CLAIMED && !locked[in_claim[j] - 1]))
#define VOUCHED(s) (vouch[worker[s]] > 0 && vouched[worker[s]] == token[s])

/* The slot of the claim row with token t (t != 0), CLAIMS when there is none. */
#define SLOT_OF(t) (token[0] == (t) -> 0 : (token[1] == (t) -> 1 : CLAIMS))

/* What must hold after every statement: the job is CLAIMED exactly while a claim row holds it
   open (and then that one), it completed at most once, and every claim row has an open job. */
#define JOB_OK(j) (completions[j] <= 1 && (home[j] == CLAIMED) == (in_claim[j] != 0) && \
                   (in_claim[j] == 0 || (token[in_claim[j] - 1] != 0 && (OPEN(in_claim[j] - 1) & BIT(j)) != 0)))
#define ROW_OK(s) (token[s] == 0 || (OPEN(s) != 0 && \
                   ((OPEN(s) & BIT(0)) == 0 || in_claim[0] == s + 1) && ((OPEN(s) & BIT(1)) == 0 || in_claim[1] == s + 1)))
#define rows_ok() assert(JOB_OK(0) && JOB_OK(1) && ROW_OK(0) && ROW_OK(1))

/* workrow_lease_token_seq hands out tokens never seen before. The model draws the smallest
   token that no row, worker, holder row or statement in flight remembers, which no one can tell
   from a new one, and so keeps the states finite. */
#define IN_USE(t) (token[0] == (t) || token[1] == (t) || held[1] == (t) || held[2] == (t) || \
                   sent[1] == (t) || sent[2] == (t) || vouched[1] == (t) || vouched[2] == (t))
hidden byte fresh;
inline take_token() {
    fresh = 1;
    do
    :: IN_USE(fresh) -> fresh++
    :: else -> break
    od
}

/* Scratch of one atomic step, set before it is read and never carried to the next state. */
hidden byte s;
hidden byte j;
hidden byte take;
hidden byte ok;
hidden mtype how;

/* Deletes claim row s once no position of it is open. */
inline close_if_settled(s) {
    if
    :: OPEN(s) == 0 -> token[s] = 0; worker[s] = 0; lease[s] = 0; ids[s] = 0; settled[s] = 0;
                       dropped[s] = 0; locked[s] = false
    :: else -> skip
    fi
}

/* The fence of an end of job j sent under token t: the claim row exists, lists the job, and the
   job's position is neither settled nor dropped. Sets s to the row's slot and ok to the verdict. */
inline fence(t, j, s, ok) {
    s = SLOT_OF(t);
#ifdef UNFENCED
    ok = (home[j] == CLAIMED);
    s = in_claim[j] - 1;
#else
#ifdef UNSETTLED
    ok = (s < CLAIMS && (ids[s] & BIT(j)) != 0);
#else
    ok = (s < CLAIMS && (OPEN(s) & BIT(j)) != 0);
#endif
#endif
}

/* What every accepted end asserts: the job is held open by the sender's own claim. */
#define ACCEPTED(j, me, t) assert(home[j] == CLAIMED && token[in_claim[j] - 1] == (t) && worker[in_claim[j] - 1] == (me))

/* Settles job j on slot s: completed, or back to ready (failed, released, swept) unless that was
   its last attempt, which makes it dead. */
inline settle(j, s, how) {
    settled[s] = settled[s] | BIT(j);
    in_claim[j] = 0;
    if
    :: how == COMPLETED -> completions[j]++; home[j] = COMPLETED
    :: how == READY && attempts[j] >= MAX_ATTEMPTS -> home[j] = DEAD
    :: how == READY && attempts[j] < MAX_ATTEMPTS -> home[j] = READY
    fi;
    close_if_settled(s)
}

/* Releases job jj of the worker's claim at shutdown, fenced like every end. The model releases
   only jobs whose handlers never started, which get their attempt back; an interrupted handler's
   release keeps its attempt, which is the failed end above. Reads the worker's me and mine. */
inline release(jj) {
    fence(mine, jj, s, ok);
    if
    :: ok -> ACCEPTED(jj, me, mine); attempts[jj]--; settle(jj, s, READY)
    :: else -> skip
    fi
}

/* A worker whose handlers have all ended holds nothing; it may claim again. */
#define done_if_idle() if :: running == 0 -> mine = 0; held[me] = 0 :: else -> skip fi

proctype Worker(byte me) {
    byte mine = 0;       /* the token of the claim it holds */
    byte running = 0;    /* the jobs of that claim whose handlers have not ended */
    byte beats = 0;
    byte sent_job = 0;   /* the last end statement it sent: sent[me], the job, the outcome */
    mtype sent_how = COMPLETED;
end:
    do
    :: atomic { mine == 0 && (home[0] == READY || home[1] == READY
#ifdef UNCHECKED_CLAIM
                              || home[0] == CLAIMED || home[1] == CLAIMED
#endif
                             ) && (token[0] == 0 || token[1] == 0) ->
           /* JOB_CLAIM: takes every ready job (its limit is above the backlog) into a new
              claim row. */
           take = 0;
#ifdef UNCHECKED_CLAIM
           if :: home[0] == READY || home[0] == CLAIMED -> take = BIT(0) :: else -> skip fi;
           if :: home[1] == READY || home[1] == CLAIMED -> take = take | BIT(1) :: else -> skip fi;
#else
           if :: home[0] == READY -> take = BIT(0) :: else -> skip fi;
           if :: home[1] == READY -> take = take | BIT(1) :: else -> skip fi;
#endif
           s = (token[0] == 0 -> 0 : 1);
           take_token(); token[s] = fresh; worker[s] = me; lease[s] = LEASE; ids[s] = take;
           settled[s] = 0; dropped[s] = 0; locked[s] = false;
           if :: take & BIT(0) -> home[0] = CLAIMED; in_claim[0] = s + 1; attempts[0]++ :: else -> skip fi;
           if :: take & BIT(1) -> home[1] = CLAIMED; in_claim[1] = s + 1; attempts[1]++ :: else -> skip fi;
           mine = fresh; running = take; beats = 0;
           held[me] = mine; since[me] = 0;
           rows_ok() }
    :: atomic { mine != 0 && running != 0 && !LOCKED_ROW(mine) ->
           /* JOB_END_MANY for one of its jobs: completed, or failed (retried, or dead on its last
              attempt). */
           if
           :: running & BIT(0) -> j = 0
           :: running & BIT(1) -> j = 1
           fi;
           if
           :: how = COMPLETED
           :: how = READY       /* failed: retried, or dead when it was the last attempt */
           fi;
           fence(mine, j, s, ok);
           if
           :: ok -> ACCEPTED(j, me, mine); settle(j, s, how);
                    if
                    :: resends < MAX_RESENDS -> sent[me] = mine; sent_job = j; sent_how = how
                    :: else -> skip
                    fi
           :: else -> skip     /* refused: the claim was swept or the job cancelled */
           fi;
           running = running & ~BIT(j);
           done_if_idle();
           rows_ok() }
    :: atomic { sent[me] != 0 && resends < MAX_RESENDS && !LOCKED_ROW(sent[me]) ->
           /* The reply to an accepted end was lost and the result writer sends it again. */
           resends++;
           fence(sent[me], sent_job, s, ok);
           if
           :: ok -> ACCEPTED(sent_job, me, sent[me]); settle(sent_job, s, sent_how)
           :: else -> skip
           fi;
           sent[me] = 0; sent_job = 0; sent_how = COMPLETED;
           rows_ok() }
    :: atomic { mine != 0 && beats < MAX_BEATS ->
           /* JOB_RENEW_LEASES: the holder row vouches for the claim, and the claim row, unless
              locked elsewhere (SKIP LOCKED), gets its expiry moved on; the jobs dropped from it
              have their handlers interrupted. */
           beats++;
           vouched[me] = mine; vouch[me] = LEASE; since[me] = 0;
           s = SLOT_OF(mine);
           if
           :: s < CLAIMS && locked[s] -> skip       /* JOB_HOLDERS: still ours, renewed next time */
           :: s < CLAIMS && !locked[s] -> lease[s] = LEASE; running = running & ~dropped[s]
           :: else -> running = 0                    /* the claim is gone: every handler stops */
           fi;
           done_if_idle();
           rows_ok() }
    :: atomic { mine != 0 && running != 0 && letgos < MAX_LETGO && !LOCKED_ROW(mine) ->
           /* A handler ignored its interrupt one lease past its timeout: the runtime ends its
              position itself, as expired (JOB_END_MANY), and keeps renewing the batch for the
              others. The handler runs on, and its late end is the statement sent again below,
              which the settled bit must refuse. */
           letgos++;
           if
           :: running & BIT(0) -> j = 0
           :: running & BIT(1) -> j = 1
           fi;
           fence(mine, j, s, ok);
           if
           :: ok -> ACCEPTED(j, me, mine); settle(j, s, READY);
                    if
                    :: resends < MAX_RESENDS -> sent[me] = mine; sent_job = j; sent_how = COMPLETED
                    :: else -> skip
                    fi
           :: else -> skip
           fi;
           running = running & ~BIT(j);
           done_if_idle();
           rows_ok() }
    :: atomic { mine != 0 && stops < MAX_STOPS && !LOCKED_ROW(mine) ->
           /* JOB_END_MANY at shutdown: every job still held is released in one statement. */
           stops++;
           if :: running & BIT(0) -> release(0) :: else -> skip fi;
           if :: running & BIT(1) -> release(1) :: else -> skip fi;
           mine = 0; running = 0; held[me] = 0; sent[me] = 0; sent_job = 0; sent_how = COMPLETED;
           rows_ok() }
    :: atomic { mine != 0 && crashes < MAX_CRASHES ->
           /* kill -9: the worker forgets what it held; the claim row keeps its lease. */
           crashes++; mine = 0; running = 0; held[me] = 0; sent[me] = 0; sent_job = 0; sent_how = COMPLETED;
           rows_ok() }
    od
}

/* The database's clock: every claim row's lease and every holder's vouch run down. */
#ifdef ENDLESS_VOUCH
#define VOUCH_RUNS_DOWN(w) skip
#else
#define VOUCH_RUNS_DOWN(w) if :: vouch[w] > 1 -> vouch[w]-- :: vouch[w] == 1 -> vouch[w] = 0; vouched[w] = 0 :: else -> skip fi
#endif
#define LEASE_RUNS_DOWN(s) if :: lease[s] > 0 -> lease[s]-- :: else -> skip fi
#define TIME_PASSES(w) if :: since[w] < LEASE -> since[w]++ :: else -> skip fi

active proctype Clock() {
end:
    do
    :: atomic { lease[0] > 0 || lease[1] > 0 || vouch[1] > 0 || vouch[2] > 0 ->
           LEASE_RUNS_DOWN(0); LEASE_RUNS_DOWN(1);
           VOUCH_RUNS_DOWN(1); VOUCH_RUNS_DOWN(2);
           TIME_PASSES(1); TIME_PASSES(2);
           rows_ok() }
    od
}

/* An operator: holds a claim row locked in an open psql transaction for a while, and cancels a
   job, waiting or running (JOB_CANCEL: the running job's position is marked dropped). */
active proctype Operator() {
end:
    do
    :: atomic { locks < MAX_LOCKS && (token[0] != 0 || token[1] != 0) ->
           locks++;
           if
           :: token[0] != 0 -> locked[0] = true
           :: token[1] != 0 -> locked[1] = true
           fi }
    :: atomic { locked[0] || locked[1] ->
           locked[0] = false; locked[1] = false }
    :: atomic { cancels < MAX_CANCELS && (CANCELLABLE(0) || CANCELLABLE(1)) ->
           cancels++;
           if
           :: CANCELLABLE(0) -> j = 0
           :: CANCELLABLE(1) -> j = 1
           fi;
           if
           :: home[j] == CLAIMED ->
                  s = in_claim[j] - 1;
#ifdef CANCEL_UNMARKED
                  home[j] = CANCELLED   /* its outcome is written, its claim still holds it open */
#else
                  dropped[s] = dropped[s] | BIT(j);
                  in_claim[j] = 0;
                  home[j] = CANCELLED;
                  close_if_settled(s)
#endif
           :: else -> home[j] = CANCELLED
           fi;
           rows_ok() }
    od
}

#ifndef NO_SWEEPER
/* JOB_SWEEP_EXPIRED_LEASES, on every node: claim rows whose lease ran out and whose holder no
   longer vouches for them; their open jobs go back to ready (or dead), the row is deleted. */
active proctype Sweeper() {
end:
    do
    :: atomic {
#ifdef NO_VOUCH
           (token[0] != 0 && lease[0] == 0 && !locked[0]) ||
           (token[1] != 0 && lease[1] == 0 && !locked[1]) ->
#else
           (token[0] != 0 && lease[0] == 0 && !locked[0] && !VOUCHED(0)) ||
           (token[1] != 0 && lease[1] == 0 && !locked[1] && !VOUCHED(1)) ->
#endif
           if
#ifdef NO_VOUCH
           :: token[0] != 0 && lease[0] == 0 && !locked[0] -> s = 0
           :: token[1] != 0 && lease[1] == 0 && !locked[1] -> s = 1
#else
           :: token[0] != 0 && lease[0] == 0 && !locked[0] && !VOUCHED(0) -> s = 0
           :: token[1] != 0 && lease[1] == 0 && !locked[1] && !VOUCHED(1) -> s = 1
#endif
           fi;
           /* A live holder that renewed within the lease still holds its claim. */
           assert(!(held[worker[s]] == token[s] && since[worker[s]] < LEASE));
           if :: OPEN(s) & BIT(0) -> settle(0, s, READY) :: else -> skip fi;
           if :: OPEN(s) & BIT(1) -> settle(1, s, READY) :: else -> skip fi;
           rows_ok() }
    od
}
#endif

init {
    atomic {
        home[0] = READY;
        home[1] = READY;
        byte w = 1;
        do
        :: w <= WORKERS -> run Worker(w); w++
        :: else -> break
        od
    }
}

ltl ends { <> (FINISHED(0) && FINISHED(1)) }
