#!/usr/bin/env python3
"""Runs a command and prints its CPU time, wall time and peak RSS at microsecond resolution.

usage: cputime.py OUT_FILE CMD [ARGS...]
CMD's standard output goes to OUT_FILE, its standard error to OUT_FILE.err. Prints one
line: "<user+system CPU seconds> <wall seconds> <max RSS KiB>". GNU time prints CPU
seconds with two decimals, a 20% step on a 50 ms run; wait4's rusage has the kernel's
own precision (user + system sum to the task's scheduled runtime).
"""
import os
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
if status != 0:
    sys.exit(f"cputime.py: {' '.join(cmd)} failed (wait status {status}); see {out}.err")
print(f"{ru.ru_utime + ru.ru_stime:.6f} {wall:.6f} {ru.ru_maxrss}")
