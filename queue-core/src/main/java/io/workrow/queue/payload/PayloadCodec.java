package io.workrow.queue.payload;

import java.lang.reflect.Type;

/**
 * Turns payloads into JSON text for the {@code payload} column and back. The target type always
 * comes from the handler's signature, never from the payload itself.
 */
public interface PayloadCodec {

    /** Encodes a payload as JSON text. */
    String encode(Object payload);

    /**
     * Decodes JSON text into {@code type} (a class or a parameterized type such as
     * {@code List<Item>}).
     *
     * @throws PayloadDecodingException when the text is not a valid {@code type}
     */
    Object decode(String json, Type type);
}
