"""Runs one schedule through the compiler and every CPU-side backend.

check_schedule(...) returns a list of failures, each (step, variant,
message); an empty list means every backend agreed with the reference
simulator (and with the collective, where one is declared).

Steps:
- unroll: sdma-opt --sdma-unroll gives exactly the tester's own expansion;
- json: sdma-translate --sdma-to-json writes exactly that flat schedule
  (a copy's "rank" is its issuer: a pull's is its destination's);
- verify: sdma-verify accepts what hbcheck proves race- and deadlock-free;
- run: sdma-run --backend=sdma-packets per DMA variant (pcpy, bcst, swap,
  b2b) x prelaunch: compiles, loads the plan and the packet plan, runs the
  reference simulator and the packet simulator (round robin and a random
  interleaving) and compares every byte, and the outputs with the
  collective;
- adversarial: sdma-sim on each plan in adversarial orders (outputs
  against the collective);
- cross: each variant's packet program against the pcpy plan's simulation
  (every byte of every buffer: the variants must agree with each other);
- ldst: the load/store kernel (sdma-ldst-cpu: compiled for the host, one
  and two blocks per rank, aligned and unaligned chunks, two runs) against
  one variant's plan;
- comm (difftest.py --comm; commpath.py): the schedule as a user schedule
  of the Python package's communicator on the CPU device, in `ranks`
  processes (2-4), on its DMA path, variants pcpy, bcst and swap, host- and
  kernel-submitted (the ring writer), two calls back to back, every byte of
  every buffer of every rank against the expected bytes.
"""
import os
import re
import subprocess
import time

import commpath
import hbcheck
import sdmair

VARIANTS = ['pcpy', 'bcst', 'swap', 'b2b']


def tool(bin_dir, name, args, stdin=None, timeout=120):
    """Run a tool; a binary being relinked (missing, not executable, busy)
    is waited for, up to five minutes."""
    for attempt in range(60):
        try:
            r = subprocess.run([os.path.join(bin_dir, name)] + args, input=stdin,
                               capture_output=True, text=True, timeout=timeout)
            return r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired:
            return 124, '', f'{name} timed out after {timeout} s'
        except OSError:
            time.sleep(5)
    return 127, '', f'{name} could not be started'


def table_kernel(bin_dir, path, ranks, work):
    """The table kernel of a schedule (what SDMA_STAGED_OPS changes; the
    default kernel is specialised). -> path, or None."""
    flat = os.path.join(work, 'flat.mlir')
    out = os.path.join(work, 'table.hip')
    rc, _, _ = tool(bin_dir, 'sdma-opt', [path, f'--sdma-unroll=ranks={ranks}', '-o', flat])
    if rc == 0:
        rc, _, _ = tool(bin_dir, 'sdma-translate', [flat, '--sdma-to-hip',
                                                    '--sdma-hip-table-kernel', '-o', out])
    return out if rc == 0 else None


def first_line(text):
    for line in text.splitlines():
        if 'error' in line or 'FAIL' in line or 'wrong' in line or 'differ' in line:
            return line.strip()[:300]
    return text.strip().splitlines()[0][:300] if text.strip() else ''


def unroll(bin_dir, path, ranks):
    rc, out, err = tool(bin_dir, 'sdma-opt', [path, f'--sdma-unroll=ranks={ranks}'])
    return (rc, out, err)


def verify(bin_dir, flat_text):
    rc, out, err = tool(bin_dir, 'sdma-opt', ['-', '--sdma-verify'], stdin=flat_text)
    return rc, err


RACE = re.compile(r'races with another op: it (?:reads|writes) (\w+)\[(\d+), (\d+)\) on rank (\d+)')
POST = re.compile(r'does not implement \w+: afterwards chunk (\d+) of (\w+) on rank (\d+)')


def diagnostic_kind(rc, err):
    """What sdma-verify said: ('ok'|'race'|'deadlock'|'post'|'invalid', detail)."""
    if rc == 0:
        return 'ok', None
    m = RACE.search(err)
    if m:
        return 'race', (int(m.group(4)), m.group(1))
    if 'can never complete' in err:
        return 'deadlock', None
    m = POST.search(err)
    if m:
        return 'post', (int(m.group(3)), m.group(2), int(m.group(1)))
    return 'invalid', first_line(err)


def agrees(verdict, said, detail):
    """Does sdma-verify's diagnostic match the independent verdict?"""
    kind = verdict['kind']
    if kind != said:
        return False
    if kind == 'race':
        return detail in verdict['where']
    if kind == 'post':
        return detail in verdict['wrong']
    return True


