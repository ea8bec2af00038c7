/*
 * The cluster-wide concurrency cap by shares (docs/patterns.md, "Cluster-wide concurrency caps"):
 * each node holds a share of the cap (workrow_cap_share) and starts at most its limit of the
 * queue's jobs at once; jobs claimed ahead wait in its line and hold no share.
 *
 * Two nodes of two handler slots each, a cap of two, three jobs. A node changes its share in two
 * steps, as CapShare.change does: it stops its handler threads from taking new slots and reads how
 * many hold one (its floor), then, under the queue's cap row lock (one atomic step), reads the
 * other node's live share, decides what it wants (any number up to its slots: it may have work or
 * not), what it may keep (all it wants, or its fair part while the other waits for more than it
 * holds), what it may run (that, within what the other leaves) and writes its share as the larger
 * of that and its floor. A handler thread takes a slot to start a job from the line, within the
 * limit; when its job ends (completed, or ready again for another attempt) it takes the next job
 * in line without a new slot unless the node runs more than its limit, or it gives its slot back.
 * Claims put ready jobs in a node's line at any time. A node may crash: its handlers stop, its
 * jobs go back to ready (the sweeper, once their leases run out), and its share counts until it
 * lapses; a live node's share does not lapse (its lease keeper renews it with its leases).
 *
 * Checked by queue-faults/scripts/model-check.sh, as assertions after every step:
 *   - never more handlers running at once, on all nodes together, than the cap;
 *   - the live shares never add up to more than the cap.
 * A handler let go past its timeout runs on after its position is ended, and a node frozen past
 * its lease runs on after its share lapsed: both are outside this model, as docs/patterns.md says.
 * Mutants that must fail: -DUNLOCKED (the read of the other's share and the write of one's own are
 * two steps), -DNO_FLOOR (a share written below what the node runs), -DUNFROZEN (handler threads
 * take slots while a change reads the floor). That a node runs up to what it may run, not up to a
 * share written up to its floor, matters once another node holds what it held (its share lapsed,
 * or was deleted): GlobalConcurrencyTests checks it.
 */

#define NODES 2
#define SLOTS 2          /* handler slots per node */
#define CAP 2
#define JOBS 3
#ifndef MAX_RETRIES
#define MAX_RETRIES 1    /* ends that send a job back to ready for another attempt, in all */
#endif
#ifndef MAX_CRASHES
#define MAX_CRASHES 1    /* kill -9 of a node, in all */
#endif

mtype = { READY, LINED, RUNNING, DONE };

mtype state[JOBS];
byte owner[JOBS];                /* the node whose line holds the job, or that runs it */
byte retries;
byte crashes;

/* In the database: each node's share, what it wanted at its last change, whether its share counts. */
byte share[NODES];
byte wanted[NODES];
bool live[NODES];
/* In each node: threads holding a slot, how many may, whether a change is in flight and its floor. */
byte inUse[NODES];
byte limit[NODES];
bool changing[NODES];
byte floor[NODES];
bool crashed[NODES];

#define RUNS(k) (state[k] == RUNNING -> 1 : 0)

/* A slot is taken only while no change of the share is in flight (CapShare.tryAcquire). */
#ifdef UNFROZEN
#define FROZEN_FOR_CHANGE(n) true
#else
#define FROZEN_FOR_CHANGE(n) !changing[n]
#endif
#define SHARE(n) (live[n] -> share[n] : 0)

inline check() {
    assert(RUNS(0) + RUNS(1) + RUNS(2) <= CAP);
    assert(SHARE(0) + SHARE(1) <= CAP)
}

/* What node n may keep of the cap: all it wants, or its fair part while the other waits (CapShare.fairParts). */
inline keptPart(n, o, want, part) {
    if
    :: live[o] && wanted[o] > share[o] ->
        if
        :: want < wanted[o] || (want == wanted[o] && n < o) ->
            part = (want < (CAP + 1) / 2 -> want : (CAP + 1) / 2)
        :: else ->
            part = (wanted[o] < (CAP + 1) / 2 -> wanted[o] : (CAP + 1) / 2);
            part = (want < CAP - part -> want : CAP - part)
        fi
    :: else -> part = want
    fi
}

/* The change under the lock: what n may run within what the other leaves, and its share, never below its floor. */
inline decide(n, o, want, part, room, runs) {
    keptPart(n, o, want, part);
    room = CAP - SHARE(o);
    runs = (part < room -> part : room);
#ifdef NO_FLOOR
    share[n] = runs;
#else
    share[n] = (floor[n] > runs -> floor[n] : runs);
#endif
    wanted[n] = want;
    live[n] = true;
    limit[n] = runs
}

