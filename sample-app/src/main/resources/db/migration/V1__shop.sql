CREATE TABLE orders (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer     text        NOT NULL,
    amount_cents bigint      NOT NULL CHECK (amount_cents >= 0),
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- One receipt per order: the unique key makes sending idempotent when a job runs twice.
CREATE TABLE receipt (
    order_id bigint      PRIMARY KEY REFERENCES orders (id),
    sent_at  timestamptz NOT NULL DEFAULT now()
);
