"""The tripwires on the real base: SmolLM2-135M-Instruct against itself (the identity adapter) on both halves of every
probe, under the chat recipe's system message, and, given a run folder, that run's trained policies (and each on-policy round) against their base.

    .venv/bin/python bench/tripwires.py [RUN_FOLDER] [--save tripwires.json]   # -> bench/results/tripwires.json
    .venv/bin/python bench/tripwires.py --smoke                                 # the tiny model, a few items

The base against itself must keep every probe (a difference of exactly 0: the same weights, greedy); its pass rate per
half says how much each probe can show (a probe the base fails everywhere can catch no loss)."""
import json, sys, tempfile, time
from datetime import date
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from _smoke import smoke_home, save_result, cli

def main(run=None, smoke:bool=False, save:str='tripwires.json'):
    import yaml
    from rlnb.hardware import cpu_line
    from rlnb.assets import model_path
    from rlnb.assets import tiny_adapter
    from rlnb.tripwires import run_tripwires, tripwire_table, PARTS
    home = smoke_home() if smoke else None
    system = yaml.safe_load((Path(__file__).parent.parent/'data'/'recipes'/'chitchat.yaml').read_text())['system']
    base = model_path('tiny' if smoke else 'smollm2')
    preset = 'quick' if smoke else 'cpu'
    res = {'cpu': cpu_line(), 'date': date.today().isoformat(), 'system': system, 'base': 'tiny' if smoke else 'smollm2',
           'preset': preset, 'base_vs_base': {}, 'policies': {}}
    with tempfile.TemporaryDirectory() as d:
        ident = tiny_adapter(base, Path(d)/'identity', scale=0.0)     # its outputs are the base's own
        for part in PARTS:
            t = time.perf_counter()
            r = run_tripwires(ident, preset, part=part, system=system)
            res['base_vs_base'][part] = {**r.summary(), 'seconds': round(time.perf_counter() - t, 1)}
            print(f"base vs base, {part} half ({res['base_vs_base'][part]['seconds']} s):\n{tripwire_table(r.summary())}", flush=True)
            assert r.passed and all(p['diff'] == 0 for p in r.probes.values()), r.probes
    found = sorted(Path(run).glob('*/adapter/adapter_config.json')) + sorted(Path(run).glob('*/round-*/adapter/adapter_config.json')) if run else []
    import hashlib
    digest = lambda d: hashlib.sha256((d/'adapter_model.safetensors').read_bytes()).hexdigest()
    seen = set()
    for p in found:                      # each trained policy of the run, and each round of an on-policy stage
        name = '/'.join(p.parent.relative_to(Path(run)).parts[:-1])
        if (h := digest(p.parent)) in seen: print(f"{name}: the same weights as a policy above, not probed again"); continue
        seen.add(h)
        t = time.perf_counter()
        r = run_tripwires(p.parent, preset, system=system)
        res['policies'][name] = {**r.summary(), 'run': Path(run).name, 'seconds': round(time.perf_counter() - t, 1)}
        print(f"{name} vs base:\n{tripwire_table(r.summary())}", flush=True)
    save_result(res, save, home)
    return res

if __name__ == '__main__':
    cli(main, smoke=sys.argv[1:] == ['--smoke'])
