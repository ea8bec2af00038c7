package io.workrow.queue.store;

import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DuplicateKeyException;

/**
 * A key-capped queue's claim: under the queue's cap lock ({@link CapLock}), so that the claims of
 * one key-capped queue take turns on every node and each counts its keys' open positions as the
 * last one committed them. Ends and the sweeper only lower those counts meanwhile, so the per-key
 * cap holds when the claim commits. Three round trips: the lock, the claim and the commit.
 */
final class CappedClaim {

    private static final Logger log = LoggerFactory.getLogger(CappedClaim.class);

    private final CapLock lock;

    CappedClaim(CapLock lock) {
        this.lock = lock;
    }

    /** {@link ClaimStore#claimCapped}. */
    List<ClaimedPosition> claim(String queue, int limit, ClaimStore.RoomClaim claim) {
        if (limit <= 0) {
            return List.of();
        }
        try {
            return lock.run(queue, caps -> refusable(claim, limit, caps.keyCap()));
        } catch (ClaimRefused e) {
            // An ordered claim overlapping another on a key: the transaction is rolled back whole
            // (it wrote nothing the next one needs) and the claim gives up until the next poll.
            log.debug("queue={} capped claim refused, tried again at the next poll: {}", queue, e.getMessage());
            return List.of();
        }
    }

    private static List<ClaimedPosition> refusable(ClaimStore.RoomClaim claim, int limit, Integer keyCap) {
        try {
            return claim.claim(limit, keyCap);
        } catch (DuplicateKeyException e) {
            throw new ClaimRefused(e);
        }
    }

    /** The claim statement was refused: the transaction is rolled back, and the claim comes back empty. */
    private static final class ClaimRefused extends RuntimeException {

        ClaimRefused(DuplicateKeyException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }
}
