/**
 * Which PostgreSQL server tests run against ({@link io.workrow.queue.test.database.PostgresServer})
 * and a fresh database per test class on it ({@link io.workrow.queue.test.database.TestDatabase}):
 * the one resolution both Workrow's own tests and the test kit use.
 */
package io.workrow.queue.test.database;
