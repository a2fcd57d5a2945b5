"""Is an ensemble of judges a better stand-in for people than the one judge the evaluation uses? Measured on held-out
human pairs of a demo run.

    .venv/bin/python bench/judge_ensemble.py [RUN]   # RUN: a make-demo run folder (default models/chitchat/v1);
                                                    # writes bench/results/judge_ensemble.json
    .venv/bin/python bench/judge_ensemble.py --smoke # a toy run, tiny judges; JSON to a temp folder

The run's judge (`judge/`: MiniLM + LoRA, Bradley-Terry on every training topic's pairs, seed 1, 4,000 pairs) is
trained again with other seeds (2 and 3), exactly as the judge stage trains it. Each judge, and the ensemble that
averages the three judges' standardised scores, is scored on the run's held-out human pairs (topics no judge saw):
accuracy with an interval that resamples topics, the paired difference to the best one-line heuristic
(`beats_heuristic`), and the ensemble's paired difference to the run's own judge. The ensemble replaces the judge
only if that difference's lower bound is above 0. The second backbone the issue asks for, SmolLM2-135M with a score
head, is in `bench/results/judge_smollm2.json` (300 pairs in the time MiniLM takes for 4,000)."""
import json, sys, tempfile
from pathlib import Path

SEEDS = (2, 3)

def main(run:str|None=None, smoke:bool=False, save:str='judge_ensemble.json'):
    import numpy as np
    from datasets import load_from_disk
    from rlnb.core import repo_dir, utc_now
    from rlnb.hardware import cpu_line
    from rlnb.formatting import prompt_text
    from rlnb.judges import RewardJudge, beats_heuristic
    from rlnb.reward import RewardConfig, train_reward_model
    from rlnb.stats import bootstrap_ci
    print(cpu_line(), flush=True)
    from _smoke import save_result
    if smoke:
        from _smoke import smoke_home, toy_run
        home = smoke_home(); run = toy_run(home, prompts=6, records=80)
        preset, over = 'tiny', {}
    else:
        home, run = None, Path(run or repo_dir()/'models'/'chitchat'/'v1')
        rec = json.loads((run/'config.json').read_text())['recipe']
        over = {k: v for s in rec['stages'] if s['stage'] == 'judge' for k, v in s.items()
                if k not in ('stage', 'prompt_half', 'seed', 'preset', 'key')}
        preset = next(s.get('preset', 'cpu') for s in rec['stages'] if s['stage'] == 'judge')
    ds = {f: load_from_disk(str(run/'datasets'/f)) for f in ('pairs',)}
    train, pairs = ds['pairs']['train'], ds['pairs']['eval']
    ps = [prompt_text(p) for p in pairs['prompt']]
    ch, rj = [prompt_text(x) for x in pairs['chosen']], [prompt_text(x) for x in pairs['rejected']]
    judges = {'judge (run, seed 1)': RewardJudge(run/'judge'/'reward_model')}
    meta = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in SEEDS:
            cfg = RewardConfig.make(preset, seed=s, **over)
            res = train_reward_model(train, None, cfg, output_dir=Path(tmp)/f'seed{s}')
            judges[f'seed {s}'] = RewardJudge(res.model, name=f'seed{s}')
            meta[f'seed {s}'] = {'train_seconds': res.metrics['train_seconds'], 'train_examples': res.metrics['train_examples']}
    z = {}
    for name, j in judges.items():
        sc, sr = j.score(ps, ch), j.score(ps, rj)
        mu, sd = np.concatenate([sc, sr]).mean(), np.concatenate([sc, sr]).std() or 1.0
        z[name] = ((sc - mu) / sd, (sr - mu) / sd)
    z['ensemble (mean of 3)'] = tuple(np.mean([z[n][i] for n in judges], 0) for i in (0, 1))
    correct = {n: np.where(c > r, 1.0, np.where(c < r, 0.0, 0.5)) for n, (c, r) in z.items()}
    rows = []
    for n, c in correct.items():
        lo, hi = bootstrap_ci(c, groups=ps)
        rows.append({'judge': n, 'accuracy': round(float(c.mean()), 4), 'ci': [round(lo, 4), round(hi, 4)],
                     'vs_heuristic': beats_heuristic(c, ps, ch, rj), **meta.get(n, {})})
    d = correct['ensemble (mean of 3)'] - correct['judge (run, seed 1)']
    lo, hi = bootstrap_ci(d, groups=ps)
    res = {'cpu': cpu_line(), 'date': utc_now(), 'smoke': smoke, 'run': str(run), 'pairs': len(ps), 'topics': len(set(ps)),
           'train_pairs': len(train), 'rows': rows,
           'ensemble_minus_judge': {'diff': round(float(d.mean()), 4), 'ci': [round(lo, 4), round(hi, 4)]},
           'adopt_ensemble': bool(lo > 0)}
    for r in rows:
        h = r['vs_heuristic']
        print(f"{r['judge']:>22}: {r['accuracy']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]  vs {h['heuristic']} "
              f"{h['diff']:+.3f} [{h['ci'][0]:+.3f}, {h['ci'][1]:+.3f}]")
    e = res['ensemble_minus_judge']
    print(f"ensemble - judge: {e['diff']:+.4f} [{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}] -> adopt: {res['adopt_ensemble']}")
    save_result(res, save, home)
    return res

if __name__ == '__main__':
    sys.path.insert(0, str(Path(__file__).parent))
    from _smoke import cli; cli(main, smoke='--smoke' in sys.argv)
