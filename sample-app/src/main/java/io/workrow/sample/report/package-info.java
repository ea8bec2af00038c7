/** The shop's recurring sales report: a job enqueued once per morning across every node. */
package io.workrow.sample.report;
