#!/usr/bin/env python3
"""The communicator's DMA path on the CPU device, across real processes,
against the tester's reference (stdlib; numpy and torch in the job).

check(...) (from backends.py, difftest.py --comm) runs one verified
schedule as a user schedule of the Python package (sdma.Communicator on
device="cpu", path="dma": the same as SDMA_DEVICE=cpu SDMA_PATH=dma) in
`ranks` processes, for each DMA variant (pcpy, bcst, swap: dma_variant, as
SDMA_DMA_VARIANT) and both submissions (dma_submit="host", SDMA_DMA_SUBMIT;
even seeds set the environment, odd ones the options: the plan's queues
as host threads, runtime/lib/host/CpuDmaKernel.cpp; "kernel": the plan's AMD
SDMA packets written into rings by the ring writer and run by host-thread
engines, runtime/lib/host/CpuRingKernel.cpp). Per (variant, submission):
one communicator, and per chunk size (one a multiple of 64 bytes, which
every variant's packets take, and one that is not) symmetric buffers
(uint8), every byte of every buffer of every rank filled with the
reference's pattern (patternByte, runtime/lib/exec/HostMemory.cpp: every
buffer, not only the input), then two calls back to back on the same
buffers (interleaved across the chunk sizes: call 1 at each, then call 2,
so one program alternates between the DMA path and a load/store fallback
and between buffers); after each call every byte of every buffer of every rank is
compared with the expected bytes, and comm.last_path must say "dma VARIANT"
(and "kernel-submitted" for kernel submission). A call that falls back to
load/store ("ldst (...)") is accepted only at the unaligned chunk size (or,
with --comm-shift, on buffers the path says are not aligned as the packets
need). Options (difftest.py --comm-*): more calls, the schedule repeated
with barriers between (the 4 KiB CPU rings wrap and fill within a call), a
second program alternating with the first on the same buffers, the
load/store path as a control of the model, other variants (b2b).

The expected bytes: no tool prints the reference simulator's final buffers
for arbitrary inputs (sdma-sim and sdma-packet-sim fill only the input
buffer and check internally), so they are computed here from the flat op
list (sdma-unroll's output, which the tester has checked against the
generator's own expansion): copy, bcast and swap applied in text order,
which the generator makes a valid execution (waits follow their signals);
the schedule is race-free (sdma-verify and hbcheck agree before this
step), so every execution consistent with happens-before gives these bytes.

The job runs in a child interpreter that has torch (`python` argument:
sys.executable by default), so a hung or crashed job is killed and named
without taking the tester down:

  commpath.py job JOB.json RESULT.json      (what check() runs)
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VARIANTS = ['pcpy', 'bcst', 'swap']     # and 'ldst': the load/store path, a control
SUBMITS = ['host', 'kernel']
ALIGNED = [64, 128, 192, 320, 1024, 4160]     # multiples of 64: every variant's packets
# Not multiples of 64: the swap packets refuse them (load/store instead);
# 32 and 96 the broadcast and copy packets take, at 32-byte offsets.
UNALIGNED = [4, 32, 24, 96, 100, 160, 1000]


REFUSALS = ('does not support', 'cannot express', 'did not compile')


def pattern(rank, buf, n):
    """patternByte(rank, buf, i) for i < n, as bytes (HostMemory.cpp)."""
    import numpy as np
    x = np.arange(n, dtype=np.uint64) ^ np.uint64(((rank << 48) ^ (buf << 40)) & (2**64 - 1))
    with np.errstate(over='ignore'):
        x = x + np.uint64(0x9e3779b97f4a7c15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
        x = x ^ (x >> np.uint64(31))
    return (x & np.uint64(0xff)).astype(np.uint8).tobytes()


def pattern_py(rank, buf, i):
    """One byte, without numpy (for the self-test)."""
    m = 2**64 - 1
    x = ((rank << 48) ^ (buf << 40) ^ i)
    x = (x + 0x9e3779b97f4a7c15) & m
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & m
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & m
    return (x ^ (x >> 31)) & 0xff


def initial(ranks, buffers, chunk):
    """[rank][buffer] -> bytearray; buffers: [(name, chunks)] in order."""
    return [[bytearray(pattern(r, b, n * chunk)) for b, (_, n) in enumerate(buffers)]
            for r in range(ranks)]


def apply(flat, state, index, chunk):
    """One call of the schedule on `state` (in place). index: name -> buffer
    number. Raises ValueError for an op this model has no meaning for."""
    def rd(s):
        r, b, o, n = s
        return bytes(state[r][index[b]][o * chunk:(o + n) * chunk])

    def wr(s, data):
        r, b, o, n = s
        state[r][index[b]][o * chunk:(o + n) * chunk] = data
    for op in flat:
        kind = op['op']
        if kind == 'copy':
            wr(op['dst'], rd(op['src']))
        elif kind == 'bcast':
            data = rd(op['src'])
            for d in op['dst']:
                wr(d, data)
        elif kind == 'swap':
            a, b = rd(op['a']), rd(op['b'])
            wr(op['a'], b)
            wr(op['b'], a)
        elif kind in ('fence', 'barrier', 'signal', 'wait'):
            continue
        else:
            raise ValueError(f'no model for sdma.{kind}')
    return state


def expected_states(flats, ranks, buffers, chunk, calls):
    """[initial, after call 1, ..., after call `calls`]; call k runs
    program (k - 1) % len(flats)."""
    index = {name: b for b, (name, _) in enumerate(buffers)}
    states = [initial(ranks, buffers, chunk)]
    for k in range(calls):
        states.append(apply(flats[k % len(flats)], [[bytearray(x) for x in r]
                                                     for r in states[-1]], index, chunk))
    return states


def where_from(got, states, ranks, buffers, chunk, before, r, b, off):
    """A guess at where wrong bytes came from, for the failure message."""
    n = len(got)
    if got == bytes(before[r][b][off:off + n]):
        return 'unchanged from before the call (never written)'
    if got == b'\xee' * n:
        return '0xEE poison'
    if got == bytes(n):
        return 'zeros'
    for label, st in (('the initial fill', states[0]), ('before the call', before)):
        for rr in range(ranks):
            for bb, (name, _) in enumerate(buffers):
                at = bytes(st[rr][bb]).find(got)
                if at >= 0:
                    return (f'{name}[byte {at} = chunk {at // chunk} + {at % chunk}] '
                            f'on rank {rr} of {label}')
    return 'bytes found nowhere in the inputs'


# ---------------------------------------------------------------- the job
def rank_main(rank, job, unique_ids, results):
    """One process of the job: every configuration, in order."""
    out = []
    try:
        sys.path.insert(0, job['python_path'])
        import numpy as np
        import torch
        import sdma
        ranks, buffers = job['ranks'], [tuple(b) for b in job['buffers']]
        flats = job['flats']
        import random
        jitter = random.Random(rank * 1000003 + len(job['texts'][0]))
        for (variant, submit), uid in zip(job['configs'], unique_ids):
            cfg = f'{variant}/{submit}'
            try:
                # 'ldst': the load/store path, a control for the model.
                # Half the seeds configure the communicator through the
                # environment (SDMA_DEVICE, SDMA_PATH, SDMA_DMA_VARIANT,
                # SDMA_DMA_SUBMIT, SDMA_TIMEOUT_MS: read when it is made),
                # the others through its options.
                dma = variant != 'ldst'
                if job.get('via_env'):
                    os.environ.update(SDMA_DEVICE='cpu', SDMA_PATH='dma' if dma else 'ldst',
                                      SDMA_TIMEOUT_MS=str(job['timeout_ms']))
                    for key, value in (('SDMA_DMA_VARIANT', variant), ('SDMA_DMA_SUBMIT', submit)):
                        if dma:
                            os.environ[key] = value
                        else:
                            os.environ.pop(key, None)
                    comm = sdma.Communicator(rank, ranks, uid, heap_bytes=job['heap_bytes'])
                else:
                    comm = sdma.Communicator(rank, ranks, uid, device='cpu',
                                             path='dma' if dma else 'ldst',
                                             dma_variant=variant if dma else None,
                                             dma_submit=submit if dma else None,
                                             heap_bytes=job['heap_bytes'],
                                             timeout_ms=job['timeout_ms'])
            except Exception as e:  # noqa: BLE001
                out.append({'config': cfg, 'error': f'Communicator: {e}'})
                continue
            try:
                # More than one program: their calls alternate on the same
                # buffers (each program its own rings and queues).
                scheds = [comm.load_schedule(text) for text in job['texts']]
                sched = scheds[0]
            except Exception as e:  # noqa: BLE001
                out.append({'config': cfg, 'error': f'load_schedule: {e}', 'compile': True})
                comm.destroy()
                continue
            got_bufs = [(n, c) for n, c in sched.buffers]
            if got_bufs != buffers:
                out.append({'config': cfg, 'error': f'buffers {got_bufs}, expected {buffers}'})
                comm.destroy()
                continue
            failed = False
            # Every chunk size's buffers at once, the calls interleaved
            # (call 1 at each size, then call 2 ...): a program's calls
            # alternate between the DMA path and a load/store fallback, and
            # between buffers, as a job's may.
            # With a shift: one more set at the first chunk size, each
            # buffer a view `shift` bytes into a larger allocation (the
            # same program and chunk then alternates between the packets
            # and, where they need more alignment, load/store).
            sets, bases = [], []
            sizes = [(c, 0) for c in job['chunks']]
            if job.get('shift'):
                sizes.append((job['chunks'][0], job['shift']))
            for chunk, shift in sizes:
                states = expected_states(flats, ranks, buffers, chunk, job['calls'])
                whole = [comm.empty((n * chunk + (64 if shift else 0),), torch.uint8)
                         for _, n in buffers]
                bases += whole
                tensors = [w[shift:shift + n * chunk] for w, (_, n) in zip(whole, buffers)]
                for b, t in enumerate(tensors):
                    t.copy_(torch.frombuffer(bytearray(states[0][rank][b]), dtype=torch.uint8))
                sets.append((chunk, shift, states, tensors))
            for call in range(1, job['calls'] + 1):
                for chunk, shift, states, tensors in sets:
                    rec = {'config': cfg, 'chunk': chunk, 'call': call, 'mismatch': []}
                    if shift:
                        rec['shift'] = shift
                    if job.get('jitter_ms'):
                        # Ranks arrive in varying orders (deterministic).
                        time.sleep(jitter.random() * job['jitter_ms'] / 1000)
                    t0 = time.time()
                    try:
                        scheds[(call - 1) % len(scheds)].launch(*tensors)
                        rec['path'] = comm.last_path
                    except Exception as e:  # noqa: BLE001
                        rec['error'] = f'launch: {e}'
                        out.append(rec)
                        failed = True
                        break
                    rec['seconds'] = round(time.time() - t0, 3)
                    for b, t in enumerate(tensors):
                        got = np.frombuffer(t.numpy().tobytes(), dtype=np.uint8)
                        want = np.frombuffer(bytes(states[call][rank][b]), dtype=np.uint8)
                        bad = np.nonzero(got != want)[0]
                        if len(bad):
                            off = int(bad[0])
                            end = off + 1
                            while end < len(got) and end - off < 16 and got[end] != want[end]:
                                end += 1
                            g = got[off:end].tobytes()
                            rec['mismatch'].append({
                                'buffer': buffers[b][0], 'offset': off, 'chunk_index': off // chunk,
                                'count': int(len(bad)), 'got': g.hex(),
                                'expected': want[off:end].tobytes().hex(),
                                # located by the 16 bytes from there (a
                                # short run could match anywhere)
                                'from': where_from(got[off:off + 16].tobytes(), states, ranks,
                                                   buffers, chunk, states[call - 1], rank, b,
                                                   off)})
                    out.append(rec)
                if failed:
                    break
            if not failed:
                for t in bases:
                    comm.free(t)
            if failed:
                try:
                    comm.abort()
                except Exception:  # noqa: BLE001
                    pass
            comm.destroy()
    except Exception:  # noqa: BLE001
        import traceback
        out.append({'config': '-', 'error': traceback.format_exc()[-1500:]})
    results.put((rank, out))


def run_job(job_path, result_path):
    import multiprocessing as mp
    job = json.load(open(job_path))
    sys.path.insert(0, job['python_path'])
    import sdma
    ids = [sdma.get_unique_id() for _ in job['configs']]
    if job.get('threads'):
        return run_threads(job, ids, result_path)
    ctx = mp.get_context('spawn')
    results = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, job, ids, results))
             for r in range(job['ranks'])]
    for p in procs:
        p.start()
    got = {}
    deadline = time.time() + job['job_timeout']
    import queue
    while len(got) < len(procs) and time.time() < deadline:
        try:
            rank, out = results.get(timeout=1)
            got[rank] = out
        except queue.Empty:
            if all(not p.is_alive() for p in procs) and results.empty():
                break
    for p in procs:
        p.join(timeout=5)
        if p.is_alive():
            p.kill()
    missing = [r for r in range(job['ranks']) if r not in got]
    with open(result_path, 'w') as f:
        json.dump({'ranks': {str(k): v for k, v in got.items()}, 'missing': missing,
                   'exitcodes': [p.exitcode for p in procs]}, f)


def run_threads(job, ids, result_path):
    """The ranks as threads of this process (--comm-threads): they share
    its cached host kernels (the ring writer's object among them)."""
    import queue
    import threading
    os.environ.update(SDMA_DEVICE='cpu', SDMA_PATH='dma')
    job = dict(job, via_env=False)     # one environment for every thread
    results = queue.Queue()
    threads = [threading.Thread(target=rank_main, args=(r, job, ids, results), daemon=True)
               for r in range(job['ranks'])]
    for t in threads:
        t.start()
    got, deadline = {}, time.time() + job['job_timeout']
    while len(got) < len(threads) and time.time() < deadline:
        try:
            rank, out = results.get(timeout=1)
            got[rank] = out
        except queue.Empty:
            pass
    missing = [r for r in range(job['ranks']) if r not in got]
    with open(result_path, 'w') as f:
        json.dump({'ranks': {str(k): v for k, v in got.items()}, 'missing': missing,
                   'exitcodes': [None] * job['ranks']}, f)
    os._exit(0)     # a hung rank thread must not keep the job alive


# ---------------------------------------------------------------- the step
def chunk_sizes(seed):
    return [ALIGNED[seed % len(ALIGNED)], UNALIGNED[(seed // len(ALIGNED)) % len(UNALIGNED)]]


def check(text, ranks, flat, buffers, work, seed, python=None, python_path=None,
          variants=VARIANTS, submits=SUBMITS, refused=(), calls=2, timeout_ms=20000,
          chunks=None, shift=0, others=(), threads=False, jitter_ms=0):
    """-> (failures [(step, variant, message)], runs {name: count}, notes).
    buffers: [(name, chunks)] in declaration order (at `ranks`); refused:
    variants sdma-run could not compile (skipped, noted); others: more
    programs [(text, flat)] on the same buffers, their calls alternating with
    this one's (call k runs program (k - 1) mod n)."""
    fails, runs, notes = [], {}, []
    if any(op['op'] not in ('copy', 'bcast', 'swap', 'fence', 'barrier', 'signal', 'wait')
           for f in [flat] + [f for _, f in others] for op in f):
        return fails, runs, ['comm: skipped (an op the model has no meaning for)']
    if not 2 <= ranks <= 4:
        return fails, runs, [f'comm: skipped ({ranks} ranks: runs 2-4 processes)']
    configs = [(v, s) for v in variants if v not in refused
               for s in (submits if v != 'ldst' else ['host'])]
    notes += [f'comm: {v} skipped (sdma-run refused it)' for v in variants if v in refused]
    chunks = chunks or chunk_sizes(seed)
    need = sum(n * max(chunks) + 64 for _, n in buffers)
    job = {'texts': [text] + [t for t, _ in others], 'ranks': ranks, 'buffers': buffers,
           'flats': [flat] + [f for _, f in others],
           'configs': configs, 'chunks': chunks, 'calls': calls, 'timeout_ms': timeout_ms,
           'shift': shift, 'via_env': seed % 2 == 0, 'threads': threads,
           'jitter_ms': jitter_ms,
           'heap_bytes': max(4 << 20, 4 * need + (1 << 20)),
           'python_path': python_path or os.environ.get('SDMA_PYTHON') or
           os.path.join(HERE, '..', '..', 'build', 'python'),
           'job_timeout': 60 + len(configs) * len(chunks) * calls * (timeout_ms / 1000 + 5)}
    os.makedirs(work, exist_ok=True)
    jp, rp = os.path.join(work, 'comm-job.json'), os.path.join(work, 'comm-result.json')
    json.dump(job, open(jp, 'w'))
    if os.path.exists(rp):
        os.remove(rp)
    env = dict(os.environ, SDMA_DEVICE='cpu', SDMA_PATH='dma',
               SDMA_TIMEOUT_MS=str(timeout_ms))
    env.pop('SDMA_DMA_SUBMIT', None)
    env.pop('SDMA_DMA_VARIANT', None)
    try:
        r = subprocess.run([python or sys.executable, os.path.abspath(__file__), 'job', jp, rp],
                           capture_output=True, text=True, env=env,
                           timeout=job['job_timeout'] + 30)
        err = r.stderr
    except subprocess.TimeoutExpired:
        fails.append(('comm', '-', f'seed {seed}: the job ({ranks} processes) timed out'))
        return fails, runs, notes
    if not os.path.exists(rp):
        how = (f'killed by signal {-r.returncode}' + (' (SIGSEGV)' if r.returncode == -11 else '')
               if r.returncode < 0 else f'exit {r.returncode}')
        fails.append(('comm', '-', f'seed {seed}: the job ({ranks} ' +
                      ('threads' if threads else 'processes') + f') wrote no result ({how}): '
                      + ' | '.join(err.strip().splitlines()[-3:])[:400]))
        return fails, runs, notes
    res = json.load(open(rp))
    for rank in res['missing']:
        fails.append(('comm', '-', f'seed {seed}: rank {rank} never reported (exit code '
                      f'{res["exitcodes"][rank]}; a hang or a crash)'))
    skipped = set()
    for rank, recs in sorted(res['ranks'].items(), key=lambda kv: int(kv[0])):
        for rec in recs:
            cfg = rec['config']
            variant, _, submit = cfg.partition('/')
            where = f'seed {seed} rank {rank} {cfg}'
            if 'chunk' in rec:
                if others:
                    where += f' program {(rec["call"] - 1) % (1 + len(others))}'
                where += f' chunk {rec["chunk"]} B' + (
                    f' (buffers {rec["shift"]} B into their allocations)' if rec.get('shift')
                    else '') + f' call {rec["call"]}'
            if 'error' in rec:
                # A variant the target's packets cannot express (a swap on
                # gfx9) is refused by name, as documented: a skip, noted.
                if any(k in rec['error'] for k in REFUSALS):
                    skipped.add(f'{cfg}: {rec["error"][:200]}')
                    continue
                fails.append(('comm', cfg, f'{where}: {rec["error"].strip()[:600]}'))
                continue
            key = 'comm ldst' if variant == 'ldst' else f'comm {submit}'
            runs[key] = runs.get(key, 0) + (rank == '0')
            path = rec.get('path', '')
            # A fallback is accepted where the packets may refuse: a chunk
            # not a multiple of 64 bytes, or shifted buffers they say are
            # not aligned as they need.
            aligned = rec['chunk'] % 64 == 0 and not (rec.get('shift') and 'aligned' in
                                                       rec.get('path', ''))
            if variant == 'ldst':
                if not path.startswith('ldst'):
                    fails.append(('comm', cfg, f'{where}: last_path {path!r}, not ldst'))
            elif path.startswith('ldst ('):
                if aligned:
                    fails.append(('comm', cfg, f'{where}: took load/store at a 64-byte multiple: '
                                  f'{path}'))
                else:
                    runs['comm fallback'] = runs.get('comm fallback', 0) + (rank == '0')
                    if 'low-latency' in path:   # no job barriers between DMA calls
                        runs['comm fallback ll'] = runs.get('comm fallback ll', 0) + (rank == '0')
            elif not path.startswith(f'dma {variant}'):
                fails.append(('comm', cfg, f'{where}: last_path {path!r}, not "dma {variant}"'))
            elif submit == 'kernel' and 'kernel-submitted' not in path:
                fails.append(('comm', cfg, f'{where}: last_path {path!r} not kernel-submitted'))
            for m in rec['mismatch']:
                fails.append(('comm', cfg, f'{where}: buffer {m["buffer"]} byte {m["offset"]} '
                              f'(chunk {m["chunk_index"]}): got {m["got"]} expected '
                              f'{m["expected"]} ({m["count"]} bytes differ; got = '
                              f'{m["from"]}); path {path!r}'))
    notes += [f'comm: skipped {s}' for s in sorted(skipped)]
    return fails, runs, notes


def repeated(sched, times):
    """The schedule's statements `times` times, a barrier between each two
    (race-free if the schedule is: the barrier orders every op before it
    before every op after it), so each queue gets `times` as many packets:
    the CPU rings (4 KiB) wrap and fill within one call."""
    if times <= 1:
        return sched
    stmts = []
    for k in range(times):
        stmts += ([('op', {'op': 'barrier'})] if k else []) + list(sched['stmts'])
    import sdmair
    # Not the collective any more (an in-place all-to-all twice is none).
    return dict(sched, stmts=stmts, flat=sdmair.expand(stmts, sched['ranks']),
                name=f"{sched['name']}x{times}", implements=None)


def selftest():
    """The numpy pattern is patternByte (its Python twin, bit for bit)."""
    got = pattern(3, 2, 300)
    assert all(got[i] == pattern_py(3, 2, i) for i in range(300))
    print('pattern ok')


if __name__ == '__main__':
    if sys.argv[1:2] == ['job']:
        run_job(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ['selftest']:
        selftest()
    else:
        print(__doc__)
        sys.exit(2)
