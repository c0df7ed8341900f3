#!/usr/bin/env python3
"""Differential tester for sdma (stdlib only).

  difftest.py --bin BUILD/bin --seeds 0:40 [--mutants 4] [--jobs 2]
  difftest.py --bin BUILD/bin --minutes 60 --start 1000     (fuzz mode)
  difftest.py --bin BUILD/bin --replay test/diff/regress/x.mlir ...

Per seed: generates a random schedule that is race- and deadlock-free by
construction (collgen/gen), checks that sdma-unroll expands it exactly as the
generator does, that sdma-verify accepts it, and that every CPU-side backend
gives the same bytes (backends.py); then derives mutants (one sync removed,
one index shifted, one copy's issuer changed: mutate.py), asks the
independent checker (hbcheck.py) what each is (valid, race on which buffer
and rank, deadlock, postcondition failure, invalid) and requires sdma-verify
to say the same; valid mutants run on the backends too. Failures are shrunk
(shrink.py) and written to --out. About one copy in five is a pull; the
summary counts them, and the mutants of a pull.

--comm adds a step (commpath.py): each schedule of 2-4 ranks as a user
schedule of the Python package's communicator on the CPU device, in as many
processes, on its DMA path (pcpy, bcst, swap; host- and kernel-submitted),
two calls, every byte of every buffer of every rank checked; --comm-only
runs that step alone (after unroll and verify; no mutants, and seeds of
other rank counts are passed over).
Prints one line per failure and a summary; exit status 1 on any mismatch.
"""
import argparse
import concurrent.futures as cf
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import backends  # noqa: E402
import collgen  # noqa: E402
import commpath  # noqa: E402
import gen  # noqa: E402
import hbcheck  # noqa: E402
import mutate  # noqa: E402
import sdmair  # noqa: E402


def pull_mutant(desc, sched, mut, flat, ranks):
    """Does the mutant concern a pull: a copy's issuer changed, a pull's
    slice or engine mutated (the path of mutate.candidates' description,
    in the original), or a race of the mutant's with a pull in it?"""
    if 'pull at ' in desc:
        return True
    node = sched['stmts']
    for step in desc.rsplit(' at ', 1)[1].split('/'):
        node = node[int(step)]
    if sdmair.is_pull(node[1]):
        return True
    v = hbcheck.check(flat, ranks, sdmair.buffer_table(mut), mut.get('implements'))
    return v['kind'] == 'race' and any(sdmair.is_pull(flat[i]) or sdmair.is_pull(flat[j])
                                       for i, j, *_ in v['races'])


def comm_options(args):
    """The communicator step's options (backends.check_schedule's comm)."""
    return {'only': args.comm_only, 'python': args.comm_python,
            'python_path': args.comm_python_path,
            'variants': args.comm_variants.split(','),
            'submits': args.comm_submits.split(','),
            'chunks': [int(c) for c in args.comm_chunks.split(',')] if args.comm_chunks
            else None, 'calls': args.comm_calls, 'shift': args.comm_shift,
            'threads': args.comm_threads, 'jitter_ms': args.comm_jitter_ms}


