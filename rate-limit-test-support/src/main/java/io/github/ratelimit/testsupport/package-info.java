/**
 * What the tests and the benchmarks share: {@link io.github.ratelimit.testsupport.RedisProcess}, a real
 * Redis server on a free loopback port, {@link io.github.ratelimit.testsupport.Http}, a small HTTP
 * client for a running server, and {@link io.github.ratelimit.testsupport.BareState}, one key's
 * algorithm state without a store. Not published.
 */
package io.github.ratelimit.testsupport;
