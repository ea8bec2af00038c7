package io.workrow.sample.order;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Table;

/** An order row, written with Spring Data JDBC. */
@Table("orders")
public record Order(@Id Long id, String customer, long amountCents) {
}
