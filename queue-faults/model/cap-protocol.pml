/*
 * The cluster-wide concurrency cap (docs/patterns.md, "Cluster-wide concurrency caps"): a capped
 * claim locks the queue's cap row, counts the queue's open positions less its own node's jobs whose
 * handlers have returned and whose ends are not written yet, and claims its free slots and what
 * keeps its whole line within half the room it leaves; jobs in line start when a handler slot
 * frees, without asking again.
 *
 * Two nodes of two handler slots each, a cap of two, three jobs. A node reads which of its jobs
 * have finished (their tokens and positions) before its claim's transaction, and the claim is one
 * atomic step (the cap row's lock makes the claims of one queue take turns; ends and the sweeper
 * only close positions meanwhile). Handlers start jobs from their node's line, return, and the
 * node's writer ends them, each a step of its own, interleaved with everything else; an end may
 * send a job back to ready for another attempt. A node may crash: its handlers stop, its
 * positions stay open until the sweeper closes them (its lease ran out) and puts the jobs back.
 *
 * Checked by queue-faults/scripts/model-check.sh, as an assertion after every step:
 *   - never more handlers running at once, on all nodes together, than the cap.
 * A handler let go past its timeout runs on after its position is ended: it is outside this
 * model, as docs/patterns.md says it is outside the cap.
 * Mutants that must fail: -DRUNNING_AS_FINISHED (the finished list takes a job whose handler
 * still runs), -DUNCHECKED_FINISHED (the count subtracts the node's finished list
 * without checking that each position is still open under the same claim: a job whose end was
 * written, claimed again and running, is counted free), -DUNLOCKED (the count and the claim are
 * two steps, so two nodes take the same room), -DLINE_UNCOUNTED (the count leaves out jobs waiting
 * in a line).
 */

#define NODES 2
#define SLOTS 2          /* handler slots per node */
#define CAP 2
#define JOBS 3
#define LINE 1           /* the most a poller asks for beyond its free slots */
#ifndef MAX_RETRIES
#define MAX_RETRIES 1    /* ends that send a job back to ready for another attempt, in all */
#endif
#ifndef MAX_CRASHES
#define MAX_CRASHES 1    /* kill -9 of a node, in all */
#endif

mtype = { READY, LINED, RUNNING, FINISHED, ORPHANED, DONE };

mtype state[JOBS];
byte owner[JOBS];                /* the node whose claim holds the job's open position */
byte token[JOBS];                /* the claim that holds it: a new one per claim */
byte tokens;                     /* claims made so far */
bool finished[NODES * JOBS];     /* a node's list of its finished jobs, read before its claim */
byte finishedToken[NODES * JOBS];
byte retries;
byte crashes;

/* Positions open in the database: in a line, running, finished and not written, or orphaned. */
#define OPEN(j) (state[j] == LINED || state[j] == RUNNING || state[j] == FINISHED || state[j] == ORPHANED)

#define RUNS(k) (state[k] == RUNNING -> 1 : 0)

inline checkCap() {
    assert(RUNS(0) + RUNS(1) + RUNS(2) <= CAP)
}

/* The node's jobs it holds (in line or running), what its poller counts against its slots, and those in line. */
inline held(n, count, lined, h) {
    h = 0;
    count = 0;
    lined = 0;
    do
    :: h < JOBS -> if :: owner[h] == n && state[h] == LINED -> count++; lined++
                      :: owner[h] == n && state[h] == RUNNING -> count++
                      :: else -> skip fi; h++
    :: else -> break
    od
}

/* CAP_RUNNING: open positions, less the claiming node's finished ones still open under the same claim. */
inline countOpen(n, open, c) {
    c = 0;
    open = 0;
    do
    :: c < JOBS ->
        if
#ifdef LINE_UNCOUNTED
        :: state[c] == RUNNING || state[c] == FINISHED || state[c] == ORPHANED -> open++
#else
        :: OPEN(c) -> open++
#endif
        :: else -> skip
        fi;
        if
#ifdef UNCHECKED_FINISHED
        :: finished[n * JOBS + c] -> open--
#else
        :: finished[n * JOBS + c] && OPEN(c) && owner[c] == n && token[c] == finishedToken[n * JOBS + c] -> open--
#endif
        :: else -> skip
        fi;
        c++
    :: else -> break
    od
}

/* CapAsk.room: the free slots first, then what keeps the node's whole line within half the room its slots leave. */
inline roomUnderCap(open, limit, forSlots, inLine, room, spare, slotsPart, linePart) {
    if :: open < CAP -> spare = CAP - open :: else -> spare = 0 fi;
    if :: forSlots < spare -> slotsPart = forSlots :: else -> slotsPart = spare fi;
    linePart = (spare - slotsPart + inLine) / 2;
    if :: linePart > inLine -> linePart = linePart - inLine :: else -> linePart = 0 fi;
    if :: linePart > limit - slotsPart -> linePart = limit - slotsPart :: else -> skip fi;
    room = slotsPart + linePart
}

