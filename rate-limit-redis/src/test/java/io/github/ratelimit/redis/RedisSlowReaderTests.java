package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.Limit;
import io.github.ratelimit.core.OnFailure;
import io.github.ratelimit.testsupport.RedisProcess;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An instance too busy to read Redis' answers in time (a cold JVM, a GC pause, CPUs shared with a
 * flood) is not a Redis outage: a real Redis behind a proxy that hands its replies to the client late,
 * while commands reach Redis at once, so that scripts run before their deadline. The calls time out and
 * on-failure decides them; the late replies, of scripts Redis ran in time, close the breaker that those
 * timeouts opened, long before its probe interval (a minute here), whereas a Redis that ran the script
 * after the deadline keeps it open.
 */
class RedisSlowReaderTests {

	@RegisterExtension
	static final RedisExtension redis = new RedisExtension();

	private static final Limit LIMIT = Limit.builder().limit(1000).period(Duration.ofMinutes(1)).build();

	private final List<RedisRateLimitStore> stores = new ArrayList<>();

	private ReplyHoldingProxy proxy;

	private LettuceConnectionFactory factory;

	@BeforeEach
	void connect() throws IOException {
		redis.commands().flushall();
		this.proxy = new ReplyHoldingProxy(redis.port());
		this.factory = RedisExtension.fastReconnectingFactory(this.proxy.port());
	}

	@AfterEach
	void close() {
		this.stores.forEach(RedisRateLimitStore::close);
		this.factory.destroy();
		this.proxy.close();
	}

