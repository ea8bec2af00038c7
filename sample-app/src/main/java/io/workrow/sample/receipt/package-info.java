/**
 * Receipts: the idempotent {@code send-receipt} handler.
 */
package io.workrow.sample.receipt;
