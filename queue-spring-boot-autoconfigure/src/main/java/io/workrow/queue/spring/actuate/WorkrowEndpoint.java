package io.workrow.queue.spring.actuate;

import io.workrow.queue.BreakerStatus;
import io.workrow.queue.ConcurrencyCap;
import io.workrow.queue.FairnessSetting;
import io.workrow.queue.JobSummary;
import io.workrow.queue.QueueAdmin;
import io.workrow.queue.QueueHold;
import io.workrow.queue.QueueStats;
import io.workrow.queue.RecurringStatus;
import io.workrow.queue.client.QueueNames;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code workrow} actuator endpoint, over {@link QueueAdmin}.
 * <ul>
 * <li>{@code GET /actuator/workrow}: every queue's counts, oldest due age, pause, every live hold
 * (with its end), every concurrency cap (with the jobs running), every circuit breaker's state and
 * every fairness key's setting.</li>
 * <li>{@code GET /actuator/workrow/{queue}/running}: running jobs with owner and lease.</li>
 * <li>{@code GET /actuator/workrow/{queue}/waiting}: jobs waiting for other jobs to end.</li>
 * <li>{@code GET /actuator/workrow/{queue}/dead?error=timeout}: dead jobs, optionally only those
 * whose last error contains the text ({@code limit}, 1 to 1000, default 100).</li>
 * <li>{@code POST /actuator/workrow/{queue}/retry} with {@code {"ids":[1,2]}} or
 * {@code {"error":"503"}} (a substring of the last error) or {@code {"group":"java.io.IOException"}}
 * (exactly one kind of error, as {@link QueueAdmin#deadErrorGroups} groups them);
 * {@code .../cancel-dead} with {@code {"ids":[1,2]}} or {@code {"group":"..."}} (dead jobs to
 * cancelled, never to run); {@code .../cancel} with {@code {"id":42}}; {@code .../pause} with an
 * optional {@code {"reason":"..."}}; {@code .../resume}; {@code .../open-breaker} with an optional
 * {@code {"reason":"..."}} (open on every node until closed by hand); {@code .../close-breaker};
 * {@code .../set-fairness} with {@code {"key":"tenant-a","weight":2}} and/or {@code "ratePerMinute":120}
 * ({@code "key":""} for the jobs without a key); {@code .../clear-fairness} with {@code {"key":"tenant-a"}};
 * {@code .../hold} with {@code {"duration":"10m"}} and an optional {@code "key"} (one partition key)
 * and {@code "reason"}: no node claims what it covers until then; {@code .../release-hold} with an
 * optional {@code {"key":"..."}}; {@code .../set-concurrency} with {@code {"globalConcurrency":5}}
 * (a cluster-wide cap in place of the configured one) and {@code .../clear-concurrency}.</li>
 * </ul>
 * Writes act only on jobs of the queue in the path: retrying or cancelling job 42 through another
 * queue's path changes nothing. Read-only by default: the write operations need {@code management.endpoint.workrow.access=unrestricted}
 * and should sit behind the application's security (see docs/operations.md).
 */
@Endpoint(id = "workrow", defaultAccess = Access.READ_ONLY)
public class WorkrowEndpoint {

    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final QueueAdmin admin;

    public WorkrowEndpoint(QueueAdmin admin) {
        this.admin = admin;
    }

    @ReadOperation
    public Queues queues() {
        return new Queues(admin.stats(), admin.pausedQueues(), admin.holds(), admin.concurrencyCaps(),
                admin.breakers(), admin.fairnessSettings(null, MAX_LIMIT), admin.recurringJobs());
    }

    @ReadOperation
    public List<JobSummary> jobs(@Selector String queue, @Selector String state, @Nullable String error,
            @Nullable Integer limit) {
        int rows = limit == null ? DEFAULT_LIMIT : limit;
        if (rows < 1 || rows > MAX_LIMIT) {
            throw new InvalidEndpointRequestException("limit must be between 1 and " + MAX_LIMIT + ", was " + rows,
                    "Give a limit between 1 and " + MAX_LIMIT);
        }
        return switch (state) {
            case "running" -> admin.runningJobs(queue, rows);
            case "waiting" -> admin.waitingJobs(queue, rows);
            case "dead" -> admin.deadJobs(queue, error, rows);
            default -> throw new InvalidEndpointRequestException("Unknown job state '" + state + "'",
                    "Use running, waiting or dead");
        };
    }

    @WriteOperation
    public Map<String, Object> operate(@Selector String queue, @Selector String action, Long @Nullable [] ids,
            @Nullable String error, @Nullable String group, @Nullable Long id, @Nullable String reason, @Nullable String key,
            @Nullable Double weight, @Nullable Integer ratePerMinute, @Nullable Duration duration,
            @Nullable Integer globalConcurrency, @Nullable Integer keyConcurrency) {
        try {
            QueueNames.check(queue);
        } catch (IllegalArgumentException e) {
            throw new InvalidEndpointRequestException(e.getMessage(), "Name an existing queue in the path");
        }
        return switch (action) {
            case "retry" -> {
                if (ids != null) {
                    yield Map.of("queue", queue, "retried", admin.retryDead(queue, Arrays.asList(ids)));
                }
                if (error != null) {
                    yield Map.of("queue", queue, "retried", admin.retryDead(queue, error));
                }
                if (group != null) {
                    yield Map.of("queue", queue, "retried", admin.retryDeadGroup(queue, group));
                }
                throw new InvalidEndpointRequestException("retry needs ids, error or group",
                        "Give \"ids\": [..], \"error\": \"text in last_error\" (\"\" retries every dead job of the queue) "
                                + "or \"group\": \"kind of error\" (as the dashboard groups dead jobs)");
            }
            case "cancel" -> {
                if (id == null) {
                    throw new InvalidEndpointRequestException("cancel needs id", "Give \"id\": <job id>");
                }
                yield Map.of("id", id, "queue", queue, "cancelled", admin.cancel(queue, id));
            }
            case "cancel-dead" -> {
                if (ids != null) {
                    yield Map.of("queue", queue, "cancelled", admin.cancelDead(queue, Arrays.asList(ids)));
                }
                if (group != null) {
                    yield Map.of("queue", queue, "cancelled", admin.cancelDeadGroup(queue, group));
                }
                throw new InvalidEndpointRequestException("cancel-dead needs ids or group",
                        "Give \"ids\": [..] or \"group\": \"kind of error\" (as the dashboard groups dead jobs)");
            }
            case "pause" -> {
                admin.pause(queue, reason);
                yield Map.of("queue", queue, "paused", true);
            }
            case "resume" -> Map.of("queue", queue, "resumed", admin.resume(queue));
            case "open-breaker" -> {
                admin.openBreaker(queue, reason);
                yield Map.of("queue", queue, "breaker", "open");
            }
            case "close-breaker" -> Map.of("queue", queue, "closed", admin.closeBreaker(queue));
            case "hold" -> {
                if (duration == null || duration.isNegative() || duration.isZero()) {
                    throw new InvalidEndpointRequestException("hold needs a positive duration",
                            "Give \"duration\": \"10m\" (and \"key\" to hold one partition key only)");
                }
                yield Map.of("queue", queue, "hold", admin.hold(queue, key, duration, reason));
            }
            case "release-hold" -> Map.of("queue", queue, "released", admin.releaseHold(queue, key));
            case "set-concurrency" -> {
                if (globalConcurrency == null || globalConcurrency < 1) {
                    throw new InvalidEndpointRequestException("set-concurrency needs globalConcurrency of at least 1",
                            "Give \"globalConcurrency\": 5");
                }
                admin.setGlobalConcurrency(queue, globalConcurrency, reason);
                yield Map.of("queue", queue, "globalConcurrency", globalConcurrency);
            }
            case "clear-concurrency" -> Map.of("queue", queue, "cleared", admin.clearGlobalConcurrency(queue));
            case "set-key-concurrency" -> {
                if (keyConcurrency == null || keyConcurrency < 1) {
                    throw new InvalidEndpointRequestException("set-key-concurrency needs keyConcurrency of at least 1",
                            "Give \"keyConcurrency\": 2");
                }
                admin.setKeyConcurrency(queue, keyConcurrency, reason);
                yield Map.of("queue", queue, "keyConcurrency", keyConcurrency);
            }
            case "clear-key-concurrency" -> Map.of("queue", queue, "cleared", admin.clearKeyConcurrency(queue));
            case "set-fairness" -> {
                requireKey(action, key);
                try {
                    yield Map.of("queue", queue, "setting", admin.setFairness(queue, key, weight, ratePerMinute));
                } catch (IllegalArgumentException e) {
                    throw new InvalidEndpointRequestException(e.getMessage(),
                            "Give \"weight\" (above 0) and/or \"ratePerMinute\" (at least 1)");
                }
            }
            case "clear-fairness" -> {
                requireKey(action, key);
                yield Map.of("queue", queue, "key", key, "cleared", admin.clearFairness(queue, key));
            }
            default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "'",
                    "Use retry, cancel, cancel-dead, pause, resume, hold, release-hold, set-concurrency,"
                            + " clear-concurrency, set-key-concurrency, clear-key-concurrency, open-breaker,"
                            + " close-breaker, set-fairness or clear-fairness");
        };
    }

    private static void requireKey(String action, @Nullable String key) {
        if (key == null) {
            throw new InvalidEndpointRequestException(action + " needs key",
                    "Give \"key\": \"<fairness key>\" (\"\" for the jobs without a key)");
        }
    }

    /** The endpoint's read-all answer. */
    public record Queues(List<QueueStats> queues, List<String> paused, List<QueueHold> holds,
            List<ConcurrencyCap> caps, List<BreakerStatus> breakers, List<FairnessSetting> fairness,
            List<RecurringStatus> recurring) {
    }
}
