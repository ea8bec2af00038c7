/**
 * What Spring's ahead-of-time processing and a GraalVM native image need to know about Workrow:
 * the methods it calls reflectively and the resources it reads.
 */
package io.workrow.queue.aot;
