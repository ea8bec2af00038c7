package io.workrow.queue.benchmark.compare;

import java.util.HashMap;
import java.util.Map;

/** What a worker process reported as it stopped: jobs handled, pick-up delay, live heap and peak RSS. */
record WorkerReport(long handled, double p50Millis, double p99Millis, double heapMb, double rssMb) {

    static WorkerReport parse(String statsLine) {
        Map<String, String> fields = new HashMap<>();
        for (String field : statsLine.substring("STATS ".length()).trim().split("\\s+")) {
            int equals = field.indexOf('=');
            fields.put(field.substring(0, equals), field.substring(equals + 1));
        }
        return new WorkerReport(Long.parseLong(fields.get("handled")), Double.parseDouble(fields.get("p50")),
                Double.parseDouble(fields.get("p99")), Double.parseDouble(fields.get("heapMb")),
                Double.parseDouble(fields.get("rssMb")));
    }
}
