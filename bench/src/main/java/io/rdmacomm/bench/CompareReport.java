package io.rdmacomm.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rdmacomm.clientcomm.bench.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns the lines {@code bench/compare} collects into its table: for every row, the median of the row's metric
 * over the baseline's rounds and over ours, their ratio and whether the row's target is met.
 *
 * <p>Input, one JSON object per line, in any order:
 * <pre>
 * {"kind":"meta", ...}                 free-form facts about the run (date, machine, load), copied to the summary
 * {"kind":"row","row":ID,"label":TEXT,"metric":FIELD,"baseline":TEXT,"unit":TEXT,
 *  "target_ratio":X,"better":"lower"|"higher"}       ours/baseline must be at most X (lower) or at least X
 * {"kind":"row","row":ID,..., "source":ROW_ID,"target_max":X}  ours alone, from another row's results, at most X
 * {"kind":"row","row":ID,..., ["source":ROW_ID,]"target_min":X}  ours alone, at least X (the ratio is still shown)
 * {"kind":"row","row":ID,..., "source":ROW_ID [,"target_ratio":X,"better":...]}  another metric of that row's runs
 *                                      (e.g. the p99 of the runs whose ops/s another row reports), ratio as above
 * {"kind":"result","row":ID,"side":"baseline"|"ours", ...figures}  one run: a bench --json line plus row and side
 * </pre>
 * A later transport adds rows by emitting more row and result lines; nothing here names a transport.
 */
final class CompareReport {
    static final String BASELINE = "baseline";
    static final String OURS = "ours";

    /** One row of the table. {@code ratio} and the medians are NaN where there is nothing to compute them from. */
    record Row(String id, String label, String metric, String unit, String baseline, double baselineMedian,
            double oursMedian, double ratio, String target, boolean met, double[] baselineValues,
            double[] oursValues) {
    }

    private final List<JsonNode> meta = new ArrayList<>();
    private final List<Row> rows = new ArrayList<>();

    private CompareReport() {
    }

    /** Reads the collected lines and computes every row. */
    static CompareReport of(List<String> lines) {
        Map<String, JsonNode> defs = new LinkedHashMap<>();
        Map<String, List<JsonNode>> results = new LinkedHashMap<>();
        CompareReport report = new CompareReport();
        int n = 0;
        for (String line : lines) {
            n++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode node = parse(line, n);
            switch (node.path("kind").asText()) {
                case "meta" -> report.meta.add(node);
                case "row" -> defs.put(required(node, "row", n), node);
                case "result" -> results.computeIfAbsent(required(node, "row", n), k -> new ArrayList<>()).add(node);
                default -> throw new IllegalArgumentException("line " + n + ": expected kind meta, row or result, got "
                        + node.path("kind"));
            }
        }
        for (JsonNode def : defs.values()) {
            report.rows.add(row(def, results));
        }
        return report;
    }

    private static Row row(JsonNode def, Map<String, List<JsonNode>> results) {
        String id = def.get("row").asText();
        String metric = def.path("metric").asText();
        String source = def.path("source").asText(id);
        List<JsonNode> runs = results.getOrDefault(source, List.of());
        double[] baseline = values(runs, BASELINE, metric);
        double[] ours = values(runs, OURS, metric);
        double b = median(baseline);
        double o = median(ours);
        String target;
        boolean met;
        double ratio = def.has("target_max") ? Double.NaN : o / b;
        if (def.has("target_max")) {
            double max = def.get("target_max").asDouble();
            target = "<= " + format(max);
            met = ours.length > 0 && o <= max;
        } else if (def.has("target_min")) {
            double min = def.get("target_min").asDouble();
            target = ">= " + format(min);
            met = ours.length > 0 && o >= min;
        } else if (def.has("target_ratio")) {
            double t = def.get("target_ratio").asDouble();
            boolean lower = !def.path("better").asText("lower").equals("higher");
            target = (lower ? "<= " : ">= ") + format(t) + " x";
            met = !Double.isNaN(ratio) && (lower ? ratio <= t : ratio >= t);
        } else {
            target = "-";
            met = true;
        }
        return new Row(id, def.path("label").asText(id), metric, def.path("unit").asText(""),
                def.path("baseline").asText(""), b, o, ratio, target, met, baseline, ours);
    }

