package io.github.ratelimit.web.policy;

import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameter;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * Refuses a runtime change ({@code POST /actuator/ratelimits/{policy}}) that carries a field the change
 * does not take, such as a misspelt {@code brust}: actuator hands an operation only the fields it
 * declares, so without this check {@code {"limit": 4, "brust": 8}} would change the limit and drop the
 * burst without a word. Answers 400 naming the field, before anything is changed.
 */
public final class ChangeFieldsCheck implements OperationInvokerAdvisor {

	private static final EndpointId RATELIMITS = EndpointId.of("ratelimits");

	@Override
	public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
			OperationInvoker invoker) {
		if (!RATELIMITS.equals(endpointId) || operationType != OperationType.WRITE) {
			return invoker;
		}
		Set<String> known = parameters.stream().map(OperationParameter::getName).collect(Collectors.toUnmodifiableSet());
		// The arguments are the path's selectors, the query's parameters and the JSON body's fields.
		return (context) -> context.getArguments()
			.keySet()
			.stream()
			.filter((name) -> !known.contains(name))
			.findFirst()
			.<Object>map((unknown) -> badRequest(context, unknown))
			.orElseGet(() -> invoker.invoke(context));
	}

	private static WebEndpointResponse<Object> badRequest(InvocationContext context, String field) {
		return PolicyChanges.answer(WebEndpointResponse.STATUS_BAD_REQUEST, "policy",
				String.valueOf(context.getArguments().get("policy")), "field", PolicyChanges.shown(field), "message",
				"a change has no field '" + PolicyChanges.shown(field) + "'; nothing was changed", "action",
				"Send one or more of limit, period, burst and plans, e.g. {\"limit\": 200}");
	}

}
