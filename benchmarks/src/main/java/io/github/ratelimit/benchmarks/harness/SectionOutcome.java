package io.github.ratelimit.benchmarks.harness;

import org.jspecify.annotations.Nullable;

/**
 * How one section of a run ended: with its result, or with the reason it could not measure.
 *
 * @param section the section
 * @param result what it measured, or {@code null} when it failed
 * @param failure why it failed, or {@code null}
 * @param seconds how long it ran
 */
public record SectionOutcome(Section section, @Nullable SectionResult result, @Nullable String failure, long seconds) {
}
