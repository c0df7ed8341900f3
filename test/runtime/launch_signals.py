"""Sends a signal to sdma-launch while its ranks run and checks that every
rank, and every process a rank started, is gone afterwards; prints
sdma-launch's exit status, how long it took and what is left.

usage: launch_signals.py SDMA_LAUNCH OUT_DIR SIGNAL RANK_BEHAVIOUR [ARGS...]
  RANK_BEHAVIOUR: sleep  (each rank sleeps, with a child that sleeps too)
                  ignore (each rank ignores SIGTERM: only SIGKILL ends it)
  ARGS go to sdma-launch before the program."""
import os
import signal
import subprocess
import sys
import time

launch, out, signame, behaviour = sys.argv[1:5]
extra = sys.argv[5:]
os.makedirs(out, exist_ok=True)
for name in os.listdir(out):
    os.unlink(os.path.join(out, name))
ranks = 3
# Each rank records its pid and its child's, then waits.
body = {
    "sleep": "sleep 600 & echo $! > {o}/child.$RANK; echo $$ > {o}/pid.$RANK; wait",
    "ignore": "trap '' TERM; sleep 600 & echo $! > {o}/child.$RANK; "
              "echo $$ > {o}/pid.$RANK; wait; wait",
}[behaviour].format(o=out)


def plain_signals():
    # lit (like a shell's background job) starts tests ignoring SIGINT, and
    # sdma-launch leaves an ignored signal ignored: not what is tested here.
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


job = subprocess.Popen([launch, *extra, "--nproc_per_node", str(ranks),
                        "sh", "-c", body], preexec_fn=plain_signals)
deadline = time.time() + 30
while time.time() < deadline and len(os.listdir(out)) < 2 * ranks:
    time.sleep(0.05)
time.sleep(0.2)  # every file written through
pids = [int(open(os.path.join(out, f)).read()) for f in os.listdir(out)]
print(f"{len(pids)} processes running", flush=True)
start = time.time()
job.send_signal(getattr(signal, signame))
try:
    status = job.wait(timeout=60)
except subprocess.TimeoutExpired:
    job.kill()
    status = "none (still running after 60 s)"
took = time.time() - start


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# Orphaned children are reparented and reaped by init: give it a moment.
deadline = time.time() + 5
while time.time() < deadline and any(alive(p) for p in pids):
    time.sleep(0.05)
left = [p for p in pids if alive(p)]
for pid in left:
    os.kill(pid, signal.SIGKILL)
print(f"sdma-launch exited {status} after {int(took)} s", flush=True)
print(f"{len(left)} processes left", flush=True)
