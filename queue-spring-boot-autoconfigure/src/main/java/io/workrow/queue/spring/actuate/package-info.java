/**
 * Actuator integration: the {@code workrow} health indicator and endpoint.
 */
package io.workrow.queue.spring.actuate;
