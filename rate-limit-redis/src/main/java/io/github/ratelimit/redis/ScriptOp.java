package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;

/** What a script call does, and its operation argument. */
enum ScriptOp {

	/** Takes tokens (or a slot): the one operation that charges, so the one sent with a deadline. */
	ACQUIRE("acquire"),

	RELEASE("release"),

	/** Read-only: the check script, which writes nothing. */
	CHECK("check"),

	/** Not a script operation: a release of nothing, which every algorithm answers without a change. */
	PEEK("release"),

	/** Gives back what a receipt still holds (give-back.lua): the acquisition's max wait carries the mark. */
	GIVE_BACK("giveback");

	final byte[] arg;

	ScriptOp(String arg) {
		this.arg = arg.getBytes(StandardCharsets.US_ASCII);
	}
}
