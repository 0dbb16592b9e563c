#!/usr/bin/env python3
"""Where a load generator's transactions spend the machine's CPU.

Watches a running client (pgbench, ceiling, anything) against a PostgreSQL
server on this host for a window in the middle of its run, and prints per
committed transaction: the client's CPU (user and system), the server's CPU
(every postgres process, including backends that exited during the window,
through the postmaster's reaped-children times), the host's idle time, the
host's context switches, and the client's voluntary and involuntary
switches. With client and server sharing the cores, the sum of client,
server and idle time per transaction is what sets the throughput, and this
shows which side a difference between two clients comes from.

    pgbench ... &  sleep 3; bench/pg-window.py --pid $(pgrep -n -x pgbench) --seconds 6
    ceiling run ... &  sleep 3; bench/pg-window.py --pid $(pgrep -n -x ceiling) --seconds 6

Transactions are the server's commits (pg_stat_database, all databases) in
the window, so start it after the client's set-up, or what --count-sql
returns (bench/pg-window-ab.sh counts the insert table's identity
sequence, which is exact). Linux only (/proc).
"""
import argparse
import os
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def server_cpu():
    """CPU seconds of every postgres process plus what the postmaster
    reaped from exited children; None when no server is visible."""
    pids, ppid = [], {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            if comm(d) == "postgres":
                f = stat_fields(d)
                pids.append((d, f))
                ppid[d] = f[1]
        except OSError:
            pass  # exited meanwhile
    if not pids:
        return None
    total = 0.0
    for d, f in pids:
        total += (int(f[11]) + int(f[12])) / HZ  # utime, stime
        if ppid[d] not in ppid:  # the postmaster: its parent is not postgres
            total += (int(f[13]) + int(f[14])) / HZ  # cutime, cstime
    return total


def client_cpu(pid):
    f = stat_fields(pid)
    return int(f[11]) / HZ, int(f[12]) / HZ


def client_switches(pid):
    vol = invol = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        vol += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        invol += int(line.split()[1])
        except OSError:
            pass  # thread exited meanwhile
    return vol, invol


def host():
    with open("/proc/stat") as f:
        lines = f.read().split("\n")
    cpu = [int(x) for x in lines[0].split()[1:]]
    ctxt = next(int(l.split()[1]) for l in lines if l.startswith("ctxt "))
    return (cpu[3] + cpu[4]) / HZ, ctxt  # idle + iowait


class Counter:
    """Reads the transaction count through one psql session kept open for
    the window: a new connection per reading took 0.3-0.9 s on the loaded
    2-core VM, which shifted the count's interval against the CPU
    readings'. The default query sums pg_stat_database's commits, which
    backends publish at most once a second each (PostgreSQL 15), so over a
    6 s window it can be off by up to a second's commits; --count-sql
    names an exact counter instead (a sequence's last_value)."""

    def __init__(self, dsn, sql):
        self.sql = sql.rstrip().rstrip(";") + ";\n"
        self.p = subprocess.Popen(["psql", "-qAtX", dsn], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def read(self):
        self.p.stdin.write(self.sql)
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise OSError("psql ended")
        return int(line.strip())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pid", type=int, required=True, help="the client process")
    ap.add_argument("--seconds", type=float, default=6.0, help="window length")
    ap.add_argument("--delay", type=float, default=0.0,
                    help="seconds to wait before the window starts (so that the interpreter's "
                         "start-up, slow on a loaded machine, falls before it)")
    ap.add_argument("--dsn", default=os.environ.get(
        "PGDSN", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"))
    ap.add_argument("--label", default="", help="printed before the figures")
    ap.add_argument("--count-sql", default="SELECT sum(xact_commit) FROM pg_stat_database",
                    help="query returning the transactions done so far")
    a = ap.parse_args()
    if not os.path.exists(f"/proc/{a.pid}"):
        sys.exit(f"pg-window: no process {a.pid}")
    try:
        start = time.monotonic() + a.delay
        counter = Counter(a.dsn, a.count_sql)
        counter.read()  # the session's start-up is not in the window
        time.sleep(max(0.0, start - time.monotonic()))
        c0, s0, h0, v0 = counter.read(), server_cpu(), host(), client_switches(a.pid)
        u0, k0 = client_cpu(a.pid)
        t0 = time.monotonic()
        time.sleep(a.seconds)
        c1, s1, h1, v1 = counter.read(), server_cpu(), host(), client_switches(a.pid)
        u1, k1 = client_cpu(a.pid)
        t1 = time.monotonic()
        counter.close()
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        sys.exit(f"pg-window: {e}")
    n = c1 - c0
    if n <= 0:
        sys.exit("pg-window: no commits in the window")
    us = lambda x: 1e6 * x / n
    server = "n/a" if s0 is None or s1 is None else f"{us(s1 - s0):.2f}"
    print(f"{a.label}{' ' if a.label else ''}tx/s {n / (t1 - t0):.0f}  "
          f"client us/tx {us(u1 - u0 + k1 - k0):.2f} (user {us(u1 - u0):.2f} sys {us(k1 - k0):.2f})  "
          f"server us/tx {server}  idle us/tx {us(h1[0] - h0[0]):.2f}  "
          f"host switches/tx {(h1[1] - h0[1]) / n:.2f}  "
          f"client vol/invol switches/tx {(v1[0] - v0[0]) / n:.2f}/{(v1[1] - v0[1]) / n:.2f}")


if __name__ == "__main__":
    main()
