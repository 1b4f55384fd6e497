#!/usr/bin/env python3
"""Cold-start flood of the sample app on Redis: see README.md. Only 127.0.0.1, bounded in time."""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(port, path, timeout=10):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        return json.loads(r.read())


def metric(port, name, tags=()):
    q = "&".join("tag=" + urllib.parse.quote(t) for t in tags)
    try:
        m = get_json(port, f"/actuator/metrics/{name}" + ("?" + q if q else ""))
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return 0.0, []
        raise
    value = sum(s["value"] for s in m["measurements"] if s["statistic"] in ("COUNT", "VALUE"))
    return value, m.get("availableTags", [])


def snapshot(port):
    snap = {"fallbacks": metric(port, "ratelimit.store.fallbacks")[0],
            "errors": metric(port, "ratelimit.store.errors")[0]}
    _, tags = metric(port, "ratelimit.decisions", ["policy:login"])
    outcomes = next((t["values"] for t in tags if t["tag"] == "outcome"), [])
    snap["login"] = {o: metric(port, "ratelimit.decisions", ["policy:login", "outcome:" + o])[0] for o in outcomes}
    return snap


def alice(port, stop_at, out):
    """One connection guessing alice's password, one guess after the other."""
    counts, first = {}, {}
    conn = None
    n = 0
    t0 = time.monotonic()
    while time.monotonic() < stop_at:
        n += 1
        body = urllib.parse.urlencode({"username": "alice", "password": f"guess-{n}"})
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("POST", "/api/login", body, {"Content-Type": "application/x-www-form-urlencoded"})
            r = conn.getresponse()
            r.read()
            key = str(r.status)
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except Exception as e:  # noqa: BLE001
            key = "error:" + type(e).__name__
            if conn is not None:
                conn.close()
            conn = None
            time.sleep(0.05)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, round(time.monotonic() - t0, 2))
    out["alice"] = counts
    out["alice_first_at_s"] = first


def machine_load():
    load = open("/proc/loadavg").read().split()[:3]
    ps = subprocess.run(["ps", "-eo", "pcpu,comm", "--sort=-pcpu"], capture_output=True, text=True).stdout.splitlines()[1:6]
    return {"loadavg": load, "top": [" ".join(l.split()) for l in ps]}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--jar", default=os.path.join(ROOT, "sample-app/target/sample-app-0.1.0-SNAPSHOT.jar"))
    p.add_argument("--label", default="run")
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--connections", type=int, default=300)
    p.add_argument("--threads", type=int, default=2, help="wrk threads")
    p.add_argument("--java-opts", default=os.environ.get("JAVA_OPTS", ""))
    p.add_argument("--app-arg", action="append", default=[], help="extra --key=value for the app")
    p.add_argument("--results", default=os.path.join(HERE, "results"))
    a = p.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk not found: apt-get install -y wrk")
    if not os.path.exists(a.jar):
        sys.exit(f"{a.jar} missing: mvn -B -q -o package -DskipTests -pl sample-app -am")
    work = tempfile.mkdtemp(prefix="cold-start-")
    redis_port, app_port = free_port(), free_port()
    result = {"label": a.label, "jar": a.jar, "seconds": a.seconds, "connections": a.connections,
              "machine_before": machine_load()}
    redis = subprocess.Popen(["/usr/bin/redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", work],
                             stdout=open(os.path.join(work, "redis.log"), "w"), stderr=subprocess.STDOUT)
    app = None
    try:
        time.sleep(0.3)
        cmd = ["java"] + a.java_opts.split() + ["-jar", a.jar, "--spring.profiles.active=redis",
               f"--spring.data.redis.port={redis_port}", f"--server.port={app_port}"] + a.app_arg
        app_log = os.path.join(work, "app.log")
        started = time.monotonic()
        app = subprocess.Popen(cmd, stdout=open(app_log, "w"), stderr=subprocess.STDOUT)
        while True:
            if app.poll() is not None:
                sys.exit(f"app exited: see {app_log}")
            if time.monotonic() - started > 120:
                sys.exit(f"app not ready in 120 s: see {app_log}")
            try:
                if get_json(app_port, "/actuator/health", timeout=2).get("status") == "UP":
                    break
            except Exception:  # noqa: BLE001
                pass
            time.sleep(0.05)
        result["ready_after_s"] = round(time.monotonic() - started, 2)
        # At once: the flood and alice's guesses start together, the metrics right before.
        before = snapshot(app_port)
        t0 = time.monotonic()
        wrk = subprocess.Popen(["wrk", f"-t{a.threads}", f"-c{a.connections}", f"-d{a.seconds}s", "--timeout", "10s",
                                "-s", os.path.join(HERE, "junk.lua"), f"http://127.0.0.1:{app_port}/api/login"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        guesser = threading.Thread(target=alice, args=(app_port, t0 + a.seconds, result))
        guesser.start()
        timeline = []
        while wrk.poll() is None and time.monotonic() < t0 + a.seconds - 1:
            time.sleep(max(0.0, t0 + 3 * (len(timeline) + 1) - time.monotonic()))
            try:
                timeline.append((round(time.monotonic() - t0, 1), metric(app_port, "ratelimit.store.fallbacks")[0]
                                 - before["fallbacks"]))
            except Exception:  # noqa: BLE001
                pass
        result["fallbacks_timeline"] = timeline
        wrk_out, _ = wrk.communicate(timeout=a.seconds + 60)
        guesser.join(timeout=30)
        after = snapshot(app_port)
        result["measured_over_s"] = round(time.monotonic() - t0, 1)
        result["fallbacks"] = after["fallbacks"] - before["fallbacks"]
        result["errors"] = after["errors"] - before["errors"]
        result["login_outcomes"] = {o: v - before["login"].get(o, 0) for o, v in after["login"].items()}
        result["wrk"] = [l.strip() for l in wrk_out.splitlines() if "Requests/sec" in l or "requests in" in l
                         or "Non-2xx" in l or "Socket errors" in l]
        result["machine_after"] = machine_load()
        with open(app_log) as f:
            result["app_warnings"] = [l.strip()[:300] for l in f if " WARN " in l or " ERROR " in l][:10]
    finally:
        for proc in (app, redis):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
    os.makedirs(a.results, exist_ok=True)
    path = os.path.join(a.results, f"{a.label}-{time.strftime('%Y%m%dT%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    a401 = result["alice"].get("401", 0)
    print(f"{a.label}: alice 401={a401} 429={result['alice'].get('429', 0)} all={result['alice']} "
          f"fallbacks={result['fallbacks']:.0f} errors={result['errors']:.0f} login={result['login_outcomes']} "
          f"ready={result['ready_after_s']}s\n  fallbacks over time (s, total): {result['fallbacks_timeline']} -> {path}")


if __name__ == "__main__":
    main()
