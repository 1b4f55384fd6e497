/**
 * A controller for the plan and exemption tests, kept out of the test application's component scan.
 */
package io.github.ratelimit.plans;
