package io.github.ratelimit.redis;

import java.util.List;

/**
 * One request's part of a script reply, without copying it: {@code values[from, to)}, and the server time
 * the script read (epoch microseconds). The part is 8 integers per acquisition, one compact integer
 * (a single acquisition of a bucket, see {@code token-bucket.lua}), or {@code -1} alone when the script
 * ran past the request's deadline and changed nothing. Immutable once handed out (nobody writes
 * {@code values}).
 */
record ReplyPart(long[] values, int from, int to, long serverTime) {

	/**
	 * Reads a whole reply of a script call for one request: its part, then the server time.
	 * @param reply the reply's integers
	 * @return the part
	 * @throws IllegalStateException when the reply is empty
	 */
	static ReplyPart of(List<Long> reply) {
		int size = reply.size();
		if (size == 0) {
			throw new IllegalStateException("Unexpected reply from a rate limit script: " + reply);
		}
		long[] values = new long[size];
		for (int i = 0; i < size; i++) {
			values[i] = reply.get(i);
		}
		return new ReplyPart(values, 0, size - 1, values[size - 1]);
	}

	int size() {
		return this.to - this.from;
	}

	long get(int index) {
		return this.values[this.from + index];
	}

	/** Says whether the script ran after the request's deadline (and changed nothing). */
	boolean isPastDeadline() {
		return size() == 1 && get(0) == -1;
	}

	/**
	 * Says whether the part shows tokens taken: all or nothing, so the first decision tells.
	 * @param acquisitions how many acquisitions the request has
	 */
	boolean tookTokens(int acquisitions) {
		if (size() == 1 && acquisitions == 1) {
			// A compact decision: even when allowed (-1 is past the deadline).
			return get(0) >= 0 && (get(0) & 1) == 0;
		}
		return size() == 8 * acquisitions && get(0) == 1;
	}

	@Override
	public String toString() {
		StringBuilder text = new StringBuilder("[");
		for (int i = this.from; i < this.to; i++) {
			text.append((i > this.from) ? ", " : "").append(this.values[i]);
		}
		return text.append("] at ").append(this.serverTime).toString();
	}
}