	private RedisRateLimitStore store(boolean coalescing) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.factory)
			.timeout(Duration.ofMillis(100))
			.onFailure(OnFailure.DENY)
			.coalescing(coalescing)
			.rejectionCache(Duration.ZERO)
			.breaker(2, Duration.ofMinutes(1))
			.build();
		this.stores.add(store);
		// Answered in time: the store knows the server's clock, so acquisitions carry a deadline.
		assertThat(store.tryAcquire(new Acquisition("api", LIMIT, "warm", 1)).isAllowed()).isTrue();
		return store;
	}

	@Test
	void lateRepliesOfScriptsRunInTimeCloseTheBreaker() throws Exception {
		lateRepliesCloseTheBreaker(store(false));
	}

	@Test
	void lateRepliesOfCoalescedCallsCloseTheBreaker() throws Exception {
		lateRepliesCloseTheBreaker(store(true));
	}

	private void lateRepliesCloseTheBreaker(RedisRateLimitStore store) throws Exception {
		this.proxy.holdReplies(true);
		// Two at once: both time out (two calls in flight, coalescing sends each alone); no reply can come.
		List<CompletableFuture<Boolean>> calls = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			Acquisition acquisition = new Acquisition("api", LIMIT, "k" + i, 1);
			calls.add(CompletableFuture.supplyAsync(() -> store.tryAcquire(acquisition).isAllowed()));
		}
		for (CompletableFuture<Boolean> call : calls) {
			assertThat(call.get(5, TimeUnit.SECONDS)).as("denied by on-failure").isFalse();
		}
		assertThat(store.errors()).isEqualTo(2);
		assertThat(store.isAvailable()).as("two timeouts in a row opened the breaker").isFalse();
		// The replies come: Redis ran both scripts in time.
		this.proxy.holdReplies(false);
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (!store.isAvailable() && System.nanoTime() < deadline) {
			RedisProcess.sleep(10);
		}
		assertThat(store.isAvailable()).as("closed by the late replies, not after the minute's probe").isTrue();
		assertThat(store.tryAcquire(new Acquisition("api", LIMIT, "k9", 1)).isAllowed()).as("decided by Redis").isTrue();
		// The late replies' tokens were given back (no late charges).
		deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (store.giveBacks.lateReplies.sum() < 2 && System.nanoTime() < deadline) {
			RedisProcess.sleep(10);
		}
		assertThat(store.giveBacks.lateReplies.sum()).isEqualTo(2);
	}

	@Test
	void scriptsRedisRanPastTheirDeadlineKeepTheBreakerOpen() throws Exception {
		RedisRateLimitStore store = store(false);
		// Frozen: Redis itself runs the scripts late (after their deadline, once thawed), then replies at once.
		redis.process().freeze();
		try {
			List<CompletableFuture<Boolean>> calls = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				Acquisition acquisition = new Acquisition("api", LIMIT, "k" + i, 1);
				calls.add(CompletableFuture.supplyAsync(() -> store.tryAcquire(acquisition).isAllowed()));
			}
			for (CompletableFuture<Boolean> call : calls) {
				assertThat(call.get(5, TimeUnit.SECONDS)).isFalse();
			}
		}
		finally {
			redis.process().thaw();
		}
		// The late replies come at once: they are read, and leave the breaker open.
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (store.giveBacks.lateRead.sum() < 2 && System.nanoTime() < deadline) {
			RedisProcess.sleep(10);
		}
		assertThat(store.giveBacks.lateRead.sum()).as("late replies read").isEqualTo(2);
		assertThat(store.isAvailable()).as("an outage of Redis' own: open until the probe").isFalse();
	}

	/**
	 * Forwards a client's commands to Redis at once, and Redis' replies to the client in order, holding
	 * them while {@link #holdReplies(boolean) told to}: a reply cannot beat a timeout however slow the
	 * machine is.
	 */
	static final class ReplyHoldingProxy implements AutoCloseable {

		private final Object released = new Object();

		private boolean holding;

		private final ServerSocket server;

		private final List<Socket> sockets = new CopyOnWriteArrayList<>();

		ReplyHoldingProxy(int redisPort) throws IOException {
			this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
			daemon(() -> {
				while (!this.server.isClosed()) {
					try {
						Socket client = this.server.accept();
						Socket upstream = new Socket(InetAddress.getLoopbackAddress(), redisPort);
						client.setTcpNoDelay(true);
						upstream.setTcpNoDelay(true);
						this.sockets.add(client);
						this.sockets.add(upstream);
						daemon(() -> copy(client, upstream, false));
						daemon(() -> copy(upstream, client, true));
					}
					catch (IOException ex) {
						return;
					}
				}
			});
		}

		void holdReplies(boolean hold) {
			synchronized (this.released) {
				this.holding = hold;
				this.released.notifyAll();
			}
		}

		private void awaitRelease() throws InterruptedException {
			synchronized (this.released) {
				while (this.holding) {
					this.released.wait();
				}
			}
		}

		int port() {
			return this.server.getLocalPort();
		}

		private void copy(Socket from, Socket to, boolean held) {
			LinkedBlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
			if (held) {
				daemon(() -> {
					try {
						OutputStream out = to.getOutputStream();
						while (true) {
							byte[] chunk = queue.take();
							awaitRelease();
							out.write(chunk);
							out.flush();
						}
					}
					catch (IOException | InterruptedException ex) {
						closeQuietly(from);
						closeQuietly(to);
					}
				});
			}
			try (InputStream in = from.getInputStream()) {
				OutputStream out = to.getOutputStream();
				byte[] buffer = new byte[8192];
				int read;
				while ((read = in.read(buffer)) >= 0) {
					if (held) {
						queue.add(Arrays.copyOf(buffer, read));
					}
					else {
						out.write(buffer, 0, read);
						out.flush();
					}
				}
			}
			catch (IOException ex) {
				// closed
			}
			closeQuietly(from);
			closeQuietly(to);
		}

		private static void daemon(Runnable runnable) {
			Thread thread = new Thread(runnable, "reply-holding-proxy");
			thread.setDaemon(true);
			thread.start();
		}

		private static void closeQuietly(Socket socket) {
			try {
				socket.close();
			}
			catch (IOException ex) {
				// closed
			}
		}

		@Override
		public void close() {
			holdReplies(false);
			try {
				this.server.close();
			}
			catch (IOException ex) {
				// closed
			}
			this.sockets.forEach(ReplyHoldingProxy::closeQuietly);
		}

	}

}
