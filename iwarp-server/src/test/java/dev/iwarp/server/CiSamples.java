package dev.iwarp.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The samples only a CI step can produce (stock perftest and Linux siw in the VM, the soak), compared with what that
 * step printed. Such a block is marked {@code <!-- compared by CI with PATH: REASON -->}: PATH, from the checkout's
 * root, is the transcript the step writes (the command line as the block shows it, then its output). The comparison
 * is by shape: every figure (a decimal or hex number, a colon-separated GID or MAC) stands for any figure, a run of
 * blanks for one blank, and a block line {@code ...} for any number of lines. {@code .ci/run} runs {@link #main}
 * after those steps; a block whose transcript differs or is missing fails it.
 */
final class CiSamples {
    static final String MARKER = "<!-- compared by CI with ";
    private static final Pattern MARKED = Pattern.compile(Pattern.quote(MARKER) + "(\\S+?):? .*-->");
    private static final Pattern GID = Pattern.compile("\\b\\p{XDigit}{2}(?::\\p{XDigit}{2}){5,}\\b");
    private static final Pattern NUMBER = Pattern.compile("\\b(?:0x\\p{XDigit}+|\\p{XDigit}*\\d\\p{XDigit}*)\\b");

    private CiSamples() {
    }

    /** A marked block: where it is, the transcript it is held against, its lines (without the fences). */
    record Sample(String where, String transcript, List<String> block) {
    }

    /** The transcript a marker line names, or null when {@code marker} is not a CI marker. */
    static String transcriptOf(String marker) {
        Matcher m = MARKED.matcher(marker.trim());
        return m.matches() ? m.group(1) : null;
    }

    /** The marked blocks of one document. */
    static List<Sample> samples(String doc, List<String> lines) {
        List<Sample> found = new ArrayList<>();
        for (int i = 0; i + 1 < lines.size(); i++) {
            String transcript = transcriptOf(lines.get(i));
            if (transcript == null) {
                continue;
            }
            int open = i + 1;
            while (open < lines.size() && lines.get(open).isBlank()) {
                open++;
            }
            int close = open + 1;
            while (close < lines.size() && !lines.get(close).startsWith("```")) {
                close++;
            }
            if (open < lines.size() && lines.get(open).equals("```") && close < lines.size()) {
                found.add(new Sample(doc + ":" + (open + 1), transcript, List.copyOf(lines.subList(open + 1, close))));
            }
        }
        return found;
    }

    /** A line with its figures masked and its blanks collapsed. */
    static String shape(String line) {
        String s = GID.matcher(line).replaceAll("#");
        return NUMBER.matcher(s).replaceAll("#").replaceAll("\\s+", " ").strip();
    }

    /** Null when {@code printed} has {@code block}'s shape, else the first difference found, in words. */
    static String difference(List<String> block, List<String> printed) {
        List<String> out = new ArrayList<>(printed);
        while (!out.isEmpty() && out.get(out.size() - 1).isBlank()) {
            out.remove(out.size() - 1);
        }
        int[] furthest = {-1, -1};
        if (matches(block, 0, out, 0, furthest)) {
            return null;
        }
        int b = furthest[0];
        int p = furthest[1];
        if (b >= block.size()) {
            return "the block ends, but the step printed more from its line " + (p + 1) + ": " + out.get(p);
        }
        return "block line " + (b + 1) + " '" + block.get(b) + "' does not match "
                + (p < out.size() ? "printed line " + (p + 1) + " '" + out.get(p) + "'" : "the end of what was printed");
    }

    private static boolean matches(List<String> block, int b, List<String> out, int p, int[] furthest) {
        if (b == block.size() && p == out.size()) {
            return true;
        }
        if (b > furthest[0] || b == furthest[0] && p > furthest[1]) {
            furthest[0] = b;
            furthest[1] = p;
        }
        if (b == block.size()) {
            return false;
        }
        if (block.get(b).strip().equals("...")) {
            for (int k = p; k <= out.size(); k++) {
                if (matches(block, b + 1, out, k, furthest)) {
                    return true;
                }
            }
            return false;
        }
        return p < out.size() && shape(block.get(b)).equals(shape(out.get(p))) && matches(block, b + 1, out, p + 1, furthest);
    }

    /** Checks every marked block of the documents against its transcript; {@code args[0]}: the checkout (".") */
    public static void main(String[] args) throws IOException {
        Path root = Path.of(args.length > 0 ? args[0] : ".").normalize();
        int bad = 0;
        int checked = 0;
        for (Path doc : DocFiles.all(root.resolve("iwarp-server"))) {
            Path d = doc.normalize();
            for (Sample s : samples(d.toString(), Files.readAllLines(d))) {
                checked++;
                Path transcript = root.resolve(s.transcript());
                String why = !Files.isRegularFile(transcript) ? "no transcript (did its step run?)"
                        : difference(s.block(), Files.readAllLines(transcript));
                System.out.println("ci sample " + s.where() + " against " + s.transcript() + ": "
                        + (why == null ? "same shape" : "DIFFERS: " + why));
                bad += why == null ? 0 : 1;
            }
        }
        System.out.println("ci samples: " + checked + " compared, " + bad + " differ");
        if (bad > 0 || checked == 0) {
            System.exit(1);
        }
    }
}
