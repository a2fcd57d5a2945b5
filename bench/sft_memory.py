"""SFT's peak memory and time on people's chitchat openers (the examples `make demo`'s data gives the `sft` stage), the
`cpu` preset as it is and with gradient checkpointing, side by side in one run on this CPU.

    .venv/bin/python bench/sft_memory.py            # writes bench/results/sft_memory.json (rendered in 05b_sft)
    .venv/bin/python bench/sft_memory.py --smoke    # tiny policy, one step a row; JSON to a temp folder

The examples: the format stage's `sft` examples of the bundled chitchat ratings (openers of conversations people rated
0.75 or more, `to_sft`), the training prompts of split seed 0, the recipe's system message in each. Their answers are
short but long-tailed (a few run to hundreds of tokens), and a batch is padded to its longest row (cut at the preset's
`max_length`), so one long answer sets a whole batch's size. Two cases:
- `longest`: the `N_LONG` longest examples, `STEPS_LONG` steps: the batch that sets the peak;
- `sample`: a seeded sample of `N_SAMPLE`, one epoch: the usual batches.
Each case runs under the `cpu` preset (`plain`) and with `gradient_checkpointing` (`checkpointed`: activations
recomputed in the backward pass instead of kept), each in its own process, so each peak RSS is that row's alone. Each
row: steps, train seconds, seconds a step, peak RSS, answer tokens, the logged train losses (the same examples in the
same order: checkpointing recomputes, it does not change the sums)."""
import json, subprocess, sys, tempfile, time
from pathlib import Path

N_LONG, STEPS_LONG, N_SAMPLE = 16, 2, 64
SYSTEM = 'You are a friendly person in a casual text chat. Reply in one to three short sentences.'   # make demo's
VARIANTS = {'plain': {}, 'checkpointed': {'gradient_checkpointing': True}}
ROW = 'sft_memory row: '   # how a row's process hands it back

def chitchat_sft(case:str, smoke:bool):
    "The examples of `case` (`longest` or `sample`) and the steps to train on them (None: one epoch)."
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import to_sft, to_dataset, split_by_prompt
    train = split_by_prompt(to_dataset(to_sft(chitchat_records()[0], 0.75)), 0.2, 0)['train']
    if case == 'longest':
        n = [len(c[0]['content']) for c in train['completion']]
        return train.select(sorted(range(len(train)), key=lambda i: -n[i])[:4 if smoke else N_LONG]), 1 if smoke else STEPS_LONG
    return train.shuffle(seed=0).select(range(4 if smoke else N_SAMPLE)), 1 if smoke else None

def one(case:str, variant:str, smoke:bool) -> dict:
    "One row, measured in this process (`main` runs each in its own)."
    from rlnb.hardware import peak_rss_mb
    from rlnb.sft import SFTConfig, train_sft
    ds, steps = chitchat_sft(case, smoke)
    cfg = SFTConfig.make('tiny' if smoke else 'cpu', system=SYSTEM, epochs=1, save_steps=10**9, logging_steps=1,
                         **VARIANTS[variant])
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        r = train_sft(ds, None, cfg, d, **({'max_steps': steps} if steps else {}), resume=False)
        m = r.metrics
        tokens = int(sum(sum(l != -100 for l in ls) for ls in r.trainer.train_dataset['labels']))
    return dict(case=case, variant=variant, examples=len(ds), steps=m['steps'], train_seconds=round(m['train_seconds'], 2),
                s_per_step=round(m['train_seconds'] / m['steps'], 2), peak_rss_mb=round(peak_rss_mb()),
                answer_tokens=tokens, losses=[round(h['loss'], 4) for h in r.history if 'loss' in h],
                wall_seconds=round(time.perf_counter() - t0, 1))

def main(smoke:bool=False, results:Path|None=None) -> dict:
    import torch
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line, isa_caps
    rows = []
    for case in ('longest', 'sample'):
        for variant in VARIANTS:
            p = subprocess.run([sys.executable, __file__, '--one', case, variant] + (['--smoke'] if smoke else []),
                               capture_output=True, text=True)
            line = next((l for l in p.stdout.splitlines() if l.startswith(ROW)), None)   # TRL prints dicts too
            if p.returncode or line is None: raise SystemExit(f"{case}/{variant} failed:\n{p.stderr[-3000:]}")
            rows.append(json.loads(line.removeprefix(ROW))); print(rows[-1], flush=True)
    for case in ('longest', 'sample'):   # checkpointed against plain, the same case
        a, b = (next(r for r in rows if r['case'] == case and r['variant'] == v) for v in VARIANTS)
        b['peak_ratio'], b['time_ratio'] = round(b['peak_rss_mb'] / a['peak_rss_mb'], 3), round(b['train_seconds'] / a['train_seconds'], 3)
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), date=time.strftime('%Y-%m-%d'), model='tiny' if smoke else 'smollm2',
               preset='tiny' if smoke else 'cpu', threads=torch.get_num_threads(), n_long=N_LONG, steps_long=STEPS_LONG,
               n_sample=N_SAMPLE, rows=rows)
    path = (results or bench_results())/'sft_memory.json'
    path.write_text(json.dumps(out, indent=1) + '\n'); print('wrote', path)
    return out

if __name__ == '__main__':
    a = sys.argv[1:]
    if '--one' in a:
        i = a.index('--one'); print(ROW + json.dumps(one(a[i + 1], a[i + 2], '--smoke' in a))); sys.exit()
    if '--smoke' in a:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        main(smoke=True, results=smoke_home()/'results')
    else: main()
