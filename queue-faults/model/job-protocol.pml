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
 *   - a lease never lapses under a live holder: the sweeper never takes the job from a worker
 *     that still holds it and renewed it within the last lease, even while another session (an
 *     operator's open transaction) keeps the row locked and so the row's own expiry runs out;
 *   - the job is never lost: while workers keep taking steps it ends completed or dead (ltl ends,
 *     under weak fairness).
 * Mutants that must fail: -DUNFENCED (finalize without the token), -DUNCHECKED_CLAIM (a claim
 * that locks a row without checking it is still pending), -DNO_SWEEPER (no sweep), -DNO_VOUCH (the
 * sweeper ignores the holders' vouches: a locked row's lease lapses under its live holder), and
 * -DENDLESS_VOUCH (a vouch that never runs out: a crashed holder's job is never recovered).
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
#define MAX_LOCKS 1      /* an operator's transaction locking the running row, in all */
#define MAX_LETGO 1      /* handlers let go past their timeout (they ignore the interrupt), in all */

mtype = { PENDING, RUNNING, COMPLETED, DEAD };

/* The row in workrow_job. */
mtype status = PENDING;
byte token = 0;          /* lease_token; 0 stands for NULL */
byte seq = 0;            /* workrow_lease_token_seq */
byte lease = 0;          /* ticks left until lease_expires_at */
byte attempts = 0;
byte expiries = 0;       /* lease_expiries */
bool apart;              /* the queue has max-lease-expiries: an expiry gives its attempt back */
bool locked;             /* another session holds the row lock: SKIP LOCKED statements pass it by */

/* workrow_lease_holder, one row per worker: the token its last renewal listed, and for how many
   ticks that renewal vouches for it. */
byte vouched[WORKERS + 1];
byte vouch[WORKERS + 1];

/* Ghost state, for the properties only. */
byte holder = 0;         /* the worker whose claim granted the current token */
byte completions = 0;
byte crashes = 0;
byte stops = 0;
byte locks = 0;
byte letgos = 0;
byte held[WORKERS + 1];      /* each worker's in-flight token (its local mine) */
bool renewing[WORKERS + 1];  /* the worker renews what it holds (not let go) */
byte since[WORKERS + 1];     /* ticks since the worker's last renewal */

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
    bool letgo = false;  /* its lease was let go (handler past its timeout) */
end:
    do
#ifdef UNCHECKED_CLAIM
    :: atomic { mine == 0 && status != DEAD ->
#else
    :: atomic { mine == 0 && status == PENDING ->
#endif
           /* JobSql.JOB_CLAIM: a pending row, locked with SKIP LOCKED, gets a new token. */
           seq++; token = seq; status = RUNNING; lease = LEASE; attempts++;
           holder = me; mine = token; beats = 0; letgo = false;
           held[me] = mine; renewing[me] = true; since[me] = 0; ROW_OK }
    :: atomic { mine != 0 && !letgo && beats < MAX_BEATS ->
           /* JobSql.JOB_RENEW_LEASES (LeaseKeeper): the holder row vouches for the token, and
              the job row, unless locked elsewhere (SKIP LOCKED), gets its expiry moved on. */
           beats++;
           vouched[me] = mine; vouch[me] = LEASE; since[me] = 0;
           if
           :: locked && token == mine -> skip   /* JOB_HOLDERS: still ours, renewed next time */
           :: !locked && OWNS(mine) -> lease = LEASE
           :: else -> mine = 0; held[me] = 0; renewing[me] = false
                      /* the lease is lost: the handler is interrupted, nothing is written */
           fi; ROW_OK }
    :: atomic { mine != 0 && !letgo && letgos < MAX_LETGO ->
           /* LeaseKeeper.enforceTimeouts: the handler ignored the interrupt one lease past its
              timeout; its lease is no longer renewed, while the handler may still finish. */
           letgos++; letgo = true; renewing[me] = false; ROW_OK }
    :: atomic { mine != 0 && !locked ->
           /* JobSql.JOB_COMPLETE_MANY, JOB_COMPLETE: fenced by the token (a locked row waits). */
           if
           :: OWNS(mine) -> ACCEPTED(me); completions++;
                  status = COMPLETED; token = 0; holder = 0
           :: else -> skip       /* a stale owner's late result is refused */
           fi;
           mine = 0; held[me] = 0; renewing[me] = false; ROW_OK }
    :: atomic { mine != 0 && !locked ->
           /* JobSql.JOB_FAIL_MANY: retried while attempts are left, else dead. */
           if
           :: OWNS(mine) -> ACCEPTED(me); token = 0; holder = 0;
                  if
                  :: attempts >= MAX_ATTEMPTS -> status = DEAD
                  :: else -> status = PENDING
                  fi
           :: else -> skip
           fi;
           mine = 0; held[me] = 0; renewing[me] = false; ROW_OK }
    :: atomic { mine != 0 && !locked && stops < MAX_STOPS ->
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
           mine = 0; held[me] = 0; renewing[me] = false; ROW_OK }
    :: atomic { mine != 0 && crashes < MAX_CRASHES ->
           /* kill -9: the worker's memory is gone; the row keeps its lease until it expires. */
           crashes++; mine = 0; held[me] = 0; renewing[me] = false; ROW_OK }
    od
}

/* The database's clock: a running job's lease runs down unless renewed. */
active proctype Clock() {
    byte w;
end:
    do
    :: atomic { (status == RUNNING && lease > 0) || vouch[1] > 0 || vouch[2] > 0 || vouch[WORKERS] > 0 ->
           if
           :: status == RUNNING && lease > 0 -> lease--
           :: else -> skip
           fi;
           w = 1;
           do
           :: w <= WORKERS ->
                  if
                  :: vouch[w] > 0 ->
#ifndef ENDLESS_VOUCH
                         vouch[w]--;
#endif
                         skip
                  :: else -> skip
                  fi;
                  if
                  :: since[w] < LEASE -> since[w]++
                  :: else -> skip
                  fi;
                  w++
           :: else -> break
           od; w = 0; ROW_OK }
    od
}

/* Another session (psql) takes the running row's lock and, later, lets it go. */
active proctype Operator() {
end:
    do
    :: atomic { !locked && status == RUNNING && locks < MAX_LOCKS -> locks++; locked = true }
    :: atomic { locked -> locked = false }
    od
}

#ifndef NO_SWEEPER
/* JobSql.JOB_SWEEP_EXPIRED_LEASES, run by every node: only leases that have expired. */
active proctype Sweeper() {
end:
    do
#ifdef NO_VOUCH
    :: atomic { status == RUNNING && lease == 0 && !locked ->
#else
    :: atomic { status == RUNNING && lease == 0 && !locked && !(vouch[holder] > 0 && vouched[holder] == token) ->
#endif
           /* A live holder that renewed within the lease still holds the job. */
           assert(!(held[holder] == token && renewing[holder] && since[holder] < LEASE));
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
