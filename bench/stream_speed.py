"""Continuous batching (`generate(refill=True)`) against the batch-by-batch engine, side by side in one run on this CPU.

    .venv/bin/python bench/stream_speed.py          # writes bench/results/stream_speed.json
    .venv/bin/python bench/stream_speed.py --smoke  # tiny policy, a handful of prompts and tokens; JSON to a temp folder

Two workloads of `make demo`, each decoded both ways by the library's own functions, SmolLM2-135M-Instruct in fp32
(bf16 where `auto_bf16` finds native bf16, as the demo does), the deployment's system message, top-p 0.9, temperature 0.7,
repetition penalty 1.1, 64 x 2 rows in flight:
- `evaluate`: 153 held-out prompts x K = 2 answers (the evaluate stage's sampled arm, 128 tokens);
- `on-policy round`: 4 draws over 64 prompts (one on-policy DPO round's sampling, 96 tokens).
`batch` is the engine until now (`generate`, with `k` for a pool: passes of at most 128 rows, each ending in its own
tail of nearly empty steps); `refill` is one continuous pass (`generate(refill=True)`, over the policy's private
`_decode_stream`). The two draw from different streams (the batch engine one per batch, `refill` one per answer), so
they are two samples of the same distribution: their mean answer length is shown beside the time, with the seconds per
generated token."""
import json, sys, time
from pathlib import Path

N_EVAL, K, N_ROUND, DRAWS, NEW_EVAL, NEW_ROUND, BATCH, AT_ONCE = 153, 2, 64, 4, 128, 96, 64, 2
SYSTEM = "You are a friendly person in a casual text chat. Reply in one to three short sentences."

def main(save='stream_speed.json', smoke=False, results=None):
    import torch
    from rlnb.core import bench_results
    from rlnb.hardware import auto_bf16, cpu_line, isa_caps
    from rlnb.assets import load_policy, tiny_policy
    from rlnb.prompts import heldout_prompts
    from rlnb.policy import generate
    print(cpu_line(), f'| torch threads {torch.get_num_threads()}', flush=True)
    model, tok = tiny_policy(init_range=0.4) if smoke else load_policy()
    model.eval()
    prompts = heldout_prompts(None, max(N_EVAL, N_ROUND))
    kw = dict(temperature=0.7, top_p=0.9, repetition_penalty=1.1, system=SYSTEM, batch_size=BATCH,
              batches_at_once=AT_ONCE, bf16=None)
    work = {'evaluate': lambda refill: [generate(
                model, tok, [p for p in prompts[:N_EVAL] for _ in range(K)], refill=refill, max_new_tokens=NEW_EVAL, do_sample=True,
                seed=0, **kw)],
            'on-policy round': lambda refill: generate(
                model, tok, prompts[:N_ROUND], k=DRAWS, refill=refill, seed=0, progress=False, max_new_tokens=NEW_ROUND, **kw)}
    generate(model, tok, prompts[:2], max_new_tokens=4, do_sample=True, **kw)   # warm-up
    rows = []
    for name, run in work.items():
        for refill in (False, True):
            t = time.perf_counter(); a = run(refill); dt = time.perf_counter() - t
            n = sum(sum(x.n_tokens) for x in a); m = sum(len(x.n_tokens) for x in a)
            rows.append(dict(workload=name, engine='refill' if refill else 'batch', seconds=round(dt, 2), answers=m,
                             tokens=n, mean_tokens=round(n / m, 2), ms_per_token=round(1000 * dt / max(n, 1), 2),
                             ended=round(sum(sum(x.has_eos) for x in a) / m, 4),
                             admissions=a[0].plan.get('admissions')))
            print(f"{name:16s} {rows[-1]['engine']:6s} {dt:7.1f} s  {m} answers  mean tokens {n / m:.1f}  "
                  f"{1000 * dt / max(n, 1):.1f} ms/token", flush=True)
        b, r = rows[-2], rows[-1]
        r['speedup'] = round(b['seconds'] / r['seconds'], 2); r['speedup_per_token'] = round(b['ms_per_token'] / r['ms_per_token'], 2)
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), date=time.strftime('%Y-%m-%d'), model='smollm2' if not smoke else 'tiny',
               bf16=auto_bf16('cpu'), threads=torch.get_num_threads(), rows_in_flight=BATCH * AT_ONCE, rows=rows)
    path = (results or bench_results())/save
    path.write_text(json.dumps(out, indent=1) + '\n'); print('wrote', path)

if __name__ == '__main__':
    args = sys.argv[1:]
    save = args[args.index('--save') + 1] if '--save' in args else 'stream_speed.json'
    if '--smoke' in args:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        results = smoke_home()/'results'; N_EVAL, N_ROUND, NEW_EVAL, NEW_ROUND, BATCH = 5, 3, 6, 5, 2
    else: results = None
    main(save, smoke='--smoke' in args, results=results)
