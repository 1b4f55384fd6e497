/**
 * Client addresses, internal: the address a request comes from, read from the connection or from a
 * forwarding header that trusted proxies wrote ({@code rate-limit.client-ip.*}), address ranges and their
 * parsing. Public only for the starter's own packages; not an API.
 */
@NullMarked
package io.github.ratelimit.web.clientip;

import org.jspecify.annotations.NullMarked;
