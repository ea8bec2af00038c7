-- Policies, second part: the per-key cap stored with the cluster-wide one, so that it is declared
-- by the runtimes at start and can be set and cleared by hand at run time as the cluster-wide cap
-- can; and the view shows a job's deadline, own timeout and snoozes. Old and new nodes may run
-- together across this migration: it appends three columns to the view and adds three to the caps.
SELECT set_config('search_path', quote_ident(current_schema()), true);

-- The view, with a job's deadline (JobRequest.expiresAt), its own handler timeout in milliseconds
-- (JobRequest.timeout) and how often it snoozed (NULL: never, or not known in its home) appended
-- last (CREATE OR REPLACE keeps the columns before it).
CREATE OR REPLACE VIEW workrow_job AS
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'scheduled'::text AS status, state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL::timestamptz AS lease_expires_at, NULL::bigint AS lease_token, data.created_at,
       NULL::timestamptz AS started_at, NULL::timestamptz AS finished_at, state.expiries AS lease_expiries,
       data.fairness_key, NULL::jsonb AS result,
       data.expires_at, data.timeout_ms, state.snoozes AS snoozes
FROM workrow_scheduled AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'pending', state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, NULL, NULL, state.expiries, data.fairness_key, NULL,
       data.expires_at, data.timeout_ms, state.snoozes
FROM workrow_ready AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'waiting', state.run_at, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, NULL, NULL, state.expiries, data.fairness_key, NULL,
       data.expires_at, data.timeout_ms, NULL::integer
FROM workrow_waiting AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, claim.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'running', held.run_at, held.attempts,
       data.max_attempts, held.last_error, held.last_error_at, step.step, claim.worker,
       claim.lease_expires_at, claim.token, data.created_at, claim.started_at, NULL, held.expiries,
       data.fairness_key, NULL,
       data.expires_at, data.timeout_ms, claim.snoozes[held.position]
FROM workrow_claim AS claim
CROSS JOIN LATERAL unnest(claim.ids, claim.attempts, claim.expiries, claim.run_ats, claim.errors, claim.error_ats)
     WITH ORDINALITY AS held(id, attempts, expiries, run_at, last_error, last_error_at, position)
JOIN workrow_job_data AS data ON data.id = held.id
LEFT JOIN workrow_step AS step ON step.job_id = held.id
WHERE get_bit(claim.settled, held.position::int - 1) = 0 AND get_bit(claim.dropped, held.position::int - 1) = 0
UNION ALL
SELECT data.id, state.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, 'dead', NULL, state.attempts,
       state.max_attempts, state.last_error, state.last_error_at, step.step, state.claimed_by,
       NULL, NULL, data.created_at, state.started_at, state.finished_at, state.expiries, data.fairness_key, NULL,
       data.expires_at, data.timeout_ms, NULL
FROM workrow_dead AS state
JOIN workrow_job_data AS data ON data.id = state.id
LEFT JOIN workrow_step AS step ON step.job_id = state.id
UNION ALL
SELECT data.id, outcome.queue, data.partition_key, data.partition_bucket, data.priority, data.idempotency_key,
       data.payload, data.headers, outcome.status, outcome.run_at, outcome.attempt,
       data.max_attempts, outcome.error, outcome.error_at, outcome.step,
       outcome.worker, NULL, NULL, data.created_at, outcome.started_at, outcome.finished_at, outcome.expiries,
       data.fairness_key, outcome.result,
       data.expires_at, data.timeout_ms, NULL
FROM workrow_outcome AS outcome
JOIN workrow_job_data AS data ON data.id = outcome.job_id
WHERE outcome.status IN ('completed', 'cancelled');

-- key_configured: the key-concurrency the runtimes working the queue declared at start (the last
-- to start wins); key_set_by_hand: one set at run time (QueueAdmin.setKeyConcurrency), which wins
-- over it until cleared, with key_reason. NULL: none. A capped claim reads the one in force under
-- the row's lock. After the view: a long read of the view holds the migration up there, before it
-- locks the table every capped claim locks first.
ALTER TABLE workrow_queue_cap
    ADD COLUMN key_configured integer CHECK (key_configured >= 1),
    ADD COLUMN key_set_by_hand integer CHECK (key_set_by_hand >= 1),
    ADD COLUMN key_reason text;
