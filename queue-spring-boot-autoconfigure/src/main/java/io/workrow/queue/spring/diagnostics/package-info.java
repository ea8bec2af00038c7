/**
 * Start-up failure reports for Workrow's configuration mistakes.
 */
package io.workrow.queue.spring.diagnostics;
