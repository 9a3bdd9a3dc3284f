package dev.iwarp.verbs;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verbs API names no engine type: no public or protected member of a public {@code dev.iwarp.verbs} class
 * takes or returns the STag table or a tagged buffer (ddp-codec's Data Sink, RFC 5041 §7.1, which the engine
 * reaches through {@code VerbsAccess}), nor a type of the engine's or the internal packages.
 */
class VerbsApiSurfaceTest {
    private static final List<String> ENGINE_TYPES = List.of("dev.iwarp.ddp.TaggedBufferTable",
            "dev.iwarp.ddp.TaggedBuffer", "dev.iwarp.rdmap.engine.", "dev.iwarp.verbs.internal.");

    @Test
    void publicMembersNameNoEngineType() throws Exception {
        List<Class<?>> api = apiClasses();
        assertTrue(api.contains(RdmaDevice.class) && api.contains(QueuePair.class), String.valueOf(api));
        List<String> leaks = new ArrayList<>();
        for (Class<?> c : api) {
            for (Method m : c.getDeclaredMethods()) {
                if (exposed(m.getModifiers()) && !m.isSynthetic()) {
                    check(m.toGenericString(), leaks);
                }
            }
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (exposed(k.getModifiers())) {
                    check(k.toGenericString(), leaks);
                }
            }
            for (Field f : c.getDeclaredFields()) {
                if (exposed(f.getModifiers())) {
                    check(f.toGenericString(), leaks);
                }
            }
        }
        assertEquals(List.of(), leaks);
    }

    private static boolean exposed(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static void check(String signature, List<String> leaks) {
        for (String t : ENGINE_TYPES) {
            if (signature.contains(t)) {
                leaks.add(signature);
                return;
            }
        }
    }

    /** The public classes (nested ones included) compiled into {@code dev.iwarp.verbs}. */
    private static List<Class<?>> apiClasses() throws Exception {
        Path root = Path.of(RdmaDevice.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path dir = root.resolve(RdmaDevice.class.getPackageName().replace('.', '/'));
        List<Class<?>> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files.sorted()::iterator) {
                String file = p.getFileName().toString();
                if (!file.endsWith(".class")) {
                    continue;
                }
                Class<?> c = Class.forName(RdmaDevice.class.getPackageName() + "." + file.replace(".class", ""),
                        false, RdmaDevice.class.getClassLoader());
                if (isApi(c)) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    private static boolean isApi(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass()) {
                return false;
            }
        }
        return true;
    }
}
