package io.github.ratelimit.it;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

import io.github.ratelimit.test.ManualClock;
import io.github.ratelimit.web.KeyResolver;

/**
 * The application the end-to-end tests run: a few controllers, Spring Security with HTTP basic
 * (anonymous requests allowed), and a manual clock so that tests move time instead of sleeping.
 */
@SpringBootApplication
public class TestApplication {

	@Bean
	ManualClock rateLimitClock() {
		return new ManualClock();
	}

	@Bean
	RecordingDelay requestDelay() {
		return new RecordingDelay();
	}

	@Bean
	KeyResolver tenantKey() {
		return (HttpServletRequest request) -> request.getHeader("X-Tenant");
	}

	@Bean
	SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.httpBasic(Customizer.withDefaults())
			.csrf((csrf) -> csrf.disable())
			.build();
	}

	@Bean
	InMemoryUserDetailsManager users() {
		return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}secret").roles("USER").build(),
				User.withUsername("bob").password("{noop}secret").roles("USER").build());
	}
}
