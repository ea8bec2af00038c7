/**
 * The only package that holds or runs SQL: every statement is a named text block in
 * {@link io.workrow.queue.store.JobSql}, run by the method of the same name in
 * {@link io.workrow.queue.store.JobStore}.
 */
package io.workrow.queue.store;
