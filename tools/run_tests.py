"""Run the notebooks' tests the way `nbdev_test` does (same `test_nb`, same flags from settings.ini), each notebook
in its OWN process, with a timing per notebook and the closing line CI reads: `N passed, N failed`.

Each notebook runs under a fresh temporary RLNB_HOME (its `models/.cache` a link to the real cache of converted models),
and fails if it left anything new or changed in the project's own `models/` or `data/`: tests never write into a
user's project.

One process per notebook makes the run crash-proof: a segfault in native code (llama.cpp, torch), an OOM kill or a
hang (per-notebook time limit) fails that notebook alone, is reported by name (`FAIL 07_export.ipynb (signal 11
SIGSEGV)`, `... (timed out after 900 s)`), and the other notebooks still run; the summary line is always printed.

    python tools/run_tests.py                         # every notebook in nbs/
    python tools/run_tests.py --flags "slow postgres" # also the flagged cells
    python tools/run_tests.py --path nbs/07_export.ipynb --timeout 600
    python tools/run_tests.py --save                  # also write each notebook back WITH the outputs of the cells it ran
                                                      # (`make outputs`), so the web view shows tables and figures
    python tools/run_tests.py --jobs 1                # one notebook at a time (default: min(cores, 2) at once, below)

Notebooks run `--jobs` at a time (default `min(cores, 2)`), as
`nbdev_test` runs them in parallel: the fast tests use tiny models, so most of a notebook's time is one Python thread,
and a 2-core machine sat half idle running them one by one. With more than one job, each notebook's torch, OpenMP
and MKL get `cores // jobs` threads and OpenMP threads sleep when they wait (OMP_WAIT_POLICY=PASSIVE: spinning threads
of two processes on two cores slowed llama.cpp by orders of magnitude in bench/). The longest notebooks start first:
by the last run's times (kept in `models/.cache/test_times.json`), else by tools/test_times.json (a full run's times,
copied there so that a fresh clone starts the longest first too: started last, a long notebook leaves one core idle at
the end), else the highest-numbered first.

With more than one notebook, each is forked from a zygote (tools/forkserver.py) that imported torch, transformers,
peft, TRL and datasets once, instead of every notebook paying seconds of CPU for them; each child still has its own
session, environment, RLNB_HOME, numpy seed and exit status. RLNB_TEST_FORK=0 starts a fresh python per notebook.
"""
import argparse, json, os, re, shutil, signal, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

WATCHED = ('models', 'data')   # a test may not leave anything new or changed here (models/.cache excepted)

def run_one(path:str, flags:str, save:bool=False) -> int:
    "Child mode: test one notebook in this process; exit 0 (passed) or 1 (failed). `save`: write its outputs back."
    from nbdev.config import get_config
    from nbdev.test import test_nb
    cfg = get_config()
    skip = set(cfg.tst_flags.split()) - set(flags.split())
    if not save:
        ok, _ = test_nb(Path(path), skip_flags=list(skip), basepath=cfg.config_path)
        return 0 if ok else 1
    return save_outputs(Path(path), skip, cfg.config_path)

def _directives(src:str) -> set:
    "The `#| flag` words at the top of a cell."
    out = set()
    for line in src.splitlines():
        if not line.startswith('#|'): break
        out |= set(line[2:].split())
    return out

_TRL_LOG = re.compile(r"^\{'(loss|eval_loss|train_runtime|train_loss|grad_norm|learning_rate|epoch|rewards/|eval_)[^\n]*\}$\n?", re.M)   # the line and its end
_TMP = re.compile(r"(?<![\w.-])/tmp/[A-Za-z0-9_.\-]+")   # /tmp/x, also in sqlite:////tmp/x; not /var/tmp/x

def clean_text(s:str, repo:Path|None=None, home:str|None=None) -> str:
    ("What a saved output may show: no path of the machine it ran on (the project folder, the test's RLNB_HOME, "
     "temporary folders, the user's home) and no raw trainer log dicts.")
    path = lambda p: re.compile(r'(?<![\w.-])' + re.escape(str(p)) + r'(?=/|[^\w/.-]|$)')   # whole components
    if home: s = path(home).sub('$RLNB_HOME', s)
    if repo: s = path(repo).sub('.', s)
    s = _TMP.sub('$TMP', s)
    if Path.home() != Path('/'): s = path(Path.home()).sub('~', s)
    return _TRL_LOG.sub('', s)

def clean_outputs(cells, repo:Path|None=None, home:str|None=None) -> None:
    "`clean_text` over every saved output of `cells` (stream text and text/plain, markdown and HTML data)."
    for c in cells:
        for o in c.get('outputs', []) if c.get('cell_type') == 'code' else []:
            if 'text' in o:
                t = clean_text(''.join(o['text']) if isinstance(o['text'], list) else o['text'], repo, home)
                o['text'] = t.splitlines(True) if isinstance(o['text'], list) else t
            for k in ('text/plain', 'text/markdown', 'text/html'):
                if k in o.get('data', {}):
                    v = o['data'][k]; t = clean_text(''.join(v) if isinstance(v, list) else v, repo, home)
                    o['data'][k] = t.splitlines(True) if isinstance(v, list) else t

