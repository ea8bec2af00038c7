package io.workrow.queue.store;

/**
 * The circuit breaker statements ({@code workrow_breaker}, one row per guarded queue), mirrored
 * by {@link BreakerStore}. Every statement that changes a breaker locks its row first and returns
 * the state it found, so each transition is made, logged and counted by exactly one statement in
 * the whole cluster. All of them read the row by primary key. Time is the database's.
 */
final class BreakerSql {

    private BreakerSql() {
    }

    /** Makes sure a guarded queue has its breaker row (closed), leaving an existing one as it is. */
    static final String BREAKER_REGISTER = """
            INSERT INTO {breaker} (queue) VALUES (?)
            ON CONFLICT (queue) DO NOTHING
            """;

    /**
     * Records the outcomes of one batch of a queue's results, in the order they were written:
     * {@code successes}, {@code failures}, and the failures after the last success. Closed, a
     * success resets the count of consecutive failures and reaching the threshold opens it for the
     * cooldown. Half-open, the last outcome decides: a failure opens it again, a success closes it.
     * Open, outcomes of runs claimed before it opened change nothing. Writes only when something
     * changed, and does not even lock the row for the usual batch, all successes on a closed
     * breaker with no failures counted: every node reports every batch, and they must not queue up
     * on one row to change nothing.
     */
    static final String BREAKER_RECORD = """
            WITH input AS (
                SELECT ?::text AS queue, ?::int AS successes, ?::int AS failures, ?::int AS trailing_failures,
                       ?::int AS threshold, ?::bigint AS cooldown_ms
            ), current AS (
                SELECT breaker.queue, breaker.state, breaker.failures
                FROM {breaker} AS breaker
                JOIN input ON input.queue = breaker.queue
                WHERE NOT (breaker.state = 'closed' AND breaker.failures = 0 AND input.failures = 0)
                FOR UPDATE OF breaker
            ), counted AS (
                SELECT current.queue, current.state AS previous_state, current.failures AS previous_failures,
                       input.cooldown_ms, input.successes, input.trailing_failures, input.threshold,
                       CASE WHEN current.state = 'open' THEN current.failures
                            WHEN input.successes > 0 THEN input.trailing_failures
                            ELSE current.failures + input.failures END AS failures
                FROM current CROSS JOIN input
            ), decided AS (
                SELECT counted.*,
                       CASE WHEN counted.previous_state = 'open' THEN 'open'
                            WHEN counted.previous_state = 'half_open' THEN
                                 CASE WHEN counted.trailing_failures > 0 THEN 'open'
                                      WHEN counted.successes > 0 THEN 'closed' ELSE 'half_open' END
                            WHEN counted.failures >= counted.threshold THEN 'open'
                            ELSE 'closed' END AS state
                FROM counted
            )
            UPDATE {breaker} AS breaker
            SET state = decided.state,
                failures = CASE WHEN decided.state = 'closed' AND decided.previous_state <> 'closed' THEN 0
                                ELSE decided.failures END,
                open_until = CASE WHEN decided.state = 'open' AND decided.previous_state <> 'open'
                                  THEN clock_timestamp() + decided.cooldown_ms * interval '1 millisecond'
                                  WHEN decided.state = 'closed' THEN NULL
                                  ELSE breaker.open_until END,
                probes_claimed = CASE WHEN decided.state <> decided.previous_state THEN 0
                                      ELSE breaker.probes_claimed END,
                changed_at = CASE WHEN decided.state <> decided.previous_state THEN clock_timestamp()
                                  ELSE breaker.changed_at END,
                reason = CASE WHEN decided.state = decided.previous_state THEN breaker.reason
                              WHEN decided.previous_state = 'closed'
                                   THEN decided.failures || ' consecutive failures'
                              WHEN decided.state = 'open' THEN 'a half-open probe failed'
                              ELSE 'a half-open probe succeeded' END
            FROM decided
            WHERE breaker.queue = decided.queue
              AND (decided.state <> decided.previous_state OR decided.failures <> decided.previous_failures)
            RETURNING decided.previous_state, breaker.state, breaker.failures
            """;

