package io.workrow.sample.order;

import java.net.URI;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders} places an order; {@code GET /orders/{id}} shows it with its receipt status. */
@RestController
@RequestMapping("/orders")
class OrderController {

    private final OrderService service;

    OrderController(OrderService service) {
        this.service = service;
    }

    @PostMapping
    ResponseEntity<Map<String, Long>> place(@RequestBody NewOrder request) {
        if (request.customer() == null || request.customer().isBlank() || request.amountCents() < 0) {
            return ResponseEntity.badRequest().build();
        }
        Order order = service.place(request.customer(), request.amountCents());
        return ResponseEntity.created(URI.create("/orders/" + order.id())).body(Map.of("id", order.id()));
    }

    @GetMapping("/{id}")
    ResponseEntity<OrderService.OrderView> show(@PathVariable long id) {
        return ResponseEntity.of(service.find(id));
    }

    record NewOrder(String customer, long amountCents) {
    }
}
