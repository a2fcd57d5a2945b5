"""Benchmarks cannot rot: run every bench/*.py with `--smoke` (its own code path, the smallest budget), one at a time,
each in its own process (and process group) with a time limit, and fail when one fails.

    .venv/bin/python tools/bench_smoke.py                    # every bench/*.py; exit 1 if any failed
    .venv/bin/python tools/bench_smoke.py --only dpo_speed serve_speed --timeout 300 --keep
    .venv/bin/python tools/bench_smoke.py --part 1/3                 # every third script, from the first (98a; 98b, 98c)

One line per script: `ok`, `SKIP` (it ran, but said `SKIP: <part>` about a part this machine cannot run: no CUDA, no
TRL 0.29 venv, ...) or `FAIL`, with its seconds; a failing script's output tail follows. Also FAIL:
- a bench/*.py without a `--smoke` flag (it is not run: a full benchmark would take minutes and write bench/results/);
- a script after which a file in bench/results/, models/ (models/.cache excepted: converted models and tiny models
  are cached there on purpose), data/ or nbs/images/online_loop.png is new, modified or deleted: a smoke run writes
  only to temporary folders (work done beside the run, in the same folders, is blamed on the script that was running).
Each script gets RLNB_HOME = a fresh temporary folder (its models/.cache linked to the real cache) and TMPDIR inside
this run's temporary folder, removed at the end (`--keep` keeps it and prints where). Torch runs on `--threads` threads
(default 1, OMP_NUM_THREADS) and OpenMP threads sleep when they wait (OMP_WAIT_POLICY=PASSIVE; llama.cpp's ggml waits at
OpenMP barriers too): the smoke models are tiny, and on a small machine shared with other work, spinning threads made
a tiny model's step 20x slower and llama.cpp's decoding 400x slower. Each script is forked from a zygote that imported
torch, transformers, peft, TRL and datasets once (tools/forkserver.py; RLNB_TEST_FORK=0: a fresh python each), as if
started afresh; the processes a script starts itself are fresh ones."""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT/'bench'
WATCHED = ['bench/results', 'models', 'data', 'nbs/images/online_loop.png']   # relative to ROOT
IGNORED = ['models/.cache']
SMOKE_FLAG = re.compile(r"""['"]--smoke['"]""")
OWN_LIMIT = re.compile(r'^SMOKE_TIMEOUT\s*=\s*(\d+)', re.M)   # a script whose smoke needs longer says so, with why

def script_timeout(script:Path, default:float) -> float:
    "The script's own `SMOKE_TIMEOUT = N` (seconds) where it declares one, else `default`."
    m = OWN_LIMIT.search(script.read_text(encoding='utf-8'))
    return max(default, float(m.group(1))) if m else default

def snapshot(root:Path|None=None) -> dict:
    "{relative path: (mtime_ns, size)} of every file under the watched paths (the ignored folders not entered)."
    root, out = root or ROOT, {}
    def add(f:Path):
        try: st = f.lstat()
        except FileNotFoundError: return   # removed while we looked
        out[f.relative_to(root).as_posix()] = (st.st_mtime_ns, st.st_size)
    for w in WATCHED:
        p = root/w
        if not p.is_dir():
            if p.exists() or p.is_symlink(): add(p)
            continue
        for d, dirs, files in os.walk(p):
            dirs[:] = [x for x in dirs if (Path(d)/x).relative_to(root).as_posix() not in IGNORED]
            for f in files: add(Path(d)/f)
    return out