/* One claim row for the jobs it takes: its token tells its positions from those of earlier claims. */
inline claimRoom(n, room, q) {
    q = 0;
    do
    :: q < JOBS && room > 0 && state[q] == READY -> break
    :: q < JOBS && !(room > 0 && state[q] == READY) -> q++
    :: q >= JOBS -> break
    od;
    if :: q < JOBS -> tokens++ :: else -> skip fi;
    do
    :: q < JOBS && room > 0 ->
        if
        :: state[q] == READY -> state[q] = LINED; owner[q] = n; token[q] = tokens; room--
        :: else -> skip
        fi;
        q++
    :: else -> break
    od
}

/* The node's list of finished jobs goes with its claim: the next claim reads a new one. */
inline forgetFinished(n, f) {
    f = 0;
    do
    :: f < JOBS -> finished[n * JOBS + f] = false; finishedToken[n * JOBS + f] = 0; f++
    :: else -> break
    od
}

/* A step's working values are not state: cleared at its end, so that states differ only in what matters. */
#define CLEAR j = 0; holding = 0; lined = 0; room = 0; forSlots = 0; running = 0; spare = 0; slotsPart = 0; \
              linePart = 0; open = 0

proctype Node(byte n) {
    byte j, holding, lined, room, forSlots, running, spare, slotsPart, linePart;
    short open;
    do
    /* The finished list, read before the claim's transaction. */
    :: atomic {
        j = 0;
        do
        :: j < JOBS ->
#ifdef RUNNING_AS_FINISHED
            finished[n * JOBS + j] = ((state[j] == FINISHED || state[j] == RUNNING) && owner[j] == n);
#else
            finished[n * JOBS + j] = (state[j] == FINISHED && owner[j] == n);
#endif
            finishedToken[n * JOBS + j] = (finished[n * JOBS + j] -> token[j] : 0);
            j++
        :: else -> break
        od;
        checkCap();
        CLEAR
    }
    /* The capped claim: lock, count, claim, commit. */
#ifdef UNLOCKED
    :: atomic {
        held(n, holding, lined, j);
        if :: holding < SLOTS -> forSlots = SLOTS - holding :: else -> forSlots = 0 fi;
        countOpen(n, open, j);
        roomUnderCap(open, forSlots + LINE, forSlots, lined, room, spare, slotsPart, linePart)
    };
       atomic { claimRoom(n, room, j); forgetFinished(n, j); checkCap(); CLEAR }
#else
    :: atomic {
        held(n, holding, lined, j);
        if :: holding < SLOTS -> forSlots = SLOTS - holding :: else -> forSlots = 0 fi;
        countOpen(n, open, j);
        roomUnderCap(open, forSlots + LINE, forSlots, lined, room, spare, slotsPart, linePart);
        claimRoom(n, room, j);
        forgetFinished(n, j);
        checkCap();
        CLEAR
    }
#endif
    /* A handler slot takes the next job in line. */
    :: atomic {
        running = 0;
        j = 0;
        do
        :: j < JOBS -> if :: owner[j] == n && state[j] == RUNNING -> running++ :: else -> skip fi; j++
        :: else -> break
        od;
        j = 0;
        do
        :: j < JOBS && running < SLOTS && owner[j] == n && state[j] == LINED -> state[j] = RUNNING; break
        :: j < JOBS && !(running < SLOTS && owner[j] == n && state[j] == LINED) -> j++
        :: j >= JOBS -> break
        od;
        checkCap();
        CLEAR
    }
    /* A handler returns: its end goes to the writer. */
    :: atomic {
        j = 0;
        do
        :: j < JOBS && owner[j] == n && state[j] == RUNNING -> state[j] = FINISHED; break
        :: j < JOBS && !(owner[j] == n && state[j] == RUNNING) -> j++
        :: j >= JOBS -> break
        od;
        checkCap();
        CLEAR
    }
    /* The writer ends a finished job: completed, or back to ready for another attempt. */
    :: atomic {
        j = 0;
        do
        :: j < JOBS && owner[j] == n && state[j] == FINISHED ->
            if
            :: state[j] = DONE
            :: retries < MAX_RETRIES -> retries++; state[j] = READY
            fi;
            break
        :: j < JOBS && !(owner[j] == n && state[j] == FINISHED) -> j++
        :: j >= JOBS -> break
        od;
        checkCap();
        CLEAR
    }
    /* kill -9: the handlers stop, the positions stay open until the sweeper closes them. */
    :: atomic {
        crashes < MAX_CRASHES ->
        crashes++;
        j = 0;
        do
        :: j < JOBS ->
            if :: owner[j] == n && (state[j] == LINED || state[j] == RUNNING || state[j] == FINISHED) ->
                   state[j] = ORPHANED
               :: else -> skip
            fi;
            finished[n * JOBS + j] = false;
            j++
        :: else -> break
        od;
        checkCap();
        CLEAR
    }
    od
}

/* The sweeper: an orphaned position's lease ran out; the job is ready again. */
active proctype Sweeper() {
    byte j;
    do
    :: atomic {
        j = 0;
        do
        :: j < JOBS && state[j] == ORPHANED -> state[j] = READY; break
        :: j < JOBS && state[j] != ORPHANED -> j++
        :: j >= JOBS -> break
        od;
        checkCap()
    }
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