    private static double[] values(List<JsonNode> runs, String side, String metric) {
        return runs.stream().filter(r -> side.equals(r.path("side").asText()))
                .filter(r -> r.path(metric).isNumber()).mapToDouble(r -> r.get(metric).asDouble()).toArray();
    }

    /** The median, the mean of the middle two for an even count, NaN for none. */
    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] v = values.clone();
        Arrays.sort(v);
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    List<Row> rows() {
        return rows;
    }

    /** The table in Markdown, one line per row. */
    String table() {
        StringBuilder sb = new StringBuilder();
        sb.append("| row | baseline | baseline median | ours median | ours/baseline | target | met |\n");
        sb.append("|---|---|---:|---:|---:|---|---|\n");
        for (Row r : rows) {
            String unit = r.unit().isEmpty() ? "" : " " + r.unit();
            sb.append("| ").append(r.label()).append(" | ").append(r.baseline().isEmpty() ? "-" : r.baseline())
                    .append(" | ").append(Double.isNaN(r.baselineMedian()) ? "-" : format(r.baselineMedian()) + unit)
                    .append(" | ").append(Double.isNaN(r.oursMedian()) ? "-" : format(r.oursMedian()) + unit)
                    .append(" | ").append(Double.isNaN(r.ratio()) ? "-" : format(r.ratio()))
                    .append(" | ").append(r.target())
                    .append(" | ").append(r.met() ? "yes" : "NO").append(" |\n");
        }
        return sb.toString();
    }

    /** The summary for machines: meta facts and every row with its medians and the values they came from. */
    ObjectNode summary() {
        ObjectNode root = Json.MAPPER.createObjectNode();
        ArrayNode metaOut = root.putArray("meta");
        meta.forEach(metaOut::add);
        ArrayNode out = root.putArray("rows");
        for (Row r : rows) {
            ObjectNode o = out.addObject();
            o.put("row", r.id()).put("label", r.label()).put("metric", r.metric()).put("unit", r.unit())
                    .put("baseline", r.baseline());
            putNumber(o, "baseline_median", r.baselineMedian());
            putNumber(o, "ours_median", r.oursMedian());
            putNumber(o, "ratio", r.ratio());
            o.put("target", r.target()).put("met", r.met());
            ArrayNode bv = o.putArray("baseline_values");
            Arrays.stream(r.baselineValues()).forEach(bv::add);
            ArrayNode ov = o.putArray("ours_values");
            Arrays.stream(r.oursValues()).forEach(ov::add);
        }
        return root;
    }

    private static void putNumber(ObjectNode o, String field, double value) {
        if (Double.isNaN(value)) {
            o.putNull(field);
        } else {
            o.put(field, value);
        }
    }

    /** Three significant digits or so; whole numbers without decimals. */
    static String format(double v) {
        double a = Math.abs(v);
        String pattern = v == Math.rint(v) || a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f";
        return String.format(Locale.ROOT, pattern, v);
    }

    private static JsonNode parse(String line, int n) {
        try {
            return Json.MAPPER.readTree(line);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("line " + n + " is not JSON: " + e.getOriginalMessage());
        }
    }

    private static String required(JsonNode node, String field, int n) {
        if (!node.path(field).isTextual()) {
            throw new IllegalArgumentException("line " + n + ": missing text field '" + field + "'");
        }
        return node.get(field).asText();
    }

    /**
     * {@code CompareReport LINES.jsonl SUMMARY.json}: prints the table on stdout and writes the summary.
     * Exits 0 when every row met its target, 3 when one missed, 2 on bad input.
     */
    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: CompareReport LINES.jsonl SUMMARY.json");
            System.exit(2);
        }
        try {
            CompareReport report = of(Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8));
            Files.writeString(Path.of(args[1]),
                    Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(report.summary()) + "\n");
            System.out.print(report.table());
            System.exit(report.rows.stream().allMatch(Row::met) ? 0 : 3);
        } catch (IOException | UncheckedIOException | IllegalArgumentException e) {
            System.err.println("compare: " + e.getMessage());
            System.exit(2);
        }
    }
}
