"""Does choosing which pairs people label beat labelling at random? Label efficiency on the bundled chitchat ratings,
simulated through `rlnb.people.label_efficiency` with the ratings as the oracle.

    .venv/bin/python bench/active_pairs.py           # writes bench/results/active_pairs.json
    .venv/bin/python bench/active_pairs.py --smoke   # tiny encoder, 2 seeds, 3 budgets; JSON to a temp folder

The pairs are make demo's (data/recipes/chitchat.yaml's format stage: margin 0.2, at most 300 pairs per prompt, 20 % of
the prompts held out, seed 0): the pool is the training prompts' pairs, the test set the held-out prompts' (topics no
label came from). Features: all-MiniLM-L6-v2 embeddings of prompt and answer, chosen minus rejected. The reward model is
an ensemble of 4 linear Bradley-Terry heads (bootstrap resamples); the active arm labels the pairs they disagree on most,
a quarter of each batch at random. Settings (ensemble size, random share, batch of 40, start of 40 random labels) were
fixed before the first run and not tuned; 20 seeds."""
import sys
from pathlib import Path

def main(run=None, smoke:bool=False, save:str='active_pairs.json'):
    import yaml
    from rlnb.core import utc_now, repo_dir
    from rlnb.hardware import cpu_line
    from rlnb.assets import tiny_encoder
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets, prompt_text
    from rlnb.people import pair_features, label_efficiency, efficiency_decision
    from _smoke import save_result, smoke_home
    print(cpu_line(), flush=True)
    home = smoke_home() if smoke else None
    fmt = next(s for s in yaml.safe_load((repo_dir()/'data'/'recipes'/'chitchat.yaml').read_text())['stages']
               if s['stage'] == 'format')
    d = build_datasets(chitchat_records()[0], fmt['min_margin'], fmt['max_pairs_per_prompt'], fmt['eval_frac'], 0,
                       conversational=False, formats=('pairs',))['pairs']
    rows = lambda ds: [dict(prompt=prompt_text(p), chosen=c, rejected=r) for p, c, r in zip(ds['prompt'], ds['chosen'], ds['rejected'])]
    train, test = rows(d['train']), rows(d['eval'])
    enc = tiny_encoder() if smoke else (None, None)
    if smoke: train, test = train[:300], test[:200]
    pool, tst = pair_features(train, *enc), pair_features(test, *enc)
    budgets, seeds = ([40, 80, 120], range(2)) if smoke else (list(range(40, 801, 40)), range(20))
    res = label_efficiency(pool, tst, budgets=budgets, seeds=seeds, members=4, random_share=0.25)
    res.pop('per_seed')
    res.update(decision=efficiency_decision(res), cpu=cpu_line(), date=utc_now(), data='chitchat (make demo\'s pairs)',
               train_prompts=len({r['prompt'] for r in train}), test_prompts=len({r['prompt'] for r in test}),
               encoder='tiny (smoke)' if smoke else 'all-MiniLM-L6-v2 (frozen)')
    print(res['decision'], flush=True)
    return save_result(res, save, home)

if __name__ == '__main__':
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main(smoke='--smoke' in sys.argv)
