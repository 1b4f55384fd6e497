package io.github.ratelimit.web.servlet;

import java.util.List;

import jakarta.servlet.DispatcherType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.web.servlet.AbstractFilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletContextInitializerBeans;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * Decides, once the application's beans exist, whether a waiting request is parked with the Servlet async
 * API ({@code rate-limit.delay.park}). A resumed request comes back as an async dispatch, and a filter mapped
 * to request dispatches only (a plain {@code Filter} bean by default, Spring Security with
 * {@code spring.security.filter.dispatcher-types=request}) would then not run before its handler, which
 * could let it past an authentication filter. So requests are parked only when every filter registered as a
 * bean sees async dispatches too: unset, the start-up logs the filters that keep waiting requests on their
 * threads; {@code true} fails the start-up naming them; {@code false} never parks. Filters registered
 * otherwise (a {@code web.xml}, a {@code ServletContainerInitializer}) are the application's to map.
 */
final class ParkingCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(ParkingCheck.class);

	private final ListableBeanFactory beanFactory;

	private final @Nullable Boolean park;

	/** Whether waiting requests are parked; nothing is, until the application's beans exist. */
	private volatile boolean parks;

	ParkingCheck(ListableBeanFactory beanFactory, @Nullable Boolean park) {
		this.beanFactory = beanFactory;
		this.park = park;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (Boolean.FALSE.equals(this.park)) {
			return;
		}
		List<String> requestOnly;
		try {
			requestOnly = requestOnlyFilters();
		}
		catch (RuntimeException ex) {
			if (this.park != null) {
				throw ex;
			}
			// A registration the container itself would refuse (no filter): the start-up is not ours to fail.
			logger.debug("Requests that wait for their turn hold their threads: the filters cannot be told", ex);
			return;
		}
		if (requestOnly.isEmpty()) {
			this.parks = true;
		}
		else if (this.park == null) {
			logger.info("Requests that wait for their turn hold their threads: the filters " + requestOnly
					+ " do not see the async dispatch that would resume a parked request. Map them to async"
					+ " dispatches too (FilterRegistrationBean.setDispatcherTypes(REQUEST, ASYNC)) to park them,"
					+ " or set rate-limit.delay.park=false to say so");
		}
		else {
			throw new RateLimitConfigurationException("rate-limit.delay.park",
					"a parked request resumes as an async dispatch, which the filters " + requestOnly
							+ " do not see: they would not run before its handler",
					"Map these filters to async dispatches too (FilterRegistrationBean.setDispatcherTypes(REQUEST,"
							+ " ASYNC), spring.security.filter.dispatcher-types), or leave rate-limit.delay.park unset");
		}
	}

	private List<String> requestOnlyFilters() {
		return new ServletContextInitializerBeans(this.beanFactory).stream()
			.filter(AbstractFilterRegistrationBean.class::isInstance)
			.map((initializer) -> (AbstractFilterRegistrationBean<?>) initializer)
			.filter((filter) -> filter.isEnabled() && filter.determineDispatcherTypes().contains(DispatcherType.REQUEST)
					&& !filter.determineDispatcherTypes().contains(DispatcherType.ASYNC))
			.map(AbstractFilterRegistrationBean::getFilterName)
			.toList();
	}

	/** Whether a waiting request may be parked. */
	boolean parks() {
		return this.parks;
	}

}
