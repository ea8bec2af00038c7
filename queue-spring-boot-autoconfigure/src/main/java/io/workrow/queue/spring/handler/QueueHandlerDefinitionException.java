package io.workrow.queue.spring.handler;

import org.springframework.beans.factory.BeanInitializationException;

/** A {@code @QueueHandler} method that cannot be used; the message names the bean and method. */
public class QueueHandlerDefinitionException extends BeanInitializationException {

    private static final long serialVersionUID = 1L;

    public QueueHandlerDefinitionException(String message) {
        super(message);
    }
}
