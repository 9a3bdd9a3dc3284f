package dev.iwarp.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The documents whose samples the doc tests compare, as paths from this module's directory (where surefire runs):
 * this module's README, the root README and the pages under {@code docs/iwarp-server/}.
 */
final class DocFiles {
    private DocFiles() {
    }

    /** The folder of this module's longer pages (design notes, bench's method, perftest's protocol). */
    static final Path DOCS = Path.of("..", "docs", "iwarp-server");

    static List<Path> all() {
        return all(Path.of(""));
    }

    /** The same documents from {@code module}, this module's directory (from the checkout: {@code iwarp-server}). */
    static List<Path> all(Path module) {
        List<Path> all = new ArrayList<>(List.of(module.resolve("README.md"), module.resolve(Path.of("..", "README.md"))));
        Path docs = module.resolve(DOCS);
        if (Files.isDirectory(docs)) {
            try (Stream<Path> pages = Files.list(docs)) {
                pages.filter(p -> p.toString().endsWith(".md")).sorted().forEach(all::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return all;
    }
}
