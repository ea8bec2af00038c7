/**
 * The only package that holds or runs SQL. {@link io.workrow.queue.store.JobStore} is what the
 * rest of Workrow runs its statements through: {@link io.workrow.queue.store.WriteOnceStore} runs
 * those of {@link io.workrow.queue.store.JobSql} on the write-once layout (docs/storage-layout.md),
 * each statement a named text block run by the method of the same name, and the breaker,
 * fairness, worker, recurring and queue-rule stores theirs beside it.
 * {@link io.workrow.queue.store.ClaimStore} is the runtime's part: claims, renewals, ends.
 */
package io.workrow.queue.store;
