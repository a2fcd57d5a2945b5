"""The evaluate stage's decoding memory, before and after `decode_plan`'s memory budget, in one run on this CPU.

    .venv/bin/python bench/eval_memory.py            # writes bench/results/eval_memory.json
    .venv/bin/python bench/eval_memory.py --smoke    # tiny policy, 6 prompts, 8 tokens; JSON to a temp folder

What the evaluate stage does for one policy's sampled answers (`generate` as `evaluate_policy` calls it: the
merged policy answers, a plain copy of the base is the KL's base, the deployment's system message, top-p 0.9,
temperature 0.7, repetition penalty 1.1, 128 new tokens, batches of 64 decoded two at a time): SmolLM2-135M-Instruct
with a LoRA adapter moved slightly off zero (`tiny_adapter`, scale 0.005) answering 128 chitchat prompts, with the
exact KL of each answer to the base. Each variant runs in its own process, so its peak RSS is its own:
- `keep log-probs` (`memory_budget_mb=None`, the library until this benchmark): the policy's log-softmax at every
  answer position is kept for the KL (rows x new tokens x vocabulary floats);
- `budget 1536 MiB` (the default): `decode_plan` finds the log-probs do not fit beside the KV cache, so the KL pass
  recomputes the policy's side; the same rows per pass.
Both must give the same answers (checked) and the same KL to 1e-3 nats (checked; bench/eval_gen_speed.py's tolerance:
the kept log-probs come from the cached step-by-step passes, the recomputed ones from one pass over each answer)."""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path

SYSTEM = "You are a friendly person in a casual text chat. Reply in one to three short sentences."
VARIANTS = {'keep log-probs': None, 'budget 1536 MiB': 1536}

def one(variant:str, out:str, smoke:bool=False):
    "Answer the prompts with one variant in this process; write texts, KL, seconds and peak RSS to `out`."
    import torch
    from rlnb.hardware import peak_rss_mb
    from rlnb.assets import chitchat_prompts, convert_policy, tiny_policy
    from rlnb.policy import generate
    from rlnb.checkpoints import load_policy_pair, plain_pair
    from rlnb.assets import tiny_adapter
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    tmp = Path(tempfile.mkdtemp(prefix='rlnb-evalmem-'))
    if smoke:
        m, tk = tiny_policy(); m.save_pretrained(tmp/'base'); tk.save_pretrained(tmp/'base'); base_dir = tmp/'base'
        n, new, batch, scale = 6, 8, 2, 0.3
    else: base_dir, n, new, batch, scale = convert_policy(), 128, 128, 64, 0.005
    prompts = (chitchat_prompts() * 8)[:n]
    pol, _, tok, _ = load_policy_pair(tiny_adapter(base_dir, tmp/'adapter', scale))
    model, base = plain_pair(pol); del pol
    t = time.perf_counter()
    a = generate(model, tok, prompts, max_new_tokens=new, do_sample=True, temperature=0.7, top_p=0.9, seed=0, batch_size=batch, base=base, system=SYSTEM,
                         repetition_penalty=1.1, batches_at_once=2, memory_budget_mb=VARIANTS[variant])
    Path(out).write_text(json.dumps({'variant': variant, 'seconds': round(time.perf_counter() - t, 2),
                                     'peak_rss_mb': round(peak_rss_mb()), 'plan': a.plan, 'texts': a.texts, 'kl': a.kl,
                                     'new_tokens': sum(a.n_tokens), 'prompts': n}))

def main(smoke:bool=False, save:str='eval_memory.json'):
    import numpy as np
    from rlnb.core import utc_now
    from rlnb.hardware import cpu_line
    from _smoke import smoke_home, save_result
    home = smoke_home() if smoke else None
    print(cpu_line(), flush=True)
    rows = []
    for v in VARIANTS:          # each in its own process: its own peak RSS
        with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f: out = f.name
        subprocess.run([sys.executable, __file__, '--one', v, out] + (['--smoke'] if smoke else []), check=True)
        rows.append(json.loads(Path(out).read_text())); os.unlink(out)
    a, b = rows
    if a['texts'] != b['texts']: raise AssertionError("the variants answered differently")
    diff = float(np.max(np.abs(np.subtract(a['kl'], b['kl']))))
    if diff > 1e-3: raise AssertionError(f"KL differs by {diff:.2e} nats")   # eval_gen_speed.py's tolerance
    res = {'cpu': cpu_line(), 'date': utc_now(), 'smoke': smoke, 'prompts': a['prompts'], 'same_answers': True,
           'kl_max_abs_diff': diff, 'kl_mean': round(float(np.mean(a['kl'])), 4),
           'rows': [{k: r[k] for k in ('variant', 'seconds', 'peak_rss_mb', 'plan', 'new_tokens')} for r in rows]}
    for r in res['rows']:
        print(f"{r['variant']:>16}: {r['seconds']:7.1f} s, peak RSS {r['peak_rss_mb']:,} MiB, plan {r['plan']}")
    save_result(res, save, home)
    return res

if __name__ == '__main__':
    sys.path.insert(0, str(Path(__file__).parent))
    if '--one' in sys.argv:
        i = sys.argv.index('--one'); one(sys.argv[i + 1], sys.argv[i + 2], smoke='--smoke' in sys.argv)
    else: main(smoke='--smoke' in sys.argv)