def run_variant(bin_dir, path, ranks, variant, prelaunch, work, emit_hip, completion):
    tag = variant + ('+pre' if prelaunch else '')
    plan = os.path.join(work, f'{tag}.plan.json')
    packets = os.path.join(work, f'{tag}.pk.json')
    args = [path, f'--ranks={ranks}', f'--variant={variant}', '--backend=sdma-packets',
            '-b', '1K', '-e', '8K', '-f', '8', '--iters=2', f'--emit-plan={plan}',
            f'--emit-packets={packets}', f'--packet-completion={completion}',
            # MI300X with recent firmware: the swap variant's packets need
            # COPY_LINEAR_SWAP, which the default target (gfx9) lacks.
            '--sdma-target=gfx942']
    if prelaunch:
        args.append('--prelaunch')
        # 256 MiB chunks at most: 4 chunks per copy packet (1 GiB on
        # gfx942), 3 per swap, so longer transfers are split.
        args.append('--max-chunk-bytes=268435456')
    if emit_hip:
        args.append(f'--emit-hip={emit_hip}')
    rc, out, err = tool(bin_dir, 'sdma-run', args)
    fails = []
    if rc != 0 or 'wrong output' in err:
        why = 'refused' if 'did not compile' in err else 'wrong bytes' if 'wrong output' in err else f'exit {rc}'
        fails.append(('run', tag, f'{why}: {first_line(err)}'))
        return fails, None, None
    return fails, plan, packets


def check_backends(bin_dir, path, ranks, work, seed, ldst=True):
    """Every backend for one verified schedule file (seed < 0: every optional
    one too). -> (failures, runs)."""
    fails, runs = [], {}
    plans = {}
    hip = os.path.join(work, 'kernel.hip')
    combos = [(v, p) for v in VARIANTS for p in (False, True)]
    for n, (v, p) in enumerate(combos):
        completion = 'fence' if (seed + n) % 2 else 'atomic'
        f, plan, packets = run_variant(bin_dir, path, ranks, v, p, work,
                                       hip if n == 0 else None, completion)
        runs['run'] = runs.get('run', 0) + 1
        fails += f
        if plan:
            plans[(v, p)] = (plan, packets)
    for (v, p), (plan, packets) in plans.items():
        tag = v + ('+pre' if p else '')
        rc, out, err = tool(bin_dir, 'sdma-sim', [plan, '--adversarial', '--seeds=6',
                                                 '--chunk-bytes=24'])
        runs['adversarial'] = runs.get('adversarial', 0) + 6
        if rc != 0:
            fails.append(('adversarial', tag, first_line(out + err)))
        first = sorted(plans)[0]
        ref = plans[first]
        if (v, p) != first:
            rc, out, err = tool(bin_dir, 'sdma-packet-sim', [packets, f'--reference={ref[0]}',
                                                             '--seeds=2', '--chunk-bytes=64'])
            runs['cross'] = runs.get('cross', 0) + 2
            if rc != 0:
                fails.append(('cross', tag, first_line(out + err)))
    # sdma-run's own simulator and ld/st backends (the latter compiles the
    # kernel again: every 4th seed).
    backends_ = ['sim'] + (['ldst-cpu'] if ldst and (seed % 4 == 1 or seed < 0) else [])
    for backend in backends_:
        rc, out, err = tool(bin_dir, 'sdma-run', [path, f'--ranks={ranks}', f'--backend={backend}',
                                                  '--variant=b2b', '-b', '1K', '-e', '4K', '-f',
                                                  '4', '--iters=2'], timeout=180)
        runs['sdma-run ' + backend] = runs.get('sdma-run ' + backend, 0) + 4
        if rc != 0 or 'wrong output' in err:
            fails.append(('sdma-run', backend, first_line(err or out)))
    if ldst and os.path.exists(hip) and plans:
        keys = sorted(plans)
        v, p = keys[seed % len(keys)]
        tag, plan = v + ('+pre' if p else ''), plans[(v, p)][0]
        # 8 threads per block: fewer host threads spinning on 2 cores.
        common = [hip, plan, '--threads=8', '--blocks=1,2']
        rc, out, err = tool(bin_dir, 'sdma-ldst-cpu', common + ['--chunks=16,24,4004'],
                            timeout=180)
        runs['ldst'] = runs.get('ldst', 0) + 6
        if rc != 0:
            fails.append(('ldst', tag, first_line(out + err)))
        if seed % 4 == 0 or seed < 0:
            # The table kernel with each phase's ops staged in shared memory,
            # three at a time (SDMA_STAGED_OPS).
            table = table_kernel(bin_dir, path, ranks, work)
            rc, out, err = (tool(bin_dir, 'sdma-ldst-cpu', [table] + common[1:] + [
                '--staged', '--stage-cap=3', '--chunks=16,4004'], timeout=180)
                            if table else (1, '', 'no table kernel'))
            runs['ldst-staged'] = runs.get('ldst-staged', 0) + 4
            if rc != 0:
                fails.append(('ldst-staged', tag, first_line(out + err)))
    return fails, runs


