/**
 * Discovery of {@code @QueueHandler} methods and their binding to the worker runtime.
 */
package io.workrow.queue.spring.handler;
