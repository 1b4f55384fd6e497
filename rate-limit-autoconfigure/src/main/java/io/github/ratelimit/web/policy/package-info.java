/**
 * Policies, internal: what {@code rate-limit.*} and {@code @RateLimited} define, plans, exemptions, path
 * rules, the resolution of the policies a request meets, and runtime changes. Public only for the
 * starter's own packages; not an API.
 */
@NullMarked
package io.github.ratelimit.web.policy;

import org.jspecify.annotations.NullMarked;
