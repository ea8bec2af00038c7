/**
 * The test kit for applications on Workrow: {@link io.workrow.queue.test.WorkrowTest} for Spring
 * Boot tests (a fresh database per class, workers that wait for drains, a
 * {@link io.workrow.queue.test.WorkrowTester}), {@link io.workrow.queue.test.JobExpectation} for
 * assertions on enqueued jobs, and {@link io.workrow.queue.test.WorkrowDatabaseExtension} for tests
 * without Spring. The PostgreSQL server comes from {@link io.workrow.queue.test.database.PostgresServer} (module {@code queue-test-database}).
 */
package io.workrow.queue.test;
