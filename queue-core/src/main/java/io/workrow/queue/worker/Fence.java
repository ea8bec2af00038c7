package io.workrow.queue.worker;

/**
 * One run as the database fences it: its claim's {@code token} and its {@code position} in that
 * claim. Every claim draws a new token, so two runs of one job (an old run whose lease was lost,
 * and the job's claim again) never share a fence, though they share the job's id.
 */
record Fence(long token, int position) {
}
