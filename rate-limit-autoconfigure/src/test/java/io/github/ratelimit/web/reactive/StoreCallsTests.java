package io.github.ratelimit.web.reactive;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CaffeineRateLimitStore;
import io.github.ratelimit.core.Decision;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.Receipt;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which store calls a reactive application makes on its event loop: all of the in-process store's, the
 * admissions of a store that implements {@code admitAllAsync} itself, none of any other store's.
 */
class StoreCallsTests {

	@Test
	void theInProcessStoreIsCalledInline() {
		assertThat(StoreCalls.of(new CaffeineRateLimitStore(10, RateLimitClock.SYSTEM)))
			.isEqualTo(StoreCalls.INLINE);
	}

	@Test
	void aStoreOfItsOwnAsynchronousAdmissionIsAskedOnTheEventLoop() {
		assertThat(StoreCalls.of(new AsyncStore())).isEqualTo(StoreCalls.ASYNC);
	}

	@Test
	void anyOtherStoreIsCalledOffTheEventLoop() {
		assertThat(StoreCalls.of(new BlockingStore())).isEqualTo(StoreCalls.BLOCKING);
	}

	/** A store whose calls may block: it implements only the blocking methods. */
	static class BlockingStore implements RateLimitStore {

		@Override
		public Decision tryAcquire(Acquisition acquisition) {
			return Decision.allowed(1, 1, 0, 0);
		}

		@Override
		public Decision release(Acquisition acquisition) {
			return Decision.allowed(1, 1, 0, 0);
		}

		@Override
		public Decision peek(Acquisition acquisition) {
			return Decision.allowed(1, 1, 0, 0);
		}

		@Override
		public void reset(String limitId, String key) {
		}

	}

	/** A store that admits without blocking. */
	static class AsyncStore extends BlockingStore {

		@Override
		public CompletionStage<List<Receipt>> admitAllAsync(List<Acquisition> acquisitions) {
			return CompletableFuture.supplyAsync(() -> admitAll(acquisitions));
		}

	}

}
