package io.workrow.queue.benchmark.compare;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;

/** Every figure of a run, by measurement and column, printed as one Markdown table. */
final class Results {

    /** A measurement: its row label and whether more is better. */
    record Row(String label, boolean higherIsBetter) {
    }

    private final Map<Row, Map<String, List<Double>>> figures = new LinkedHashMap<>();
    private final Set<String> columns = new LinkedHashSet<>();

    Results(List<Row> rows, List<String> columns) {
        rows.forEach(row -> figures.put(row, new LinkedHashMap<>()));
        this.columns.addAll(columns);
    }

    void add(Row row, String column, double value) {
        columns.add(column);
        figures.get(row).computeIfAbsent(column, c -> new ArrayList<>()).add(value);
    }

    /** The best of the rounds: the highest rate, the lowest delay or memory. */
    OptionalDouble best(Row row, String column) {
        List<Double> values = figures.get(row).getOrDefault(column, List.of());
        return row.higherIsBetter()
                ? values.stream().mapToDouble(Double::doubleValue).max()
                : values.stream().mapToDouble(Double::doubleValue).min();
    }

    /** The best figure in {@code row} among {@code candidates}, and whose it is. */
    Map.Entry<String, Double> bestOf(Row row, List<String> candidates) {
        Map.Entry<String, Double> best = null;
        for (String column : candidates) {
            OptionalDouble value = best(row, column);
            if (value.isPresent() && (best == null || (row.higherIsBetter()
                    ? value.getAsDouble() > best.getValue() : value.getAsDouble() < best.getValue()))) {
                best = Map.entry(column, value.getAsDouble());
            }
        }
        return best;
    }

    String table() {
        StringBuilder out = new StringBuilder("| measurement |");
        columns.forEach(column -> out.append(' ').append(column).append(" |"));
        out.append("\n| --- |");
        columns.forEach(column -> out.append(" ---: |"));
        out.append('\n');
        for (Map.Entry<Row, Map<String, List<Double>>> row : figures.entrySet()) {
            out.append("| ").append(row.getKey().label()).append(" |");
            for (String column : columns) {
                List<Double> values = row.getValue().get(column);
                out.append(' ').append(values == null ? "–" : cell(row.getKey(), values)).append(" |");
            }
            out.append('\n');
        }
        return out.toString();
    }

    /** The best figure, then every round's when there were several. */
    private static String cell(Row row, List<Double> values) {
        double best = row.higherIsBetter()
                ? values.stream().mapToDouble(Double::doubleValue).max().orElseThrow()
                : values.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        if (values.size() == 1) {
            return format(best);
        }
        return "**" + format(best) + "** (" + String.join(" / ", values.stream().map(Results::format).toList()) + ")";
    }

    static String format(double value) {
        return value >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.1f", value);
    }
}