def save_outputs(path:Path, skip:set, basepath) -> int:
    "Run the notebook's cells as `test_nb` does (flagged cells and the export cell skipped) and write it back with their outputs."
    import traceback
    from execnb.nbio import read_nb, write_nb
    from execnb.shell import CaptureShell
    sys.path.insert(0, str(basepath)); os.environ['IN_TEST'] = '1'
    nb = read_nb(path)
    skipped = lambda c: c.cell_type != 'code' or 'nbdev_export(' in c.source or bool(skip & _directives(c.source))
    os.chdir(path.parent)
    k = CaptureShell(path)
    try: k.run_all(nb, exc_stop=True, preproc=skipped)
    except Exception:
        traceback.print_exc(); sys.stderr.write(k.prettytb(fname=path) + '\n'); return 1
    for c in nb.cells:
        if c.cell_type != 'code': continue
        c.execution_count = None
        # slow/postgres/browser cells keep no stale output; progress bars (stderr) are not kept
        c.outputs = [] if skipped(c) else [o for o in c.get('outputs', []) if not (o.get('output_type') == 'stream' and o.get('name') == 'stderr')]
    clean_outputs(nb.cells, path.resolve().parent.parent, os.environ.get('RLNB_HOME'))
    c_empty = lambda o: o.get('output_type') == 'stream' and not ''.join(o.get('text', '')).strip()
    for c in nb.cells:
        if c.cell_type == 'code': c.outputs = [o for o in c.outputs if not c_empty(o)]
    write_nb(nb, path)
    return 0

def describe(rc:int|None, timed_out:bool, timeout:float) -> str:
    "Why a notebook's process failed, in words."
    if timed_out: return f"timed out after {timeout:.0f} s"
    if rc is not None and rc < 0:
        try: name = signal.Signals(-rc).name
        except ValueError: name = '?'
        hint = ' - killed, out of memory?' if -rc == signal.SIGKILL else ''
        return f"signal {-rc} {name}{hint}"
    if rc is None: return 'its zygote died: killed'
    return f"exit {rc}" if rc not in (0, 1) else 'failed'

def snapshot(repo:Path) -> dict:
    "`{relative path: (size, mtime)}` of every file and folder under the project's `models/` and `data/`, `models/.cache` excepted."
    out = {}
    for top in WATCHED:
        for root, dirs, files in os.walk(repo/top):
            r = Path(root)
            if r == repo/'models': dirs[:] = [d for d in dirs if d != '.cache']
            for n in dirs: out[str((r/n).relative_to(repo)) + '/'] = None
            for n in files:
                try: st = (r/n).lstat(); out[str((r/n).relative_to(repo))] = (st.st_size, st.st_mtime_ns)
                except FileNotFoundError: pass
    return out

def litter(before:dict, after:dict) -> list:
    "Paths new, changed or deleted between two snapshots (deleted ones marked so)."
    return (sorted(k for k, v in after.items() if k not in before or before[k] != v)
            + sorted(f'{k} (deleted)' for k in before.keys() - after.keys()))

def temp_home(cache:Path) -> Path:
    "A fresh RLNB_HOME for one notebook: empty but for `models/.cache`, a link to the real cache (converted models)."
    home = Path(tempfile.mkdtemp(prefix='rlnb-test-home-'))
    (home/'models').mkdir(); (home/'models'/'.cache').symlink_to(cache, target_is_directory=True)
    return home

