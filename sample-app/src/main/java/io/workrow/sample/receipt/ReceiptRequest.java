package io.workrow.sample.receipt;

/** The payload of a {@code send-receipt} job. */
public record ReceiptRequest(long orderId) {
}
