/**
 * The producer side: {@link io.workrow.queue.client.JdbcJobQueue} and the rules for what it accepts.
 */
package io.workrow.queue.client;
