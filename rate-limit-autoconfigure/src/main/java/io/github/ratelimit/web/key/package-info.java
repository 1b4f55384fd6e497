/**
 * Keys, internal: the key specs of a policy ({@code ip}, {@code user}, {@code header:}, {@code param:},
 * SpEL, {@code @bean}), their values and normalisation, the request's parameters and what a request that
 * cannot be read is refused with. Public only for the starter's own packages; not an API.
 */
@NullMarked
package io.github.ratelimit.web.key;

import org.jspecify.annotations.NullMarked;