    /**
     * Grants up to {@code wanted} probes of a breaker whose cooldown is over: it becomes half-open
     * and at most {@code probes} jobs of a round are let through, across all nodes (the row lock
     * makes concurrent pollers take turns; each sees the count the last one left). A round whose
     * probes gave no verdict within a cooldown (their worker died, say) is given up and a new one
     * starts. Matches nothing, and locks nothing, while the breaker is closed or cooling down.
     */
    static final String BREAKER_ACQUIRE_PROBES = """
            WITH input AS (
                SELECT ?::text AS queue, ?::int AS wanted, ?::int AS probes, ?::bigint AS cooldown_ms
            ), current AS (
                SELECT breaker.queue, breaker.state, breaker.probes_claimed,
                       breaker.state = 'open' OR breaker.open_until <= clock_timestamp() AS new_round
                FROM {breaker} AS breaker
                JOIN input ON input.queue = breaker.queue
                WHERE breaker.state <> 'closed'
                  AND (breaker.open_until <= clock_timestamp()
                       OR (breaker.state = 'half_open' AND breaker.probes_claimed < input.probes))
                FOR UPDATE OF breaker
            ), granted AS (
                SELECT current.queue, current.state AS previous_state, current.new_round, input.cooldown_ms,
                       least(input.wanted,
                             input.probes - CASE WHEN current.new_round THEN 0 ELSE current.probes_claimed END)
                       AS probes
                FROM current CROSS JOIN input
            )
            UPDATE {breaker} AS breaker
            SET state = 'half_open',
                probes_claimed = CASE WHEN granted.new_round THEN 0 ELSE breaker.probes_claimed END + granted.probes,
                open_until = CASE WHEN granted.new_round
                                  THEN clock_timestamp() + granted.cooldown_ms * interval '1 millisecond'
                                  ELSE breaker.open_until END,
                changed_at = CASE WHEN granted.previous_state <> 'half_open' THEN clock_timestamp()
                                  ELSE breaker.changed_at END,
                reason = CASE WHEN granted.previous_state <> 'half_open' THEN 'cooldown over; letting probes through'
                              ELSE breaker.reason END
            FROM granted
            WHERE breaker.queue = granted.queue AND granted.probes > 0
            RETURNING granted.previous_state, granted.probes
            """;

    /** Gives back probes a poller was granted but found no due job for. */
    static final String BREAKER_RETURN_PROBES = """
            UPDATE {breaker}
            SET probes_claimed = greatest(probes_claimed - ?, 0)
            WHERE queue = ? AND state = 'half_open'
            """;

    /**
     * Opens a breaker by hand, until it is closed by hand: no node claims the queue's jobs, and no
     * probes are let through. Returns the state it had.
     */
    static final String BREAKER_OPEN_BY_HAND = """
            WITH current AS (
                SELECT queue, state FROM {breaker} WHERE queue = ? FOR UPDATE
            )
            UPDATE {breaker} AS breaker
            SET state = 'open', open_until = 'infinity', probes_claimed = 0, changed_at = clock_timestamp(),
                reason = ?
            FROM current
            WHERE breaker.queue = current.queue
            RETURNING current.state AS previous_state
            """;

    /**
     * Closes a breaker by hand, its failure count cleared, and wakes the queue's pollers on every
     * node. Returns the state it had.
     */
    static final String BREAKER_CLOSE_BY_HAND = """
            WITH current AS (
                SELECT queue, state FROM {breaker} WHERE queue = ? FOR UPDATE
            ), closed AS (
                UPDATE {breaker} AS breaker
                SET state = 'closed', failures = 0, open_until = NULL, probes_claimed = 0,
                    changed_at = clock_timestamp(), reason = ?
                FROM current
                WHERE breaker.queue = current.queue
                RETURNING breaker.queue, current.state AS previous_state
            )
            SELECT previous_state, pg_notify({channel}, queue) FROM closed
            """;

    /** Every breaker, by queue. */
    static final String BREAKER_LIST = """
            SELECT queue, state, failures, open_until, changed_at, reason
            FROM {breaker}
            ORDER BY queue
            """;
}
