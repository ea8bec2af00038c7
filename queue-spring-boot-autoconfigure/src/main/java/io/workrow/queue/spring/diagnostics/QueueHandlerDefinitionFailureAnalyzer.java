package io.workrow.queue.spring.diagnostics;

import io.workrow.queue.spring.handler.QueueHandlerDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns an unusable {@code @QueueHandler} into a start-up report that says what to change. */
public final class QueueHandlerDefinitionFailureAnalyzer extends AbstractFailureAnalyzer<QueueHandlerDefinitionException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, QueueHandlerDefinitionException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Give each queue exactly one @QueueHandler method, taking the payload and, optionally, a JobContext.",
                cause);
    }
}
