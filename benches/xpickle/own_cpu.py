"""Runs a command and writes to the file named first: its wall seconds, the user and system CPU
seconds of it and every process it waited for (as /usr/bin/time counts), those of the command's
own process alone (its /proc stat, sampled every 10 ms up to its exit: at most 10 ms short),
and its peak RSS in KB. Usage: own_cpu.py OUT COMMAND..."""
import os
import resource
import subprocess
import sys
import time

out, command = sys.argv[1], sys.argv[2:]
tick = float(os.sysconf("SC_CLK_TCK"))
start = time.time()
child = subprocess.Popen(command)
own = (0, 0)
while True:
    try:
        with open("/proc/%d/stat" % child.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            own = (int(fields[11]), int(fields[12]))  # utime, stime
    except OSError:
        pass
    if child.poll() is not None:
        break
    time.sleep(0.01)
wall = time.time() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    f.write("%.2f %.2f %.2f %.2f %.2f %d\n" % (
        wall, usage.ru_utime, usage.ru_stime, own[0] / tick, own[1] / tick, usage.ru_maxrss))
sys.exit(child.returncode)