def run_seed(args, seed, tmp):
    """Everything for one seed -> a result dict."""
    sched = collgen.generate(seed)
    if args.comm_repeat > 1:
        sched = commpath.repeated(sched, args.comm_repeat)
    text = sdmair.print_schedule(sched)
    ranks = sched['ranks']
    work = os.path.join(tmp, f's{seed}')
    res = {'seed': seed, 'ranks': ranks, 'ops': len(sched['flat']), 'strategy': sched['strategy'],
           'implements': bool(sched['implements']), 'failures': [], 'runs': {},
           'mutants': {}, 'mutant_fail': [], 'valid_mutants': 0,
           'pulls': sum(map(sdmair.is_pull, sched['flat'])), 'pull_mutants': 0}
    do_ldst = args.ldst_every > 0 and seed % args.ldst_every == 0
    comm = None
    if args.comm or args.comm_only:
        comm = comm_options(args)
        res['comm'] = 2 <= ranks <= 4
        if args.comm_pair:
            # A second program on the same buffers: the schedule twice over.
            twice = commpath.repeated(sched, 2)
            comm['others'] = [(sdmair.print_schedule(twice), twice['flat'])]
        if args.comm_only and not res['comm']:
            res['text'] = text
            return res
    fails, runs, verdict = backends.check_schedule(args.bin, text, ranks, sched['implements'],
                                                   sched['flat'], work, seed, do_ldst, comm)
    res['failures'] += [(seed, 'schedule') + f for f in fails]
    res['runs'] = runs
    res['text'] = text
    if comm:
        res['comm_notes'] = comm.get('notes', [])
    rng = random.Random(seed * 7919 + 1)
    for n, (desc, mut) in enumerate(mutate.mutants(sched, rng, 0 if args.comm_only
                                                   else args.mutants)):
        mflat = sdmair.expand(mut['stmts'], ranks)
        mtext = sdmair.print_schedule(mut)
        mine, said, ok, msg = backends.check_mutant(args.bin, mtext, ranks, mflat,
                                                    os.path.join(work, f'm{n}'))
        key = f'{mine}'
        res['mutants'][key] = res['mutants'].get(key, 0) + 1
        res['pull_mutants'] += pull_mutant(desc, sched, mut, mflat, ranks)
        if not ok:
            res['mutant_fail'].append((seed, f'mutant {n} ({desc})', mine, said, msg, mtext))
            continue
        if mine == 'ok' and args.run_valid_mutants and not any(map(gen.avoided, mflat)):
            res['valid_mutants'] += 1
            f2, r2, _ = backends.check_schedule(args.bin, mtext, ranks, sched['implements'],
                                                mflat, os.path.join(work, f'm{n}r'), seed, False)
            res['failures'] += [(seed, f'mutant {n} ({desc})') + f for f in f2]
            for k, v in r2.items():
                res['runs'][k] = res['runs'].get(k, 0) + v
            if f2:
                res.setdefault('mutant_texts', {})[f'mutant {n} ({desc})'] = mtext
    return res


def summarise(results, elapsed):
    passed_over = sum(1 for r in results if 'comm' in r and not r['comm'] and not r['runs']
                      and not r['failures'])
    results = [r for r in results if not ('comm' in r and not r['comm'] and not r['runs']
                                          and not r['failures'])] if passed_over else results
    total = {'schedules': len(results), 'ops': 0, 'implements': 0, 'runs': {},
             'mutants': {}, 'valid_mutants': 0, 'pulls': 0, 'pull_schedules': 0,
             'pull_mutants': 0}
    for r in results:
        total['ops'] += r['ops']
        total['pulls'] += r['pulls']
        total['pull_schedules'] += bool(r['pulls'])
        total['pull_mutants'] += r['pull_mutants']
        total['implements'] += r['implements']
        total['valid_mutants'] += r['valid_mutants']
        for k, v in r['runs'].items():
            total['runs'][k] = total['runs'].get(k, 0) + v
        for k, v in r['mutants'].items():
            total['mutants'][k] = total['mutants'].get(k, 0) + v
    fails = [f for r in results for f in r['failures']]
    mfails = [f for r in results for f in r['mutant_fail']]
    strategies = {}
    for r in results:
        strategies[r['strategy']] = strategies.get(r['strategy'], 0) + 1
    lines = [
        f"schedules {total['schedules']} ({total['implements']} with implements), "
        f"{total['ops']} flat ops, ranks 2-9, {elapsed:.0f} s",
        'strategies ' + ' '.join(f'{k}={v}' for k, v in sorted(strategies.items())),
        'backend runs ' + ' '.join(f'{k}={v}' for k, v in sorted(total['runs'].items())),
        f"mutants {sum(total['mutants'].values())}: " +
        ' '.join(f'{k}={v}' for k, v in sorted(total['mutants'].items())) +
        f"; valid mutants run on the backends {total['valid_mutants']}",
        f"pull copies {total['pulls']} (in {total['pull_schedules']} schedules); "
        f"mutants of a pull {total['pull_mutants']}",
        f'schedule mismatches {len(fails)}',
        f'mutant mismatches {len(mfails)}',
    ]
    if passed_over or any('comm' in r for r in results):
        ran = [r for r in results if r.get('comm')]
        passed_over += sum(1 for r in results if 'comm' in r and not r['comm'])
        lines.insert(-2, f"comm: schedules {len(ran)} (ranks " +
                     ' '.join(f'{k}={v}' for k, v in sorted(
                         {n: sum(r['ranks'] == n for r in ran) for n in (2, 3, 4)}.items())) +
                     f"), passed over (other rank counts) {passed_over}; "
                     f"calls host {total['runs'].get('comm host', 0)} kernel "
                     f"{total['runs'].get('comm kernel', 0)} (ldst control "
                     f"{total['runs'].get('comm ldst', 0)}), load/store fallbacks "
                     f"{total['runs'].get('comm fallback', 0)}; skips "
                     f"{sum(len(r.get('comm_notes', [])) for r in ran)}")
    return lines, fails, mfails


