/**
 * Orders: the business write, and the receipt job enqueued in the same transaction.
 */
package io.workrow.sample.order;
