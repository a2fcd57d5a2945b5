"""SFT with and without packing, side by side in one run on this CPU, on the filing agent's SFT examples.

    .venv/bin/python bench/sft_packing.py            # writes bench/results/sft_packing.json
    .venv/bin/python bench/sft_packing.py --smoke    # tiny policy, 8 examples, 1 epoch; JSON to a temp folder

The filing recipe's SFT examples (data/filing/feedback.jsonl: answers scored 0.75 or more, the system message in every
example), from the recipe's development split only (its format stage's eval_frac, confirm_frac and seed), with the
recipe's SFT settings (LoRA r16, its learning rate and batch size), one epoch over the first `N_TRAIN` train examples.
Rows, run in this order: `no packing`; `packing` (TRL's best-fit decreasing packing: several examples in a row of up to
`max_length` tokens, no padding, so a batch of 4 rows carries many examples and an epoch takes fewer steps); `no packing
again` (how far this machine's speed drifted within the run). Each row: optimiser steps, train seconds, examples and
answer tokens per second, the last logged train loss, and the held-out answer loss after training on `N_EVAL`
development examples, always measured unpacked (so the rows compare): packing trains on the same examples with fewer,
larger steps, which is a different run, not only a faster one."""
import json, sys, tempfile, time
from pathlib import Path

N_TRAIN, N_EVAL = 96, 32

def filing_examples(smoke:bool):
    "The filing recipe's SFT train and development examples, as its format stage splits them."
    import yaml
    from rlnb.core import repo_dir
    from rlnb.feedback_store import iter_jsonl
    from rlnb.formatting import to_sft, to_dataset, split_by_prompt
    recipe = yaml.safe_load((repo_dir()/'data'/'recipes'/'filing.yaml').read_text())
    fmt = next(s for s in recipe['stages'] if s['stage'] == 'format')
    sft = next(s for s in recipe['stages'] if s['stage'] == 'sft')
    recs = [r for _, r, _ in iter_jsonl(repo_dir()/'data'/'filing'/'feedback.jsonl', recipe['agent']) if r is not None]
    dd = split_by_prompt(to_dataset(to_sft(recs, fmt.get('min_utility', 0.75))), fmt['eval_frac'], recipe.get('seed', 0),
                         confirm_frac=fmt['confirm_frac'])   # the confirmation documents are never touched here
    n, m = (8, 4) if smoke else (N_TRAIN, N_EVAL)
    return dd['train'].select(range(min(n, len(dd['train'])))), dd['eval'].select(range(min(m, len(dd['eval'])))), recipe, sft

def main(smoke:bool=False, results:Path|None=None):
    import torch
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line, isa_caps
    from rlnb.sft import SFTConfig, train_sft
    train, dev, recipe, sft = filing_examples(smoke)
    kw = dict(system=recipe['system'], epochs=1, learning_rate=sft['learning_rate'], batch_size=sft['batch_size'],
              save_steps=10**9, logging_steps=1, **({'model': 'tiny'} if smoke else {}))
    with tempfile.TemporaryDirectory() as d:   # a warm-up step, not timed: the first row pays no one-off costs
        train_sft(train, None, SFTConfig.make('cpu', **{**kw, 'max_steps': 1}), d, resume=False)
    rows = []
    for name, packing in (('no packing', False), ('packing', True), ('no packing again', False)):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            r = train_sft(train, dev, SFTConfig.make('cpu', packing=packing, **kw), d, resume=False)
            m = r.metrics
            tokens = sum(sum(l != -100 for l in ls) for ls in r.trainer.train_dataset['labels'])
            loss = [h['loss'] for h in r.history if 'loss' in h]
            rows.append(dict(variant=name, packing=packing, steps=m['steps'], rows=len(r.trainer.train_dataset),
                             train_seconds=round(m['train_seconds'], 2), examples_per_s=round(len(train) / m['train_seconds'], 3),
                             answer_tokens_per_s=round(float(tokens) / m['train_seconds'], 1),
                             last_train_loss=round(loss[-1], 4) if loss else None,
                             dev_loss_before=m.get('before_loss'), dev_loss_after=m.get('after_loss'),
                             wall_seconds=round(time.perf_counter() - t0, 1)))
            print(rows[-1], flush=True)
    base = (rows[0]['train_seconds'] + rows[-1]['train_seconds']) / 2
    for r in rows: r['speedup'] = round(base / r['train_seconds'], 2)   # against the mean of the two unpacked rows
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), date=time.strftime('%Y-%m-%d'), model='tiny' if smoke else 'smollm2',
               train_examples=len(train), dev_examples=len(dev), threads=torch.get_num_threads(),
               settings={k: v for k, v in kw.items() if k != 'system'}, rows=rows)
    path = (results or bench_results())/'sft_packing.json'
    path.write_text(json.dumps(out, indent=1) + '\n'); print('wrote', path)
    return out

if __name__ == '__main__':
    if '--smoke' in sys.argv:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        main(smoke=True, results=smoke_home()/'results')
    else: main()
