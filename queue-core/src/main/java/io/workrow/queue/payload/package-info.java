/**
 * Payload encoding: JSON text in the {@code payload} column, read back into the handler's own type.
 */
package io.workrow.queue.payload;
