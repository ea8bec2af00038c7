/**
 * Workrow's schema migrations, run by Workrow's own Flyway instance with its own history table.
 */
package io.workrow.queue.migration;
