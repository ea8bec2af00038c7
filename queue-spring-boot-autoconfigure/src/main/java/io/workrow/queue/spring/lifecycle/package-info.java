/**
 * Start and stop of Workrow's runtime parts with the application context.
 */
package io.workrow.queue.spring.lifecycle;
