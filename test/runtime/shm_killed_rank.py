"""One rank of a 2-rank CPU-device job in which rank 0 is killed during the
heap exchange, while its shared memory segment is still named.

Rank 0 runs sdma-comm-test (COMM_TEST). Rank 1 is this script speaking the
bootstrap's wire itself (runtime/lib/comm/Bootstrap.cpp): it joins, takes
part in the device exchange, and then never reaches the heap exchange, so
rank 0 waits there with its heap created and named. Rank 1 then finds the
segment (/dev/shm/sdma-<job>-<pid>-0-<n>, the pid a sibling's), records its
name in SEGMENT_FILE and kills rank 0 with SIGKILL.

usage: shm_killed_rank.py COMM_TEST SEGMENT_FILE"""
import os
import random
import signal
import socket
import struct
import sys
import time

comm_test, segment_file = sys.argv[1:3]
if os.environ["RANK"] == "0":
    os.execv(comm_test, [comm_test, "--counts=1"])

MAGIC, HELLO, WELCOME, GATHER, RESULT = 0x53444D41, 1, 2, 3, 4
HEADER = struct.Struct("<IIIIQ")
id_bytes = bytes.fromhex(os.environ["SDMA_UNIQUE_ID"])
address = socket.inet_ntoa(id_bytes[4:8])
port = struct.unpack(">H", id_bytes[8:10])[0]
secret = id_bytes[10:26]


def receive(sock, count):
    data = b""
    while len(data) < count:
        more = sock.recv(count - len(data))
        if not more:
            sys.exit("rank 1: the root closed the connection")
        data += more
    return data


def message(sock, want):
    magic, kind, _, _, length = HEADER.unpack(receive(sock, HEADER.size))
    payload = receive(sock, length)
    if magic != MAGIC or kind != want:
        sys.exit(f"rank 1: message {kind}, not {want}: {payload!r}")
    return payload


root = socket.create_connection((address, port))
root.sendall(HEADER.pack(MAGIC, HELLO, 1, 2, 24) + secret +
             struct.pack("<Q", 30000))
message(root, WELCOME)
# The device exchange: every rank says which device it has, its process,
# how it co-launches, and a hash (64-bit FNV-1a, hex) of the settings every
# rank must share ("device\x1fprocess\x1fco-launch\x1fhash", the process as
# its pid and 32 random bits: the point-to-point
# chunk, 16 KiB on the CPU device, the path settings and the low-latency
# inbox, 256 KiB a peer at two ranks, and sharing off: the defaults).
settings = (b"SDMA_P2P_CHUNK_BYTES=16384 SDMA_PATH=auto "
            b"SDMA_DMA_VARIANT=pcpy SDMA_DMA_SUBMIT=host "
            b"SDMA_DMA_PACKET_TARGET= SDMA_DMA_MIN_BYTES=0 SDMA_DMA_BATCH=1 "
            b"SDMA_LL_BYTES=262144 SDMA_SHARED_BYTES=0 SDMA_CHECK_CALLS=1")
fnv = 0xcbf29ce484222325
for byte in settings:
    fnv = ((fnv ^ byte) * 0x100000001b3) & 0xffffffffffffffff
root.sendall(HEADER.pack(MAGIC, GATHER, 0, 0, 256) +
             (b"cpu\x1f%d.%08x\x1fSDMA_COLAUNCH=0\x1f%016x"
              % (os.getpid(), random.getrandbits(32), fnv))
             .ljust(256, b"\0"))
message(root, RESULT)


def sibling(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1]) == os.getppid()
    except (FileNotFoundError, ValueError):
        return False


deadline = time.time() + 30
while time.time() < deadline:
    for name in os.listdir("/dev/shm"):
        part = name.split("-")
        if (len(part) == 5 and part[0] == "sdma" and part[3] == "0"
                and part[2].isdigit() and sibling(int(part[2]))):
            with open(segment_file, "w") as out:
                out.write(name + "\n")
            print(f"rank 1: killing rank 0 with /dev/shm/{name} named",
                  flush=True)
            os.kill(int(part[2]), signal.SIGKILL)
            sys.exit(0)
    time.sleep(0.01)
sys.exit("rank 1: rank 0 made no shared memory segment within 30 s")
