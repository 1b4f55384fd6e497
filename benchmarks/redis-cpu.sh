#!/usr/bin/env bash
# Where the CPU of a Redis decision goes: runs RedisDecisionBenchmark methods one after the other (one JMH
# fork each, 16 threads, 100,000 keys), and in an 8 s window of each measured iteration reads from /proc the
# CPU of the redis-server, of the fork and of each of its threads (grouped by name), their context switches,
# and Redis' INFO commandstats; prints, per decision in the window, the client's and Redis' CPU, the time
# inside the script and the decisions per script call. Give the methods in the order to alternate, e.g.
#
#   benchmarks/redis-cpu.sh ours raw bucket4j ours raw bucket4j
#
# Options (before the methods): --jar=PATH (default benchmarks/target/benchmarks.jar, built by
# `mvn -B -q package -pl benchmarks -am -DskipTests`), --port=N (default 7779; the script starts and stops its
# own redis-server there), --warmup=S (default 20: on a loaded machine a shorter warm-up measures the JIT's
# compiling too), --jvm-args='...' (appended to the fork's, e.g. -D switches of an experiment).
# Needs Linux (/proc), redis-server and redis-cli on the PATH.
set -euo pipefail

jar=benchmarks/target/benchmarks.jar
port=7779
warmup=20
jvm_args=
methods=()
for arg in "$@"; do
	case "$arg" in
		--jar=*) jar=${arg#--jar=} ;;
		--port=*) port=${arg#--port=} ;;
		--warmup=*) warmup=${arg#--warmup=} ;;
		--jvm-args=*) jvm_args=${arg#--jvm-args=} ;;
		-*) echo "unknown option $arg" >&2; exit 2 ;;
		*) methods+=("$arg") ;;
	esac
done
if [ ${#methods[@]} -eq 0 ]; then
	echo "usage: $0 [--jar=PATH] [--port=N] [--warmup=S] [--jvm-args='...'] METHOD..." >&2
	exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ticks() { awk '{print $14 + $15}' "$1/stat"; }

threads() {
	for task in /proc/"$1"/task/*; do
		{ printf '%s %s ' "${task##*/}" "$(tr ' ' '_' < "$task/comm")"
			printf '%s ' "$(ticks "$task")"
			awk '/ctxt_switches/ { s += $2 } END { print s }' "$task/status"; } 2>/dev/null || true
	done
}

for method in "${methods[@]}"; do
	redis-server --port "$port" --save '' --appendonly no --daemonize yes --pidfile "$work/redis.pid" >/dev/null
	sleep 0.5
	redis=$(cat "$work/redis.pid")
	java -Dratelimit.benchmarks.redis.port="$port" -cp "$jar" org.openjdk.jmh.Main "RedisDecisionBenchmark.$method\$" \
		-f 1 -wi 1 -w "${warmup}s" -i 1 -r 12s ${jvm_args:+-jvmArgsAppend "$jvm_args"} > "$work/jmh.out" 2>&1 &
	runner=$!
	sleep $((warmup + 3))
	fork=$(pgrep -P "$runner" -f ForkedMain | head -1)
	read -r _ _ _ _ idle0 _ _ _ steal0 _ < /proc/stat
	redis0=$(ticks /proc/"$redis"); fork0=$(ticks /proc/"$fork")
	redis-cli -p "$port" config resetstat >/dev/null
	threads "$fork" > "$work/threads0"
	sleep 8
	threads "$fork" > "$work/threads1"
	read -r _ _ _ _ idle1 _ _ _ steal1 _ < /proc/stat
	redis1=$(ticks /proc/"$redis"); fork1=$(ticks /proc/"$fork")
	redis-cli -p "$port" info commandstats | tr -d '\r' > "$work/stats"
	wait "$runner" || true
	redis-cli -p "$port" shutdown nosave >/dev/null || true
	score=$(awk '/^RedisDecisionBenchmark/ { print $(NF - 1) }' "$work/jmh.out")
	awk -v method="$method" -v score="${score:-?}" -v redis=$((redis1 - redis0)) -v fork=$((fork1 - fork0)) \
		-v idle=$((idle1 - idle0)) -v steal=$((steal1 - steal0)) '
		FILENAME ~ /stats$/ && /^cmdstat_/ {
			split($0, kv, /[:=,]/); name = substr(kv[1], 9); calls[name] = kv[3]; usec[name] = kv[5]; next }
		FILENAME ~ /threads0$/ { t0[$1] = $3; c0[$1] = $4; next }
		FILENAME ~ /threads1$/ {
			name = $2; sub(/[-#_]?[0-9]+(-[0-9]+)?$/, "", name)
			t[name] += $3 - t0[$1]; c[name] += $4 - c0[$1]; next }
		END {
			# One SET per decision (all allowed); Bucket4j: one EVAL of its compare-and-swap per decision.
			n = (method == "bucket4j") ? calls["eval"] : calls["set"]
			printf "%s: %s decisions/s (JMH); in the 8 s window %d decisions/s, machine idle %d and steal %d ticks of 1,600\n",
				method, score, n / 8, idle, steal
			if (n == 0) exit
			printf "  per decision: client %.1f us CPU, Redis %.1f us CPU", fork * 10000 / n, redis * 10000 / n
			if (calls["evalsha"] > 0)
				printf ", %.1f us inside scripts, %.2f decisions per call", usec["evalsha"] / n, n / calls["evalsha"]
			printf "\n  client threads, us CPU (context switches) per decision:"
			listed = 0
			for (name in t) if (t[name] > 0) { printf " %s %.1f (%.2f);", name, t[name] * 10000 / n, c[name] / n; listed += t[name] }
			# Threads that ended, or could not be read, in the window.
			printf " not listed %.1f\n", (fork - listed) * 10000 / n
		}' "$work/stats" "$work/threads0" "$work/threads1"
done