#define CLEAR j = 0; want = 0; part = 0; room = 0; runs = 0; seen = 0

proctype Node(byte n) {
    byte o = 1 - n;
    byte j, want, part, room, runs, seen;
    /* A crashed node whose share lapsed has nothing left to do: a valid end. */
end:
    do
    /* A change of the share, first step: no new slot is taken while it runs; the floor is read. */
    :: atomic { !crashed[n] && !changing[n] -> changing[n] = true; floor[n] = inUse[n]; check(); CLEAR }
    /* Second step, under the cap row's lock: read the other's share, decide, write, commit. */
#ifdef UNLOCKED
    :: atomic { !crashed[n] && changing[n] -> seen = SHARE(o); if :: want = 0 :: want = 1 :: want = 2 fi };
       atomic {
           keptPart(n, o, want, part);
           room = CAP - seen;
           runs = (part < room -> part : room);
           share[n] = (floor[n] > runs -> floor[n] : runs);
           wanted[n] = want;
           live[n] = true;
           limit[n] = runs;
           changing[n] = false;
           check();
           CLEAR
       }
#else
    :: atomic {
        !crashed[n] && changing[n] ->
        if :: want = 0 :: want = 1 :: want = 2 fi;
        decide(n, o, want, part, room, runs);
        changing[n] = false;
        check();
        CLEAR
    }
#endif
    /* A claim puts a ready job in the node's line (lines hold no share). */
    :: atomic {
        !crashed[n] ->
        j = 0;
        do
        :: j < JOBS && state[j] == READY -> state[j] = LINED; owner[j] = n; break
        :: j < JOBS && state[j] != READY -> j++
        :: j >= JOBS -> break
        od;
        check();
        CLEAR
    }
    /* A handler thread takes a slot (CapShare.tryAcquire) and starts the next job in line. */
    :: atomic {
        !crashed[n] && inUse[n] < SLOTS && inUse[n] < limit[n] && FROZEN_FOR_CHANGE(n) ->
        j = 0;
        do
        :: j < JOBS && owner[j] == n && state[j] == LINED -> state[j] = RUNNING; inUse[n]++; break
        :: j < JOBS && !(owner[j] == n && state[j] == LINED) -> j++
        :: j >= JOBS -> break
        od;
        check();
        CLEAR
    }
    /* A job ends (completed, or ready again); its thread takes the next in line unless the node
       runs more than its limit (CapShare.overdrawn), or gives its slot back. */
    :: atomic {
        !crashed[n] ->
        j = 0;
        do
        :: j < JOBS && owner[j] == n && state[j] == RUNNING ->
            if
            :: state[j] = DONE
            :: retries < MAX_RETRIES -> retries++; state[j] = READY
            fi;
            break
        :: j < JOBS && !(owner[j] == n && state[j] == RUNNING) -> j++
        :: j >= JOBS -> break
        od;
        if
        :: j < JOBS ->
            j = 0;
            do
            :: j < JOBS && inUse[n] <= limit[n] && owner[j] == n && state[j] == LINED -> state[j] = RUNNING; break
            :: j < JOBS && !(inUse[n] <= limit[n] && owner[j] == n && state[j] == LINED) -> j++
            :: j >= JOBS -> inUse[n]--; break
            od
        :: else -> skip
        fi;
        check();
        CLEAR
    }
    /* kill -9: the handlers stop; the jobs go back to ready once their leases run out. */
    :: atomic {
        !crashed[n] && crashes < MAX_CRASHES ->
        crashes++;
        crashed[n] = true;
        j = 0;
        do
        :: j < JOBS ->
            if :: owner[j] == n && (state[j] == LINED || state[j] == RUNNING) -> state[j] = READY; owner[j] = NODES
               :: else -> skip
            fi;
            j++
        :: else -> break
        od;
        inUse[n] = 0;
        check();
        CLEAR
    }
    /* A crashed node's share lapses: nothing renews it. */
    :: atomic { crashed[n] && live[n] -> live[n] = false; check() }
    od
}

init {
    atomic {
        byte j = 0;
        do
        :: j < JOBS -> state[j] = READY; owner[j] = NODES; j++
        :: else -> break
        od;
        run Node(0);
        run Node(1)
    }
}
