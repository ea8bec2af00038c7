/**
 * The only package that holds or runs SQL. {@link io.workrow.queue.store.JobStore} is what the
 * rest of Workrow runs its statements through, whichever layout the schema's jobs are kept in:
 * {@link io.workrow.queue.store.RowPerJobStore} runs the statements of
 * {@link io.workrow.queue.store.JobSql} on one row per job, and
 * {@link io.workrow.queue.store.WriteOnceStore} those of {@link io.workrow.queue.store.WriteOnceSql}
 * on the write-once layout (docs/storage-layout.md); each statement is a named text block run by
 * the method of the same name. {@link io.workrow.queue.store.ClaimStore} is the runtime's part:
 * claims, renewals, ends.
 */
package io.workrow.queue.store;
