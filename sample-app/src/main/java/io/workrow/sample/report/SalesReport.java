package io.workrow.sample.report;

/** The payload of the recurring sales report: how many days back it covers. */
public record SalesReport(int days) {
}
