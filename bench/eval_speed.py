"""Evaluation speed on this CPU: SmolLM2-135M + a LoRA adapter against its base on 64 held-out prompts, 48 new tokens,
greedy and sampled (sampled also computes KL), for several generation batch sizes.
    .venv/bin/python bench/eval_speed.py                  # prints the CPU, a table, and writes bench/results/eval_speed.json
    .venv/bin/python bench/eval_speed.py 8,16             # these generation batch sizes
    .venv/bin/python bench/eval_speed.py --smoke          # batch 2, 2 prompts, 4 new tokens; the JSON to a temp folder
Goal (issue: evaluation): 64 prompts x 2 models x 48 new tokens in <= 2 minutes on 2 cores."""
import json, sys, time
from pathlib import Path

def main(batch_sizes=(8, 16, 32), n_prompts=64, max_new_tokens=48, results=Path(__file__).parent/'results'):
    import torch
    from peft import LoraConfig, get_peft_model
    from rlnb.hardware import cpu_line, peak_rss_mb
    from rlnb.assets import load_policy
    from rlnb.evaluation import evaluate_policy
    from rlnb.prompts import heldout_prompts
    print(cpu_line(), f'| torch threads {torch.get_num_threads()}', flush=True)
    model, tok = load_policy()
    torch.manual_seed(0)
    policy = get_peft_model(model, LoraConfig(task_type='CAUSAL_LM', r=16, lora_alpha=32, target_modules='all-linear'))
    with torch.no_grad():                       # a non-trivial adapter, so policy and base answers differ
        for n, p in policy.named_parameters():
            if 'lora_B' in n: p.normal_(0, 0.002)
    prompts = heldout_prompts(None, n_prompts)
    class Words:                                # a judge that costs nothing: this measures generation + KL
        name = 'words'
        def score(self, ps, answers): return [float(len(a.split())) for a in answers]
    rows = []
    for bs in batch_sizes:
        t = time.perf_counter()
        rep = evaluate_policy(policy, prompts, {'words': Words()}, tok=tok, max_new_tokens=max_new_tokens, batch_size=bs,
                             modes=['greedy', 'sampled'])
        total = time.perf_counter() - t
        row = {'batch_size': bs, 'total_s': round(total, 1), **{f'{m}_generate_s': v['generate_s'] for m, v in rep.meta['timings'].items()},
               'new_tokens': sum(sum(rep.modes[m]['tokens'][k]) for m in rep.modes for k in ('policy', 'base')), 'peak_rss_mb': round(peak_rss_mb())}
        row['prompts_per_s_per_mode'] = {m: round(n_prompts / v['generate_s'], 2) for m, v in rep.meta['timings'].items()}
        row['tokens_per_s'] = round(row['new_tokens'] / total, 1)
        rows.append(row); print(json.dumps(row), flush=True)
    out = Path(results)/'eval_speed.json'
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({'cpu': cpu_line(), 'n_prompts': n_prompts, 'max_new_tokens': max_new_tokens, 'rows': rows}, indent=1))
    print(f"\n{'batch':>5s} {'greedy s':>9s} {'sampled s (+KL)':>16s} {'total s':>8s} {'tokens/s':>9s} {'peak MiB':>8s}")
    for r in rows: print(f"{r['batch_size']:5d} {r['greedy_generate_s']:9.1f} {r['sampled_generate_s']:16.1f} {r['total_s']:8.1f} {r['tokens_per_s']:9.1f} {r['peak_rss_mb']:8d}")

if __name__ == '__main__':
    if sys.argv[1:] == ['--smoke']:
        from _smoke import smoke_home
        main((2,), n_prompts=2, max_new_tokens=4, results=smoke_home()/'results')
    else: main(*[tuple(int(x) for x in a.split(',')) for a in sys.argv[1:2]])