def parse_seeds(text):
    a, _, b = text.partition(':')
    return range(int(a), int(b)) if b else range(int(a), int(a) + 1)


def replay(args):
    """Each file: a flat (or any) schedule with a fixed rank count."""
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, path in enumerate(args.replay):
            text = open(path).read()
            import re
            m = re.search(r'ranks\(%\w+ = (\d+)\)', text)
            ranks = int(m.group(1))
            comm = comm_options(args) if args.comm or args.comm_only else None
            fails, runs, verdict = backends.check_schedule(
                args.bin, text, ranks, None, None, os.path.join(tmp, str(i)), -1, True, comm)
            for note in (comm or {}).get('notes', []) if args.verbose else []:
                print(f'note {os.path.basename(path)}: {note}')
            for f in fails:
                print(f'FAIL {path}: {f[0]} {f[1]}: {f[2]}')
            bad += bool(fails)
            print(f'{"FAIL" if fails else "ok  "} {os.path.basename(path)}: '
                  + ' '.join(f'{k}={v}' for k, v in sorted(runs.items())))
    return 1 if bad else 0


def exhaustive(args):
    """Every single mutant of each given schedule's flat form, at each rank
    count: hbcheck and sdma-verify must agree on every one."""
    import re
    counts, bad = {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.exhaustive:
            for ranks in [int(r) for r in args.ranks.split(',')]:
                rc, out, err = backends.unroll(args.bin, path, ranks)
                if rc != 0:
                    continue
                head, flat = sdmair.parse_flat(out)
                sched = {'name': head['name'], 'ranks': ranks, 'fixed': True,
                         'implements': head['implements'], 'types': head['types'],
                         'buffers': [(b, 0, n) for b, n in head['buffers'].items()],
                         'stmts': sdmair.flat_to_stmts(flat)}
                for n, (desc, stmts) in enumerate(mutate.candidates(sched)):
                    mut = dict(sched, stmts=stmts)
                    mflat = sdmair.expand(stmts, ranks)
                    mine, said, ok, msg = backends.check_mutant(
                        args.bin, sdmair.print_schedule(mut), ranks, mflat,
                        os.path.join(tmp, str(n)))
                    counts[mine] = counts.get(mine, 0) + 1
                    if not ok:
                        bad += 1
                        print(f'FAIL {path} ranks {ranks} ({desc}): checker says {mine}, '
                              f'sdma-verify says {said}: {msg}')
    print(f'mutants {sum(counts.values())}: ' +
          ' '.join(f'{k}={v}' for k, v in sorted(counts.items())) + f'; mismatches {bad}')
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', required=True, help='directory of the sdma tools')
    ap.add_argument('--seeds', default='0:20', help='A:B (B excluded)')
    ap.add_argument('--minutes', type=float, default=0, help='fuzz mode: run seeds until then')
    ap.add_argument('--start', type=int, default=0, help='fuzz mode: first seed')
    ap.add_argument('--mutants', type=int, default=4, help='mutants per schedule')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--ldst-every', type=int, default=1, help='ld/st kernel every Nth seed (0: never)')
    ap.add_argument('--run-valid-mutants', type=int, default=1)
    ap.add_argument('--out', help='write failing schedules (and shrunk ones) here')
    ap.add_argument('--shrink', action='store_true', help='shrink failures (needs --out)')
    ap.add_argument('--avoid', default='', help='comma-separated constructs not to generate '
                    '(self-copy, pull): for open bugs that have a regression test')
    ap.add_argument('--exhaustive', nargs='*', help='every single mutant of these schedules')
    ap.add_argument('--ranks', default='2,3,4', help='rank counts for --exhaustive')
    ap.add_argument('--replay', nargs='*', help='run these schedule files through every backend')
    ap.add_argument('--comm', action='store_true', help='also run each schedule of 2-4 ranks '
                    'on the communicator (CPU device, DMA path, host and kernel submission)')
    ap.add_argument('--verbose', action='store_true', help='print the comm step\'s skips')
    ap.add_argument('--comm-only', action='store_true', help='that step alone (after verify)')
    ap.add_argument('--comm-python', default=None, help='an interpreter with torch for the '
                    'communicator jobs (default: this one)')
    ap.add_argument('--comm-python-path', default=None, help='the built Python package '
                    '(default: $SDMA_PYTHON, else BIN/../python)')
    ap.add_argument('--comm-variants', default=','.join(commpath.VARIANTS))
    ap.add_argument('--comm-submits', default=','.join(commpath.SUBMITS))
    ap.add_argument('--comm-shift', type=int, default=0, help='also run the first chunk size '
                    'on buffers this many bytes into their allocations (e.g. 32: the swap '
                    'packets refuse them)')
    ap.add_argument('--comm-pair', action='store_true', help='a second program on the same '
                    'buffers (the schedule twice over), its calls alternating with the first\'s')
    ap.add_argument('--comm-threads', action='store_true', help='the ranks as threads of one '
                    'process instead of processes')
    ap.add_argument('--comm-jitter-ms', type=float, default=0, help='each rank sleeps up to '
                    'this long before each call (ranks arrive in varying orders)')
    ap.add_argument('--comm-calls', type=int, default=2, help='calls back to back per chunk size')
    ap.add_argument('--comm-repeat', type=int, default=1, help='each schedule this many times '
                    'over, a barrier between (more packets a queue: the rings wrap and fill)')
    ap.add_argument('--comm-chunks', default='', help='chunk bytes (default: one multiple of '
                    '64 and one not, by seed)')
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    if args.comm_python_path is None:
        args.comm_python_path = os.environ.get('SDMA_PYTHON') or \
            os.path.join(os.path.dirname(args.bin), 'python')
    gen.AVOID.update(a for a in args.avoid.split(',') if a)
    if args.replay:
        return replay(args)
    if args.exhaustive:
        return exhaustive(args)
    start = time.time()
    results = []
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(args.jobs) as pool:
        if args.minutes:
            seed, pending = args.start, set()
            while time.time() - start < args.minutes * 60 or pending:
                while len(pending) < 2 * args.jobs and time.time() - start < args.minutes * 60:
                    pending.add(pool.submit(run_seed, args, seed, tmp))
                    seed += 1
                done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                results += [d.result() for d in done]
                for d in done:
                    report_failures(args, d.result())
        else:
            for res in pool.map(lambda s: run_seed(args, s, tmp), parse_seeds(args.seeds)):
                results.append(res)
                report_failures(args, res)
    lines, fails, mfails = summarise(results, time.time() - start)
    for line in lines:
        print(line)
    return 1 if fails or mfails else 0


def report_failures(args, res):
    for f in res['failures']:
        print(f'FAIL seed {f[0]} {f[1]}: {f[2]} {f[3]}: {f[4]}', flush=True)
    for note in res.get('comm_notes', []) if args.verbose else []:
        print(f'note seed {res["seed"]}: {note}', flush=True)
    for seed, what, mine, said, msg, _ in res['mutant_fail']:
        print(f'FAIL seed {seed} {what}: checker says {mine}, sdma-verify says {said}: {msg}',
              flush=True)
    if args.out and (res['failures'] or res['mutant_fail']):
        os.makedirs(args.out, exist_ok=True)
        head = f'// ranks={res["ranks"]} seed={res["seed"]}\n'
        with open(os.path.join(args.out, f'seed{res["seed"]}.mlir'), 'w') as f:
            f.write(head + res['text'])
        for what, text in res.get('mutant_texts', {}).items():
            name = f'seed{res["seed"]}-' + what.split()[1] + '.mlir'
            with open(os.path.join(args.out, name), 'w') as f:
                f.write(head + text)
        if args.shrink:
            shrink_first(args, res, head)
        for seed, what, mine, said, msg, text in res['mutant_fail']:
            name = f'seed{seed}-verify-' + what.split()[1] + '.mlir'
            with open(os.path.join(args.out, name), 'w') as f:
                f.write(head + f'// checker: {mine}; sdma-verify: {said}: {msg}\n' + text)


def shrink_first(args, res, head):
    """Shrink the seed's first backend failure into OUT/seedN-shrunk.mlir."""
    import shrink
    for seed, what, step, variant, msg in res['failures']:
        if step not in ('run', 'adversarial', 'ldst', 'ldst-staged', 'cross', 'sdma-run'):
            continue
        if 'timed out' in msg:
            continue              # too slow to shrink: every test would wait as long
        text = res['text'] if what == 'schedule' else res['mutant_texts'][what]
        result = shrink.shrink(args.bin, head + text, step, variant)
        if result:
            small, before, after = result
            name = os.path.join(args.out, f'seed{seed}-shrunk.mlir')
            with open(name, 'w') as f:
                f.write(f'// {step} {variant}: {msg}\n// shrunk from seed {seed} {what}: '
                        f'{before} -> {after} ops\n' + small)
            print(f'shrunk seed {seed} {what} ({step} {variant}): {before} -> {after} ops: {name}',
                  flush=True)
        return


if __name__ == '__main__':
    sys.exit(main())
