package dev.iwarp.server;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The values a numeric {@code @Option} accepts, inclusive. {@link CommandLineChecks} checks every option that
 * carries it once the command line is parsed, for every subcommand alike: a value outside the range is a usage
 * error (exit 2, one line naming the option and the range). Put it next to the {@code @Option} annotation.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
@interface Range {
    /** Smallest value accepted. */
    long min() default 0;

    /** Largest value accepted; the default means "the field type's largest". */
    long max() default Long.MAX_VALUE;
}
