package io.workrow.queue.spring.handler;

import io.workrow.queue.worker.HandlerTransaction;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link HandlerTransaction} on the application's {@link PlatformTransactionManager}: a new
 * transaction per attempt, rolled back when the handler or the fenced completion throws.
 */
public final class SpringHandlerTransaction implements HandlerTransaction {

    private final TransactionTemplate template;

    public SpringHandlerTransaction(PlatformTransactionManager transactionManager, String name) {
        this.template = new TransactionTemplate(transactionManager);
        this.template.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.template.setName(name);
    }

    @Override
    public void execute(Work work) throws Exception {
        try {
            template.executeWithoutResult(status -> {
                try {
                    work.run();
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Exception e) {
                    throw new CheckedFailure(e);
                }
            });
        } catch (CheckedFailure failure) {
            throw failure.checked;
        }
    }

    /** Carries a handler's checked exception through the template, which rolls back on it. */
    private static final class CheckedFailure extends RuntimeException {

        private static final long serialVersionUID = 1L;

        private final transient Exception checked;

        CheckedFailure(Exception checked) {
            super(checked);
            this.checked = checked;
        }
    }
}
