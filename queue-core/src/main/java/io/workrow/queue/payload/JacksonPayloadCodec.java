package io.workrow.queue.payload;

import java.lang.reflect.Type;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@link PayloadCodec} on a Jackson 3 {@link JsonMapper}, normally the application's own so that
 * its modules and settings apply. The mapper's polymorphic default typing, if any, is the
 * application's choice; Workrow never asks the payload which class to build.
 */
public final class JacksonPayloadCodec implements PayloadCodec {

    private final JsonMapper mapper;

    public JacksonPayloadCodec(JsonMapper mapper) {
        this.mapper = mapper;
    }

    /** A codec on a default {@link JsonMapper}. */
    public static JacksonPayloadCodec withDefaultMapper() {
        return new JacksonPayloadCodec(JsonMapper.builder().build());
    }

    @Override
    public String encode(Object payload) {
        return mapper.writeValueAsString(payload);
    }

    @Override
    public Object decode(String json, Type type) {
        JavaType target = mapper.getTypeFactory().constructType(type);
        try {
            return mapper.readValue(json, target);
        } catch (JacksonException e) {
            throw new PayloadDecodingException("Payload is not a valid " + target.toCanonical() + ": "
                    + e.getOriginalMessage(), e);
        }
    }
}
