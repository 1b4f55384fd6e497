package io.github.ratelimit.web.servlet;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

import jakarta.servlet.DispatcherType;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.web.servlet.AbstractFilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.boot.web.servlet.ServletContextInitializerBeans;

import io.github.ratelimit.core.RateLimitConfigurationException;

/**
 * With {@code rate-limit.delay.park=true}, fails the start-up when a filter of the application would not
 * see a parked request resume: a resumed request comes back as an async dispatch, and a filter mapped to
 * request dispatches only (a plain {@code Filter} bean by default, Spring Security with
 * {@code spring.security.filter.dispatcher-types=request}) would then not run before its handler, which
 * could let it past an authentication filter. Knows the filters the application registers as beans;
 * filters registered otherwise (a {@code web.xml}, a {@code ServletContainerInitializer}) are the
 * application's to map.
 */
final class ParkingCheck implements SmartInitializingSingleton {

	private final ListableBeanFactory beanFactory;

	ParkingCheck(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<String> requestOnly = new ArrayList<>();
		for (ServletContextInitializer initializer : new ServletContextInitializerBeans(this.beanFactory)) {
			if (initializer instanceof AbstractFilterRegistrationBean<?> filter && filter.isEnabled()) {
				EnumSet<DispatcherType> types = filter.determineDispatcherTypes();
				if (types.contains(DispatcherType.REQUEST) && !types.contains(DispatcherType.ASYNC)) {
					requestOnly.add(filter.getFilterName());
				}
			}
		}
		if (!requestOnly.isEmpty()) {
			throw new RateLimitConfigurationException("rate-limit.delay.park",
					"a parked request resumes as an async dispatch, which the filters " + requestOnly
							+ " do not see: they would not run before its handler",
					"Map these filters to async dispatches too (FilterRegistrationBean.setDispatcherTypes(REQUEST,"
							+ " ASYNC), spring.security.filter.dispatcher-types), or leave rate-limit.delay.park off");
		}
	}

}