def check_comm(text, ranks, flat, buffers, work, seed, comm, refused=()):
    """The communicator step (commpath.check) -> (failures, runs); its
    notes (skips) go to comm['notes']."""
    fails, runs, notes = commpath.check(
        text, ranks, flat, list(buffers.items()), os.path.join(work, 'comm'), seed,
        python=comm.get('python'), python_path=comm.get('python_path'),
        variants=comm.get('variants', commpath.VARIANTS),
        submits=comm.get('submits', commpath.SUBMITS), refused=refused,
        chunks=comm.get('chunks'), calls=comm.get('calls', 2), shift=comm.get('shift', 0),
        others=comm.get('others', ()), threads=comm.get('threads', False),
        jitter_ms=comm.get('jitter_ms', 0))
    comm.setdefault('notes', []).extend(notes)
    return fails, runs


def check_schedule(bin_dir, text, ranks, impl, expected_flat, work, seed, ldst=True, comm=None):
    """Unroll, compare, verify, run everything (comm: the communicator
    step's options, None: not run; comm['only']: that step alone after the
    verify). -> (failures, runs, verdict)."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, 'schedule.mlir')
    with open(path, 'w') as f:
        f.write(text)
    rc, out, err = unroll(bin_dir, path, ranks)
    if rc != 0:
        return [('unroll', '-', first_line(err))], {}, None
    head, flat = sdmair.parse_flat(out)
    fails = []
    if expected_flat is not None and flat != expected_flat:
        fails.append(('unroll', '-', f'flat form differs from the expansion '
                      f'({len(flat)} vs {len(expected_flat)} ops)'))
    rc, js, jerr = tool(bin_dir, 'sdma-translate', ['-', '--sdma-to-json'], stdin=out)
    if rc != 0 or sdmair.json_view(sdmair.from_json(js)) != sdmair.json_view(flat):
        fails.append(('json', '-', 'the flat JSON differs from the flat schedule: '
                      + first_line(jerr)))
    verdict = hbcheck.check(flat, ranks, head['buffers'], head['implements'])
    rc, err = verify(bin_dir, out)
    said, detail = diagnostic_kind(rc, err)
    if not agrees(verdict, said, detail):
        fails.append(('verify', '-', f'checker says {verdict["kind"]}, sdma-verify says '
                      f'{said} {detail or ""}: {first_line(err)}'))
    if verdict['kind'] != 'ok' or said != 'ok':
        if comm is not None:
            comm.setdefault('notes', []).append(
                f'comm: not run (the checker says {verdict["kind"]}, sdma-verify {said})')
        return fails, {}, verdict
    more, runs = ([], {}) if comm and comm.get('only') else \
        check_backends(bin_dir, path, ranks, work, seed, ldst)
    if comm is not None:
        # Variants whose compilation sdma-run refused are not the
        # communicator's to run (their refusal is a failure above).
        refused = {f[1] for f in more if f[0] == 'run' and f[2].startswith('refused')}
        f2, r2 = check_comm(text, ranks, flat, head['buffers'], work, seed, comm, refused)
        more += f2
        for k, v in r2.items():
            runs[k] = runs.get(k, 0) + v
    return fails + more, runs, verdict


def check_mutant(bin_dir, text, ranks, expected_flat, work):
    """-> (checker verdict kind, verifier kind, agrees, message)."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, 'mutant.mlir')
    with open(path, 'w') as f:
        f.write(text)
    rc, out, err = unroll(bin_dir, path, ranks)
    if rc != 0:
        invalid = any(hbcheck.invalid_reason(op, ranks, _sizes_of(text, ranks)) for op in expected_flat)
        return 'invalid' if invalid else 'ok', 'invalid', invalid, first_line(err)
    head, flat = sdmair.parse_flat(out)
    if flat != expected_flat:
        return '?', '?', False, 'flat form differs from the expansion'
    verdict = hbcheck.check(flat, ranks, head['buffers'], head['implements'])
    rc, err = verify(bin_dir, out)
    said, detail = diagnostic_kind(rc, err)
    return verdict['kind'], said, agrees(verdict, said, detail), first_line(err)


def _sizes_of(text, ranks):
    m = re.search(r'buffers\(([^)]*)\)', text)
    sizes = {}
    for item in m.group(1).split(','):
        name, size = item.split(':')
        size = size.strip()
        if '[' in size:  # a typed buffer: f32[SIZE]
            size = size.partition('[')[2].rstrip(']').strip()
        k, n = 0, 0
        if 'ranks' in size:
            head, _, tail = size.partition('ranks')
            k = int(head.replace('x', '').strip() or 1)
            n = int(tail.replace('+', '').strip() or 0)
        else:
            n = int(size)
        sizes[name.strip().lstrip('%')] = k * ranks + n
    return sizes
