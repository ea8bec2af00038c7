/**
 * The dashboard page: one HTML page with its script and style from this jar, reading the queues
 * through {@link io.workrow.queue.QueueAdmin} and writing only through the {@code workrow}
 * actuator endpoint, so the endpoint's access rules and the application's security decide what
 * the page may change.
 */
package io.workrow.queue.spring.dashboard;
