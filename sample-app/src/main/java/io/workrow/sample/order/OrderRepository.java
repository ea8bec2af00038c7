package io.workrow.sample.order;

import org.springframework.data.repository.CrudRepository;

interface OrderRepository extends CrudRepository<Order, Long> {
}
