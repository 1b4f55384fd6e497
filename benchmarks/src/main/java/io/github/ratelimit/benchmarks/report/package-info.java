/**
 * What a run writes: the tables (console and Markdown), the results JSON and the chart.
 */
@NullMarked
package io.github.ratelimit.benchmarks.report;

import org.jspecify.annotations.NullMarked;
