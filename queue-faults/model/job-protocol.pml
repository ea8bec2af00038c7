/*
 * Workrow's job protocol, one job row worked by several workers that crash, pause and stop.
 *
 * Each action is one SQL statement (JobSql) and runs atomically, as a statement on one row does.
 * Time is a lease that runs down in ticks while nobody acts: a worker that takes no step while
 * the lease runs out is a paused (SIGSTOP) or slow worker, and its later steps are the late ones.
 * A crashed worker (kill -9) forgets what it held and starts again with nothing.
 *
 * Checked by queue-faults/scripts/model-check.sh, the first three as assertions after every
 * step, in every state (a process waiting in its loop once the job has ended is a valid end):
 *   - an accepted finalize (complete, fail, release) always comes from the worker whose claim
 *     granted the current lease, never from a stale owner;
 *   - the job is completed at most once;
 *   - the row has a token exactly while it runs (the check constraint
 *     workrow_job_token_only_while_running), so nothing is held that does not run;
 *   - the job is never lost: while workers keep taking steps it ends completed or dead (ltl ends,
 *     under weak fairness).
 * Mutants that must fail: -DUNFENCED (finalize without the token), -DUNCHECKED_CLAIM (a claim
 * that locks a row without checking it is still pending), -DNO_SWEEPER (no sweep).
 */

#ifndef WORKERS
#define WORKERS 3
#endif
#define LEASE 2          /* ticks a lease lasts without a renewal */
#define MAX_ATTEMPTS 2   /* max_attempts */
#define MAX_EXPIRIES 2   /* the queue's max-lease-expiries, when it has one */
#define MAX_CRASHES 2    /* kill -9 of a worker holding the job, in all */
#define MAX_STOPS 2      /* graceful shutdowns of a worker holding the job, in all */
#define MAX_BEATS 2      /* renewals per claim: handlers end */

mtype = { PENDING, RUNNING, COMPLETED, DEAD };

/* The row in workrow_job. */
mtype status = PENDING;
byte token = 0;          /* lease_token; 0 stands for NULL */
byte seq = 0;            /* workrow_lease_token_seq */
byte lease = 0;          /* ticks left until lease_expires_at */
byte attempts = 0;
byte expiries = 0;       /* lease_expiries */
bool apart;              /* the queue has max-lease-expiries: an expiry gives its attempt back */

/* Ghost state, for the properties only. */
byte holder = 0;         /* the worker whose claim granted the current token */
byte completions = 0;
byte crashes = 0;
byte stops = 0;

#ifdef UNFENCED
#define OWNS(mine) (status == RUNNING)
#else
#define OWNS(mine) (token == mine)
#endif

/* What every finalize asserts when the row accepts it: the finalizing worker holds the lease. */
#define ACCEPTED(me) assert(status == RUNNING && holder == me)

/* What must hold after every statement. */
#define ROW_OK assert(((token != 0) == (status == RUNNING)) && completions <= 1 && (status != RUNNING || holder != 0))

proctype Worker(byte me) {
    byte mine = 0;       /* the token of the job this worker holds (its in-flight entry) */
    byte beats = 0;
end:
    do
#ifdef UNCHECKED_CLAIM
    :: atomic { mine == 0 && status != DEAD ->
#else
    :: atomic { mine == 0 && status == PENDING ->
#endif
           /* JobSql.JOB_CLAIM: a pending row, locked with SKIP LOCKED, gets a new token. */
           seq++; token = seq; status = RUNNING; lease = LEASE; attempts++;
           holder = me; mine = token; beats = 0; ROW_OK }
    :: atomic { mine != 0 && beats < MAX_BEATS ->
           /* JobSql.JOB_RENEW_LEASES (LeaseKeeper) and JOB_EXTEND_LEASE (heartbeat), fenced. */
           beats++;
           if
           :: OWNS(mine) -> lease = LEASE
           :: else -> mine = 0   /* the lease is lost: the handler is interrupted, nothing is written */
           fi; ROW_OK }
    :: atomic { mine != 0 ->
           /* JobSql.JOB_COMPLETE_MANY, JOB_COMPLETE: fenced by the token. */
           if
           :: OWNS(mine) -> ACCEPTED(me); completions++;
                  status = COMPLETED; token = 0; holder = 0
           :: else -> skip       /* a stale owner's late result is refused */
           fi;
           mine = 0; ROW_OK }
    :: atomic { mine != 0 ->
           /* JobSql.JOB_FAIL_MANY: retried while attempts are left, else dead. */
           if
           :: OWNS(mine) -> ACCEPTED(me); token = 0; holder = 0;
                  if
                  :: attempts >= MAX_ATTEMPTS -> status = DEAD
                  :: else -> status = PENDING
                  fi
           :: else -> skip
           fi;
           mine = 0; ROW_OK }
    :: atomic { mine != 0 && stops < MAX_STOPS ->
           /* JobSql.JOB_RELEASE_MANY at shutdown: unstarted jobs get their attempt back,
              interrupted ones keep it and are dead when it was their last. */
           stops++;
           if
           :: OWNS(mine) -> ACCEPTED(me); token = 0; holder = 0;
                  if
                  :: attempts--; status = PENDING
                  :: attempts >= MAX_ATTEMPTS -> status = DEAD
                  :: attempts < MAX_ATTEMPTS -> status = PENDING
                  fi
           :: else -> skip
           fi;
           mine = 0; ROW_OK }
    :: atomic { mine != 0 && crashes < MAX_CRASHES ->
           /* kill -9: the worker's memory is gone; the row keeps its lease until it expires. */
           crashes++; mine = 0; ROW_OK }
    od
}

/* The database's clock: a running job's lease runs down unless renewed. */
active proctype Clock() {
end:
    do
    :: atomic { status == RUNNING && lease > 0 -> lease--; ROW_OK }
    od
}

#ifndef NO_SWEEPER
/* JobSql.JOB_SWEEP_EXPIRED_LEASES, run by every node: only leases that have expired. */
active proctype Sweeper() {
end:
    do
    :: atomic { status == RUNNING && lease == 0 ->
           expiries++; token = 0; holder = 0;
           if
           :: apart && expiries >= MAX_EXPIRIES -> attempts--; status = DEAD
           :: apart && expiries < MAX_EXPIRIES -> attempts--; status = PENDING
           :: !apart && attempts >= MAX_ATTEMPTS -> status = DEAD
           :: !apart && attempts < MAX_ATTEMPTS -> status = PENDING
           fi; ROW_OK }
    od
}
#endif

init {
    atomic {
        if
        :: apart = true
        :: apart = false
        fi;
        byte w = 1;
        do
        :: w <= WORKERS -> run Worker(w); w++
        :: else -> break
        od
    }
}

ltl ends { <> (status == COMPLETED || status == DEAD) }
