#!/usr/bin/env bash
# Runs every benchmark in one go (about 26 minutes on a 2-core machine): JMH decision throughput and
# scaling against Bucket4j and the floor, Redis decision throughput against Bucket4j on Lettuce and a raw
# EVALSHA loop (needs redis-server; the run starts and stops its own), memory per key (heap, and Redis
# MEMORY USAGE per algorithm), and the sample apps' HTTP overhead, servlet and reactive (with wrk
# when installed, else a JDK HttpClient load generator). Writes benchmarks/results/results.json and
# results.md (JSON written with Jackson), prints the tables with the ratios ours/peer, and draws
# docs/benchmarks.png (with JFreeChart).
#
#   benchmarks/run.sh                     everything
#   benchmarks/run.sh --only=local,http   some sections (local, keys, threads, redis, memory, http,
#                                         http-reactive)
#   benchmarks/run.sh --quick             short iterations, to check that everything runs
#   benchmarks/run.sh report              measure nothing: print benchmarks/results/results.json's tables
#                                         and draw its chart again (--results=DIR, --chart=FILE)
#   MVN_FLAGS=-o benchmarks/run.sh        build offline
#
# Run it on an otherwise idle machine: other processes on the same cores show up in every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q ${MVN_FLAGS:-} package -pl benchmarks,sample-app,sample-reactive-app -am -DskipTests
exec java -jar benchmarks/target/benchmarks.jar "$@"
