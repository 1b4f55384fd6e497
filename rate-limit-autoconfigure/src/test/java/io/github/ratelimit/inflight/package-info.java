/**
 * A controller for the concurrency-limit tests, outside the scanned test package (only the tests that
 * import it have its policies).
 */
package io.github.ratelimit.inflight;
