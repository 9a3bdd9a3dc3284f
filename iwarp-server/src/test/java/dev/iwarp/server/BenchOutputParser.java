package dev.iwarp.server;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads bench's {@code --output json} (one flat object) and {@code --output csv} (header and one row) back. */
final class BenchOutputParser {
    private BenchOutputParser() {
    }

    /** A flat JSON object of strings, numbers and null, as field name to text (strings unquoted). */
    static Map<String, String> json(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        int[] at = {0};
        expect(text, at, '{');
        while (true) {
            skipSpace(text, at);
            String key = string(text, at);
            expect(text, at, ':');
            skipSpace(text, at);
            String value;
            if (text.charAt(at[0]) == '"') {
                value = string(text, at);
            } else {
                int start = at[0];
                while (",} ".indexOf(text.charAt(at[0])) < 0) {
                    at[0]++;
                }
                value = text.substring(start, at[0]);
                if (!value.equals("null") && !value.equals("true") && !value.equals("false")) {
                    Double.parseDouble(value); // a JSON number
                }
            }
            if (m.put(key, value) != null) {
                throw new IllegalArgumentException("duplicate field " + key);
            }
            skipSpace(text, at);
            char c = text.charAt(at[0]++);
            if (c == '}') {
                if (at[0] != text.length()) {
                    throw new IllegalArgumentException("text after the object: " + text.substring(at[0]));
                }
                return m;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected , or } at " + (at[0] - 1) + ": " + text);
            }
        }
    }

    private static void skipSpace(String t, int[] at) {
        while (at[0] < t.length() && t.charAt(at[0]) == ' ') {
            at[0]++;
        }
    }

    private static void expect(String t, int[] at, char c) {
        skipSpace(t, at);
        if (t.charAt(at[0]++) != c) {
            throw new IllegalArgumentException("expected " + c + " at " + (at[0] - 1) + ": " + t);
        }
    }

    private static String string(String t, int[] at) {
        expect(t, at, '"');
        StringBuilder b = new StringBuilder();
        for (char c = t.charAt(at[0]++); c != '"'; c = t.charAt(at[0]++)) {
            b.append(c == '\\' ? t.charAt(at[0]++) : c);
        }
        return b.toString();
    }

    /** A header line and one row, fields quoted with "" when they hold commas. */
    static Map<String, String> csv(String text) {
        String[] lines = text.strip().split("\r?\n");
        if (lines.length != 2) {
            throw new IllegalArgumentException("expected a header and one row: " + text);
        }
        List<String> names = fields(lines[0]);
        List<String> values = fields(lines[1]);
        if (names.size() != values.size()) {
            throw new IllegalArgumentException(names.size() + " columns, " + values.size() + " values: " + text);
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            m.put(names.get(i), values.get(i));
        }
        return m;
    }

    private static List<String> fields(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder b = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted && c == '\\') {
                b.append(line.charAt(++i));
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                out.add(b.toString());
                b.setLength(0);
            } else {
                b.append(c);
            }
        }
        out.add(b.toString());
        return out;
    }
}
