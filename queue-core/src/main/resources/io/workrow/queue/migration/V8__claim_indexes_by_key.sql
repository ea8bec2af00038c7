-- Claim indexes split by whether a job has a key, so that a job without one (the common case: no
-- partition key and no fairness key) writes one claim-index entry instead of three. Before, every pending row went into workrow_job_claim_idx, workrow_job_keyless_claim_idx
-- and workrow_job_fair_claim_idx, which made those two extra entries half of an insert's cost.
--
-- Every pending row is in exactly one of the two claim-order indexes below; the plain claim
-- (JobSql.JOB_CLAIM) and the ordered claim's walk read both in claim order and merge them.

-- Pending jobs without any key, in claim order: a plain queue's usual backlog, an ordered queue's
-- keyless jobs and a fair queue's '' group.
CREATE INDEX workrow_job_unkeyed_claim_idx
    ON workrow_job (queue, priority, run_at, id)
    WHERE status = 'pending' AND partition_key IS NULL AND fairness_key = '';

-- Pending jobs with a partition or fairness key, in claim order. A job with a partition key and
-- the fairness key '' (written by a version before 7) counts as keyed too.
CREATE INDEX workrow_job_keyed_claim_idx
    ON workrow_job (queue, priority, run_at, id)
    WHERE status = 'pending' AND (partition_key IS NOT NULL OR fairness_key <> '');

-- The fair claims' loose scan over keys now covers only keyed jobs; the group '' is the unkeyed
-- jobs (workrow_job_unkeyed_claim_idx) and any keyed ones with the fairness key ''.
DROP INDEX workrow_job_fair_claim_idx;
CREATE INDEX workrow_job_fair_claim_idx
    ON workrow_job (queue, fairness_key, priority, run_at, id)
    WHERE status = 'pending' AND (partition_key IS NOT NULL OR fairness_key <> '');

-- An ordered queue's jobs without a partition key are the unkeyed ones plus those with only a
-- fairness key; this index holds the latter, so the ordered claim finds either kind without
-- walking keyed jobs.
DROP INDEX workrow_job_keyless_claim_idx;
CREATE INDEX workrow_job_keyless_claim_idx
    ON workrow_job (queue, priority, run_at, id)
    WHERE status = 'pending' AND partition_key IS NULL AND fairness_key <> '';

DROP INDEX workrow_job_claim_idx;
