package io.workrow.queue.worker;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many more jobs one poller may claim: its handler slots plus its prefetch, less the jobs it
 * holds (in line or running) and the room its claims in flight have taken. The prefetch may change while jobs are held; a smaller one leaves no
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

    /** The most one claim may fill: every slot and the whole prefetch. */
    int capacity() {
        return slots + prefetch;
    }

    void resize(int prefetch) {
        this.prefetch = prefetch;
    }

    /**
     * Takes room for up to {@code most} jobs before a claim and returns how many, at most
     * {@link #free}: the claim asks for no more, and gives back what it did not fill. Two claim
     * loops may take at once; neither takes room the other holds.
     */
    int take(int most) {
        while (true) {
            int now = held.get();
            int taken = Math.min(most, Math.max(0, slots + prefetch - now));
            if (taken == 0 || held.compareAndSet(now, now + taken)) {
                return taken;
            }
        }
    }

    /** Held jobs ended or went back, or room taken for a claim was not filled. */
    void give(int jobs) {
        held.addAndGet(-jobs);
    }
}