def changes(before:dict, after:dict) -> list[str]:
    "'new PATH', 'modified PATH', 'deleted PATH' between two snapshots."
    return ([f'new {p}' for p in sorted(after.keys() - before.keys())]
            + [f'modified {p}' for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
            + [f'deleted {p}' for p in sorted(before.keys() - after.keys())])

LIBRARIES = {'report'}   # modules the scripts import (bench/report.py: the tables), not benchmarks themselves

def has_smoke_flag(script:Path) -> bool:
    "Whether the script's source names a `--smoke` flag (checked before running it)."
    return bool(SMOKE_FLAG.search(script.read_text(encoding='utf-8')))

def real_cache() -> Path:
    return (Path(os.environ.get('RLNB_HOME') or ROOT).expanduser()/'models'/'.cache').resolve()

def fresh_home(tmp:Path, name:str) -> Path:
    "A new RLNB_HOME for one script: empty but for models/.cache, a link to the real cache."
    home = Path(tempfile.mkdtemp(prefix=f'home-{name}-', dir=tmp))
    (home/'models').mkdir()
    cache = real_cache(); cache.mkdir(parents=True, exist_ok=True)
    (home/'models'/'.cache').symlink_to(cache, target_is_directory=True)
    return home

SCRIPT_ENV = {'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_NO_ADVISORY_WARNINGS': '1', 'TOKENIZERS_PARALLELISM': 'false',
              'PYTHONFAULTHANDLER': '1', 'PYTHONUNBUFFERED': '1', 'MPLBACKEND': 'Agg', 'OMP_WAIT_POLICY': 'PASSIVE'}

def run_script(script:Path, tmp:Path, timeout:float, threads:int=1, zygote=None) -> tuple[str, float, str, list, str]:
    "Run `script --smoke` in its own process group; `(status, seconds, why it failed, skipped parts, output)`."
    name = script.stem
    work = Path(tempfile.mkdtemp(prefix=f'tmp-{name}-', dir=tmp))
    env = {**os.environ, **SCRIPT_ENV, 'RLNB_HOME': str(fresh_home(tmp, name)), 'TMPDIR': str(work),
           'OMP_NUM_THREADS': str(threads), 'MKL_NUM_THREADS': str(threads)}
    log = tmp/f'{name}.log'
    t0 = time.perf_counter()
    from forkserver import run_limited   # whatever it started (servers, torchrun workers) goes too, after it
    rc, timed_out = run_limited([script, '--smoke'], env, ROOT, timeout, zygote, log, kill_group_after=True)
    why = f'timed out after {timeout:.0f} s' if timed_out else 'its zygote died: killed' if rc is None else None
    secs = time.perf_counter() - t0
    out = log.read_text(errors='replace')
    skipped = [l[len('SKIP:'):].strip() for l in out.splitlines() if l.startswith('SKIP:')]
    if why is None and rc != 0:
        try: why = f'signal {-rc} {signal.Signals(-rc).name}' if rc < 0 else f'exit {rc}'
        except ValueError: why = f'signal {-rc}'
    return ('FAIL' if why else 'SKIP' if skipped else 'ok'), secs, (why or ''), skipped, out

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--only', nargs='+', help='these scripts (names, with or without .py)')
    ap.add_argument('--timeout', type=float, default=180, help='seconds per script (default 180)')
    ap.add_argument('--keep', action='store_true', help="keep the run's temporary folder (logs, homes, results)")
    ap.add_argument('--tail', type=int, default=40, help="lines of a failing script's output to show")
    ap.add_argument('--threads', type=int, default=1, help='OMP_NUM_THREADS of each script (default 1)')
    ap.add_argument('--part', help='K/N: the K-th of N interleaved parts of the scripts (sorted by name), so N test '
                                   'notebooks share them and each stays inside its time limit')
    a = ap.parse_args(argv)
    scripts = sorted(p for p in BENCH.glob('*.py') if p.stem not in LIBRARIES)
    if a.part:
        k, n = map(int, a.part.split('/'))
        if not 1 <= k <= n: ap.error(f"--part {a.part}: want K/N with 1 <= K <= N")
        scripts = scripts[k - 1::n]
    if a.only:
        want = {n.removesuffix('.py') for n in a.only}
        if missing := want - {s.stem for s in scripts}: ap.error(f"no bench/{'.py, bench/'.join(sorted(missing))}.py")
        scripts = [s for s in scripts if s.stem in want]
    tmp = Path(tempfile.mkdtemp(prefix='rlnb-bench-smoke-'))
    failed, total = [], time.perf_counter()
    from forkserver import zygote_or_none   # torch, transformers, peft, TRL, datasets imported once for every script
    zyg = zygote_or_none({**os.environ, **SCRIPT_ENV, 'OMP_NUM_THREADS': str(a.threads), 'MKL_NUM_THREADS': str(a.threads)},
                         'script') if len(scripts) > 1 else None   # what the scripts' environment fixes, read at import
    print(f"{len(scripts)} benchmark scripts, --smoke each, limit {a.timeout:.0f} s each", flush=True)
    try:
        for s in scripts:
            rel = s.relative_to(ROOT).as_posix()
            if not has_smoke_flag(s):
                failed.append(rel); print(f"FAIL     -    {rel}  (no --smoke flag: every benchmark needs one)", flush=True)
                continue
            before = snapshot()
            status, secs, why, skipped, out = run_script(s, tmp, script_timeout(s, a.timeout), a.threads, zyg)
            if changed := changes(before, snapshot()):
                status, why = 'FAIL', f"wrote outside its temporary folders: {', '.join(changed)}"
            note = f"  ({why})" if why else f"  (skipped: {'; '.join(skipped)})" if skipped else ''
            print(f"{status:4s} {secs:7.1f} s  {rel}{note}", flush=True)
            if status == 'FAIL':
                failed.append(rel)
                print('    | ' + '\n    | '.join(out.rstrip().splitlines()[-a.tail:]), flush=True)
    finally:
        if zyg: zyg.close()
        if a.keep: print(f"kept {tmp}")
        else: shutil.rmtree(tmp, ignore_errors=True)
    n = len(scripts)
    print(f"{n - len(failed)} of {n} passed in {time.perf_counter() - total:.0f} s"
          + (f"; FAILED: {', '.join(failed)}" if failed else ''), flush=True)
    return 1 if failed else 0

if __name__ == '__main__': sys.exit(main())
