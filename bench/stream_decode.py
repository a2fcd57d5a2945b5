"""Rows join as rows leave: `generate_answers` and `answer_pool` with `stream=True` (`decode_stream`) against one pass
after another (`stream=False`, `decode` per pass), in one run on this CPU, on the shapes `make demo` decodes.

    .venv/bin/python bench/stream_decode.py            # writes bench/results/stream_decode.json (~9 min on 2 cores)
    .venv/bin/python bench/stream_decode.py --smoke    # tiny policy, few prompts and tokens; JSON to a temp folder

SmolLM2-135M-Instruct (the base: what the evaluation's base and control arms sample, and on-policy DPO's first round)
in the demo's sampled mode: the deployment's system message, temperature 0.7, top-p 0.9, repetition penalty 1.1,
batches of 64, two at once (128 rows), fp32 (the CPU's fallback without native bf16; the plan is recorded).
- `evaluate`: the held-out test set's shape: 153 prompts, 2 answers each (306 rows), 128 new tokens;
- `on-policy pool`: a round of on-policy DPO: 128 prompts, 4 draws (`answer_pool`), 96 new tokens.
Each pair of rows must give the same answers (counted: equal up to rounding, which can tip a draw only at a near-tie);
the time is the whole call, the two orders alternated so neither always runs first."""
import json, sys, time
from pathlib import Path

SYSTEM = "You are a friendly person in a casual text chat. Reply in one to three short sentences."
SHAPES = {'evaluate': dict(prompts=153, answers=2, draws=1, new=128), 'on-policy pool': dict(prompts=128, answers=1, draws=4, new=96)}
BATCH, AT_ONCE = 64, 2

def main(save='stream_decode.json', smoke=False, results=None):
    import torch
    from rlnb.core import cpu_line, load_policy, tiny_policy, bench_results
    from rlnb.prompts import heldout_prompts
    from rlnb.policy import generate_answers, answer_pool
    print(cpu_line(), f'| torch threads {torch.get_num_threads()}', flush=True)
    model, tok = tiny_policy(init_range=0.4) if smoke else load_policy()
    model.eval()
    kw = dict(do_sample=True, temperature=0.7, top_p=0.9, system=SYSTEM, repetition_penalty=1.1, batch_size=BATCH,
              batches_at_once=AT_ONCE)
    generate_answers(model, tok, heldout_prompts(None, 2), max_new_tokens=4, **kw)   # warm-up
    rows = []
    for name, sh in SHAPES.items():
        ps = heldout_prompts(None, sh['prompts'])
        ps = [p for p in ps for _ in range(sh['answers'])]
        def run(stream):
            t = time.perf_counter()
            if sh['draws'] > 1:
                pool = answer_pool(model, tok, ps, sh['draws'], seed=7919, progress=False, stream=stream,
                                   max_new_tokens=sh['new'], **kw)
                texts, toks, plan = [x for a in pool for x in a.texts], sum(sum(a.n_tokens) for a in pool), pool[0].plan
            else:
                a = generate_answers(model, tok, ps, max_new_tokens=sh['new'], seed=1_000_000_007, stream=stream, **kw)
                texts, toks, plan = a.texts, sum(a.n_tokens), a.plan
            return time.perf_counter() - t, texts, toks, plan
        order = (False, True) if len(rows) % 4 == 0 else (True, False)
        got = {s: run(s) for s in order}
        (t0, x0, n0, p0), (t1, x1, n1, p1) = got[False], got[True]
        same = sum(a == b for a, b in zip(x0, x1))
        for s, (t, x, n, p) in ((False, got[False]), (True, got[True])):
            rows.append(dict(shape=name, stream=s, seconds=round(t, 2), answers=len(x), new_tokens=n,
                             identical_answers=same, plan={k: p[k] for k in ('batch_size', 'batches_at_once', 'bf16', 'streamed')}))
        print(f"{name:16s} one pass after another {t0:7.1f} s | rows join as rows leave {t1:7.1f} s "
              f"({t0 / t1:.2f}x) | identical answers {same}/{len(x0)}", flush=True)
        assert p1['streamed'] and not p0['streamed'], (p0, p1)
        assert same >= 0.95 * len(x0), f"{name}: {len(x0) - same} of {len(x0)} answers differ"
    out = dict(cpu=cpu_line(), date=time.strftime('%Y-%m-%d'), model='tiny' if smoke else 'smollm2',
               threads=torch.get_num_threads(), rows=rows,
               speedup={n: round(next(r['seconds'] for r in rows if r['shape'] == n and not r['stream'])
                                 / next(r['seconds'] for r in rows if r['shape'] == n and r['stream']), 2) for n in SHAPES})
    path = (results or bench_results())/save
    path.write_text(json.dumps(out, indent=1) + '\n'); print('wrote', path)

if __name__ == '__main__':
    args = sys.argv[1:]
    if '--smoke' in args:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        results = smoke_home()/'results'; BATCH = 2
        SHAPES = {'evaluate': dict(prompts=5, answers=2, draws=1, new=6), 'on-policy pool': dict(prompts=4, answers=1, draws=3, new=6)}
    else: results = None
    main(smoke='--smoke' in args, results=results)
