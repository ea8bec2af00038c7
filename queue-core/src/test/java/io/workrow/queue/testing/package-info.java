/**
 * The shared test harness: a real PostgreSQL server and a fresh database per test class.
 */
package io.workrow.queue.testing;