def run_isolated(nb:Path, flags:str, timeout:float, cwd:Path, save:bool=False, repo:Path|None=None,
                 cache:Path|None=None, threads:int|None=None, zygote=None) -> tuple[bool, float, str]:
    ("Test `nb` in a child process (its own process group, so a timeout kills whatever it started) under a temporary "
     "RLNB_HOME, and fail it if it left anything new in the project's `models/` or `data/`; `(ok, secs, why)`.")
    t0 = time.time()
    home = temp_home(cache) if cache else None
    env = {**os.environ, 'PYTHONFAULTHANDLER': '1'}       # a native crash prints the Python stack that led to it
    if threads: env.update({k: str(threads) for k in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS')}, OMP_WAIT_POLICY='PASSIVE')
    if home: env['RLNB_HOME'] = str(home)
    before = snapshot(repo) if repo else {}
    from forkserver import run_limited
    rc, timed_out = run_limited([__file__, '--one', str(nb), '--flags', flags] + (['--save'] if save else []), env, cwd,
                                timeout, zygote)   # its own group: a timeout kills whatever it started
    if home: shutil.rmtree(home, ignore_errors=True)    # removes the link, never the cache it points to
    ok, why = rc == 0 and not timed_out, describe(rc, timed_out, timeout)
    if repo and (left := litter(before, snapshot(repo))):
        why = (why + '; ' if not ok else '') + (f"left {len(left)} new path(s) in the project: {', '.join(left[:6])}"
                                          " (or something else wrote there while it ran)")
        ok = False
    return ok, time.time() - t0, why

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--flags', default='', help='space separated test flags to run (e.g. "slow postgres")')
    ap.add_argument('--path', default=None, help='a notebook, folder or glob (default: every notebook in nbs/)')
    ap.add_argument('--timeout', type=float, default=None, help='seconds per notebook (default 900; 3600 with the slow flag)')
    ap.add_argument('--save', action='store_true', help="write each notebook back with the outputs of the cells it ran")
    ap.add_argument('--jobs', type=int, default=None, help='notebooks at once (default: min(cores, 2))')
    ap.add_argument('--clean-saved', action='store_true', help="only clean the saved outputs of every notebook (paths, trainer logs)")
    ap.add_argument('--watch', default=None, help="the folder whose models/ and data/ no test may change (default: the project's)")
    ap.add_argument('--one', help=argparse.SUPPRESS)     # child mode
    args = ap.parse_args()
    if args.one: sys.exit(run_one(args.one, args.flags, args.save))
    if args.clean_saved:
        root = Path(__file__).resolve().parent.parent
        for f in sorted((root/'nbs').glob('*.ipynb')):
            nb = json.loads(f.read_text()); before = json.dumps(nb)
            clean_outputs(nb['cells'], root)
            if json.dumps(nb) != before: f.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n'); print('cleaned', f.name)
        sys.exit(0)
    from nbdev.config import get_config
    from nbdev.doclinks import nbglob
    cfg = get_config()
    timeout = args.timeout or (3600 if 'slow' in args.flags.split() else 900)
    files = sorted(f.absolute() for f in nbglob(args.path, as_path=True) if not f.name.startswith('_'))
    repo = Path(args.watch or cfg.config_path)
    cache = Path(os.environ.get('RLNB_HOME') or cfg.config_path).expanduser()/'models'/'.cache'   # converted models, shared by every notebook
    cache.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(args.jobs or min(os.cpu_count() or 1, 2), len(files)))
    threads = max(1, (os.cpu_count() or 1) // jobs) if jobs > 1 else None
    times_file = cache/'test_times.json'
    last = {}
    for f in (Path(__file__).with_name('test_times.json'), times_file):   # the shipped order, then this machine's last run
        try: last.update(json.loads(f.read_text()))
        except (OSError, ValueError): pass
    order = sorted(files, key=lambda f: (-last.get(f.name, 0), [-ord(ch) for ch in f.name]))   # longest (or last-numbered) first
    results, secs_by, t0 = [], {}, time.time()
    zyg = None
    if len(files) > 1:   # torch, transformers, peft, TRL, datasets imported once (tools/forkserver.py)
        from forkserver import zygote_or_none
        zenv = {**os.environ, 'PYTHONFAULTHANDLER': '1'}   # the children's thread counts: torch reads them at import
        if threads: zenv.update({k: str(threads) for k in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS')}, OMP_WAIT_POLICY='PASSIVE')
        zyg = zygote_or_none(zenv, 'notebook')
    with ThreadPoolExecutor(jobs) as pool:
        futs = {pool.submit(run_isolated, f, args.flags, timeout, Path(cfg.nbs_path), args.save, repo, cache.resolve(),
                            threads, zyg): f for f in order}
        for fut in as_completed(futs):
            f = futs[fut]; ok, secs, why = fut.result()
            results.append(ok); secs_by[f.name] = round(secs, 1)
            print(f"{'ok  ' if ok else 'FAIL'} {f.name:<28} {secs:7.1f} s" + ('' if ok else f"  ({why})"), flush=True)
    if zyg: zyg.close()
    if not args.path and not args.flags:
        try: times_file.write_text(json.dumps(secs_by, indent=1))
        except OSError: pass
    print(f"sum of the notebooks' times {sum(secs_by.values()):.0f} s, {jobs} at a time"
          + (f" ({threads} thread{'s' * (threads > 1)} each)" if threads else ''))
    n_ok = sum(results)
    print(f"notebooks tested with flags [{args.flags}] in {time.time()-t0:.0f} s, each in its own process"
          + (" (forked from a zygote that imported torch, transformers, peft, TRL and datasets once)" if zyg else '')
          + f" (limit {timeout:.0f} s)")
    print(f"{n_ok} passed, {len(results)-n_ok} failed")
    sys.exit(0 if results and n_ok == len(results) else 1)

if __name__ == '__main__': main()
