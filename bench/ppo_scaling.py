"""How PPO's cost grows with the model, on this CPU: rlnb's `cpu` preset against TRL 0.29's PPOTrainer at the shapes of
SmolLM2-135M, -360M and -1.7B (`bench/scaling.py`'s folders: random weights of each shape, the real tokenizer), with
`bench/ppo_speed.py`'s settings and its two sides: seconds per step (mean and median of the steps after the first),
responses and response tokens per second, peak memory; and rlnb's step at the smallest shape on 1 thread and on 2, with
the 16-thread time an Amdahl fit of the two projects.
    .venv/bin/python bench/ppo_scaling.py                    # every size; writes bench/results/ppo_scaling.json
    .venv/bin/python bench/ppo_scaling.py --sizes 135M,360M  # some sizes (the file then holds only those)
    .venv/bin/python bench/ppo_scaling.py --smoke            # the tiny shape, 3 steps; the JSON to a temporary folder
                                                             # (TRL's side only where bench/.venv-trl029 exists)
Each side runs in its own process (TRL's from its own environment) under an address-space limit, `--limit-gib` (default:
this machine's memory less 2 GiB). A side that does not fit fails inside its limit and is recorded as not fitting, with
the error's last line, rather than taking the machine down."""
import json, os, resource, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ppo_speed
from scaling import SHAPES, amdahl, shape_folder
from report import step_median

SIDES = ('trl', 'rlnb (cpu preset: + bf16 sampling copy)')   # TRL 0.29 as documented; rlnb's `cpu` preset
STEPS = 3   # the first step is warm-up: the figures are the mean and median of the others
NO_MEMORY = ('MemoryError', 'out of memory', 'bad_alloc', 'Cannot allocate memory', 'DefaultCPUAllocator')

def machine_gib() -> float: return os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30

def side(name:str, folder, steps:int, rm:str, limit_gib:float, threads:int=0, smoke:bool=False) -> dict:
    "One side's run in its own process, under `limit_gib` of address space: its per-step record, or why it failed."
    py = str(ppo_speed.TRL_VENV/'bin'/'python') if name == 'trl' else sys.executable
    out = Path(tempfile.mkdtemp())/'side.json'
    lim = int(limit_gib * 2**30)
    env = {**os.environ, 'TRL_EXPERIMENTAL_SILENCE': '1', 'HF_HUB_OFFLINE': '1'}
    if threads: env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    t = time.perf_counter()
    p = subprocess.run([py, str(HERE/'ppo_speed.py'), '--side', name, '--steps', str(steps), '--out', str(out),
                        '--rm', rm, '--model', str(folder), '--threads', str(threads)] + ['--smoke'] * smoke,
                       capture_output=True, text=True, env=env, cwd=HERE.parent,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (lim, lim)))
    wall = round(time.perf_counter() - t, 1)
    if p.returncode == 0 and out.exists(): return {**json.loads(out.read_text()), 'process_s': wall}
    err = (p.stderr.strip().splitlines() or ['(no error output)'])[-1][:300]
    fits = not (any(k in p.stderr for k in NO_MEMORY) or p.returncode in (-9, 137))
    print(p.stderr[-2000:], file=sys.stderr)
    return {'failed': err, 'fits': fits, 'limit_gib': round(limit_gib, 1), 'process_s': wall}

def figures(run:dict, batch:int) -> dict:
    "Seconds per step (mean, median, phases) after the first step, responses and response tokens per second, memory."
    if 'failed' in run: return run   # why it failed, and whether it fit
    import statistics
    s, med = ppo_speed.summarise(run), step_median(run)   # the PPO table's own median (bench/report.py)
    xs = run['steps'][1:] or run['steps']
    toks = [x['response_tokens'] for x in xs if x.get('response_tokens')]
    out = dict(s_per_step=s['step'], s_per_step_median=med, phases={k: s[k] for k in ('generate', 'score',
               'prepare', 'update')}, responses_per_s=round(batch / s['step'], 3), peak_rss_mb=run['peak_rss_mb'],
               steps_measured=len(xs), process_s=run['process_s'])
    # TRL's side keeps no response length: its tokens per second is left out rather than assumed
    if toks: out['response_tokens_per_s'] = round(batch * statistics.mean(toks) / s['step'], 1)
    return out

def main():
    args = sys.argv[1:]
    smoke = '--smoke' in args
    sizes = ['tiny'] if smoke else (args[args.index('--sizes') + 1].split(',') if '--sizes' in args else ['135M', '360M', '1.7B'])
    limit = float(args[args.index('--limit-gib') + 1]) if '--limit-gib' in args else machine_gib() - 2
    from rlnb.core import bench_results, cache_dir
    from rlnb.hardware import cpu_line, isa_caps
    from rlnb.recipe import code_commit
    from datetime import datetime, timezone
    date = datetime.now(timezone.utc).isoformat(timespec='seconds')
    if smoke:
        from _smoke import smoke_home, skip
        results = smoke_home()/'results'
        ppo_speed.SETTINGS.update(ppo_speed.SMOKE)
    else: results = bench_results()
    print(cpu_line(), isa_caps() or '', flush=True)
    sides = [s for s in SIDES if s != 'trl' or (ppo_speed.TRL_VENV/'bin'/'python').exists()]
    if 'trl' not in sides:
        if not smoke: ppo_speed.setup(); sides = list(SIDES)
        else: skip(f'the TRL 0.29 side: {ppo_speed.TRL_VENV} is missing (create it with bench/ppo_speed.py --setup)')
    rm = str(ppo_speed.reward_model_dir(smoke))
    steps, batch = STEPS, ppo_speed.SETTINGS['batch']
    rows = []
    for size in sizes:
        folder = shape_folder(size, cache_dir()/'shapes')
        row = dict(size=size, shape=SHAPES[size], ppo={})
        for s in sides:
            row['ppo'][s] = figures(side(s, folder, steps, rm, limit, smoke=smoke), batch)
            print(size, s, json.dumps(row['ppo'][s]), flush=True)
        rows.append(row)
    small, threads = shape_folder(sizes[0], cache_dir()/'shapes'), {}
    for n in (1, 2):   # rlnb's step at the smallest shape, on 1 thread and on 2
        f = figures(side(SIDES[1], small, steps, rm, limit, threads=n, smoke=smoke), batch)
        threads[n] = f.get('s_per_step')
    scaling = dict(size=sizes[0], side=SIDES[1], s_per_step={str(k): v for k, v in threads.items()},
                   **(amdahl(threads[1], threads[2]) if all(threads.values()) else {}))
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), date=date, commit=code_commit(), settings=ppo_speed.SETTINGS,
               steps=steps, limit_gib=round(limit, 1), machine_gib=round(machine_gib(), 1), rows=rows, threads=scaling)
    path = results/'ppo_scaling.json'
    path.write_text(json.dumps(out, indent=1) + '\n')
    print(json.dumps(scaling)); print('wrote', path)
    from report import ppo_scaling_table
    print(ppo_scaling_table(path))

if __name__ == '__main__': main()
