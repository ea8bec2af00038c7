package io.workrow.queue.worker;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many more jobs one poller may claim: its handler slots plus its prefetch, less the jobs it
 * holds (in line or running). The prefetch may change while jobs are held; a smaller one leaves no
 * room until enough of them finish, and never takes a held job back.
 */
final class PollerRoom {

    private final int slots;
    private final AtomicInteger held = new AtomicInteger();
    private volatile int prefetch;

    PollerRoom(int slots, int prefetch) {
        this.slots = slots;
        this.prefetch = prefetch;
    }

    int free() {
        return Math.max(0, slots + prefetch - held.get());
    }

    /**
     * Room for more jobs when only {@code slots} of the handler slots may run (a node's share of a
     * cluster-wide cap): those slots plus the prefetch, one job ahead at least (with no slot, one
     * job ahead only), less the jobs held.
     */
    int freeAhead(int slots) {
        return Math.max(0, Math.min(slots, this.slots) + (slots == 0 ? 1 : Math.max(1, prefetch)) - held.get());
    }

    /** Handler slots neither running a job nor promised to one in line. */
    int freeSlots() {
        return Math.max(0, slots - held.get());
    }

    /** {@link #freeSlots()} when only {@code slots} of the handler slots may run. */
    int freeSlots(int slots) {
        return Math.max(0, Math.min(slots, this.slots) - held.get());
    }

    /** The most one claim may fill: every slot and the whole prefetch. */
    int capacity() {
        return slots + prefetch;
    }

    void resize(int prefetch) {
        this.prefetch = prefetch;
    }

    /** A claimed job is held; only the poller takes room, and never more than {@link #free}. */
    void take() {
        held.incrementAndGet();
    }

    /** A held job ended or went back. */
    void give() {
        held.decrementAndGet();
    }
}
