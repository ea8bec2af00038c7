/**
 * Spring Boot auto-configuration for Workrow: wiring only; the parts it wires live in
 * {@code io.workrow.queue.spring} and in queue-core.
 */
package io.workrow.queue.autoconfigure;
