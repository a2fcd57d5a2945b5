"""How far does the reward model's accuracy go on this data? Held-out pairwise accuracy against the number of training
pairs, for the demo's reward model (MiniLM + LoRA, `cpu` preset, prompt half 0), and an ensemble of two seeds.

On a pipeline run folder (`make demo` makes one): trains on the first 1/8, 1/4, 1/2 and all of the run's training
pairs of prompt half 0 (the reward stage's), scores the run's held-out pairs (prompts no stage trained on), and
reports accuracy with a 95 % interval that resamples the held-out prompts (pairs of one prompt are not independent),
next to the best one-line heuristic.

    .venv/bin/python bench/rm_curve.py models/chitchat/v3             # prints the table
    .venv/bin/python bench/rm_curve.py models/chitchat/v3 --save      # ... and writes bench/results/rm_curve.json
    .venv/bin/python bench/rm_curve.py --smoke                        # a toy run folder, tiny models"""
import json, subprocess, sys, time
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).parent/'results'/'rm_curve.json'
SMOKE = {}

def main(run:str, save:bool=False, preset:str='cpu', fractions=(1/8, 1/4, 1/2, 1)):
    import numpy as np
    from datasets import load_from_disk
    from rlnb.core import repo_dir
    from rlnb.hardware import cpu_line, peak_rss_mb
    from rlnb.formatting import half_of_prompts
    from rlnb.reward import train_reward_model, RewardConfig
    from rlnb.reward_eval import baseline_accuracies, column_texts as _col
    from rlnb.stats import bootstrap_ci
    run = Path(run); print(cpu_line(), flush=True)
    train = half_of_prompts(load_from_disk(str(run/'datasets'/'pairs'/'train')), SMOKE.get('half', 0)).shuffle(seed=0)
    ev = load_from_disk(str(run/'datasets'/'pairs'/'eval'))
    ev_prompts, ev_c, ev_r = _col(ev, 'prompt'), _col(ev, 'chosen'), _col(ev, 'rejected')   # text, whatever the format
    def acc(diff) -> dict:
        "Accuracy (ties half) with a bootstrap interval that resamples prompts: the held-out pairs share few prompts."
        d = np.asarray(diff, dtype=float); ok = (d > 0) + 0.5 * (d == 0)
        lo, hi = bootstrap_ci(ok, groups=ev_prompts)
        return {'accuracy': round(float(ok.mean()), 4), 'ci': [round(lo, 4), round(hi, 4)], 'eval_pairs': len(d)}
    def margins(rm) -> np.ndarray:
        s = np.asarray(rm.score(ev_prompts * 2, ev_c + ev_r), dtype=float)
        return s[:len(ev)] - s[len(ev):]
    rows, full = [], {}
    for f in fractions:
        n = max(2, round(f * len(train)))
        for seed in ((0, 1) if f == 1 else (0,)):
            cfg = RewardConfig.make(preset, seed=seed, **SMOKE.get('config', {}))
            t = time.perf_counter()
            res = train_reward_model(train.select(range(n)), None, cfg)
            secs = time.perf_counter() - t
            m = margins(res.model)
            if f == 1: full[seed] = m
            rows.append({'pairs': n, 'seed': seed, 'train_s': round(secs, 1), **acc(m)})
            print(rows[-1], flush=True)
    z = lambda m: m / (m.std() + 1e-12)        # scaled, not centred: the sign of a margin is the verdict
    rows.append({'pairs': len(train), 'seed': 'ensemble 0+1', 'train_s': round(sum(r['train_s'] for r in rows
                 if r['pairs'] == len(train)), 1), **acc(z(full[0]) + z(full[1]))})
    base = baseline_accuracies(ev)
    out = {'what': f'reward model ({preset} preset) accuracy vs training pairs, run {run.name}, prompt half 0',
           'cpu': cpu_line(), 'date': datetime.now(timezone.utc).isoformat(timespec='seconds'),
           'commit': subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True,
                                    cwd=repo_dir()).stdout.strip() or None,
           'run': f'{run.parent.name}/{run.name}', 'train_prompts': len(set(map(str, train['prompt']))),
           'eval_pairs': len(ev), 'eval_prompts': len(set(map(str, ev['prompt']))),
           'baselines': base, 'best_baseline': max(base.items(), key=lambda kv: kv[1]),
           'peak_rss_mb': round(peak_rss_mb()), 'rows': rows}
    if save:
        RESULTS.parent.mkdir(exist_ok=True); RESULTS.write_text(json.dumps(out, indent=1) + '\n'); print('saved', RESULTS)
    from rlnb.reward_eval import rm_curve_table
    print(rm_curve_table(out))
    return out

def smoke():
    "A toy run folder as the pipeline makes it, then the curve with the tiny preset."
    global RESULTS
    from _smoke import smoke_home, toy_run
    home = smoke_home(); RESULTS = home/'results'/'rm_curve.json'
    run = toy_run(home, prompts=6, records=60, judges=False)
    SMOKE.update(half=None, config=dict(epochs=1))
    r = main(run, save=True, preset='tiny', fractions=(1/2, 1))
    n = r['rows'][1]['pairs']
    assert [x['seed'] for x in r['rows']] == [0, 0, 1, 'ensemble 0+1'] and RESULTS.exists(), r
    assert [x['pairs'] for x in r['rows']] == [max(2, round(n / 2)), n, n, n], r   # training pairs, not held-out ones

if __name__ == '__main__':
    if '--smoke' in sys.argv: smoke(); sys.exit()
    main(sys.argv[1], '--save' in sys.argv)
