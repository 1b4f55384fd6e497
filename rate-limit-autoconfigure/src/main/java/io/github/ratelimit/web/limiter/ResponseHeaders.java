package io.github.ratelimit.web.limiter;

/**
 * The headers of a response not yet committed, as {@link RateLimitHeaders} writes them, on any web stack.
 */
public interface ResponseHeaders {

	/**
	 * Sets a header, replacing its values.
	 * @param name the header
	 * @param value its value
	 */
	void set(String name, String value);

	/**
	 * Removes a header an earlier write of the same request left, if any.
	 * @param name the header
	 */
	void remove(String name);

}
