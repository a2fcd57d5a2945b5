"""bf16 sampling against fp32, side by side in one run on this CPU, at the evaluate stage's settings.

    .venv/bin/python bench/bf16_sampling.py            # writes bench/results/bf16_sampling.json
    .venv/bin/python bench/bf16_sampling.py --smoke    # tiny policy, 4 prompts, 6 tokens; JSON to a temp folder

The evaluate stage's sampled answers (the deployment's system message, temperature 0.7, top-p 0.9, repetition penalty
1.1, 128 new tokens, two batches of 64 decoded together) to 128 held-out prompts, from SmolLM2-135M-Instruct with a
LoRA r16 adapter moved off zero, merged as the stage answers (`plain_pair`). Rows, run in this order:
- `fp32`: the default;
- `bf16 sampling`: `generate(bf16=True)`: the layers under bf16 autocast, the LM head in fp32 (`bf16_sampling`),
  the evaluate stage's way (its models' fp32 weights serve the KL pass too);
- `bf16 sampling, weights rounded once`: the same on a copy whose linear weights are bf16 already (`bf16_weights`), the
  on-policy rounds' way (their sampling copy is thrown away after): the same logits, no rounding at every call;
- `bf16 autocast`: plain `torch.autocast`, the LM head in bf16 too;
- `fp32 again`: the first row once more, so the file shows how far this machine's speed drifted within the run.
Each row: seconds to answer (decoding only: no KL pass), answers identical to fp32's, the answers' mean length, and how
far its next-token distribution lies from fp32's: KL(fp32 ‖ row) per answer position, teacher-forced on fp32's first
`TF` answers (mean, 99th percentile, max). bf16 answers are another sample, not fp32's: a recipe that turns it on has
its verdicts measured again."""
import json, sys, time
from pathlib import Path

N_PROMPTS, NEW, BATCH, AT_ONCE, TF = 128, 128, 64, 2, 16
SYSTEM = "You are a friendly person in a casual text chat. Reply in one to three short sentences."

def adapter_policy(smoke:bool):
    "The base and a LoRA r16 adapter on it moved off zero (so that policy and base differ), and the tokenizer."
    import torch
    from peft import LoraConfig, get_peft_model
    from rlnb.assets import load_policy, tiny_policy
    model, tok = tiny_policy(init_range=0.4) if smoke else load_policy()
    torch.manual_seed(0)
    policy = get_peft_model(model, LoraConfig(task_type='CAUSAL_LM', r=16, lora_alpha=32, target_modules='all-linear'))
    with torch.no_grad():
        for n, p in policy.named_parameters():
            if 'lora_B' in n: p.normal_(0, 0.002)
    return policy.eval(), tok

def position_logprobs(model, tok, prompts, answers, how):
    "Each answer's next-token log-softmax at temperature 0.7 (positions × vocabulary), teacher-forced, under `how`."
    import torch
    from rlnb.core import render_chat
    out = []
    for p, a in zip(prompts, answers):
        head = tok(render_chat(tok, p, system=SYSTEM), add_special_tokens=False)['input_ids']
        ids = torch.tensor([head + tok(a, add_special_tokens=False)['input_ids']])
        with torch.no_grad(), how(model):
            out.append((model(ids).logits[0, len(head) - 1:-1].float() / 0.7).log_softmax(-1))
    return out

def kl_rows(p_list, q_list) -> dict:
    "KL(p ‖ q) per position over all answers: mean, 99th percentile, max."
    import torch
    kl = torch.cat([(p.exp() * (p - q)).sum(-1) for p, q in zip(p_list, q_list)])
    return {'mean': float(kl.mean()), 'p99': float(kl.quantile(0.99)), 'max': float(kl.max()), 'positions': len(kl)}

def main(smoke=False, results=None):
    import contextlib, torch
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line, isa_caps
    from rlnb.prompts import heldout_prompts
    import copy
    from rlnb.policy import generate
    from rlnb.decoding import bf16_sampling, bf16_weights
    from rlnb.checkpoints import plain_pair
    print(cpu_line(), f'| torch threads {torch.get_num_threads()}', flush=True)
    policy, tok = adapter_policy(smoke)
    merged = plain_pair(policy)[0]
    rounded = bf16_weights(copy.deepcopy(merged))
    prompts = heldout_prompts(None, N_PROMPTS)
    fp32 = lambda m: contextlib.nullcontext()
    autocast = lambda m: torch.autocast('cpu', dtype=torch.bfloat16)
    variants = [('fp32', fp32, False, merged), ('bf16 sampling', bf16_sampling, True, merged),
                ('bf16 sampling, weights rounded once', bf16_sampling, True, rounded),
                ('bf16 autocast', autocast, False, merged), ('fp32 again', fp32, False, merged)]
    rows, ref = [], None
    for name, how, flag, m in variants:
        with how(m) if how is autocast else contextlib.nullcontext():
            generate(m, tok, prompts[:2], max_new_tokens=4, do_sample=True, system=SYSTEM, bf16=flag)   # warm-up, each variant its own
            t = time.perf_counter()
            a = generate(m, tok, prompts, max_new_tokens=NEW, do_sample=True, temperature=0.7, top_p=0.9, seed=0, batch_size=BATCH, system=SYSTEM,
                                 repetition_penalty=1.1, batches_at_once=AT_ONCE, bf16=flag)
            dt = time.perf_counter() - t
        ref = ref or a
        rows.append(dict(variant=name, seconds=round(dt, 2), identical_answers=sum(x == y for x, y in zip(a.texts, ref.texts)),
                         mean_tokens=round(sum(a.n_tokens) / len(a.n_tokens), 2), plan=a.plan))
        print(f"{name:36s} {dt:7.1f} s  identical to fp32 {rows[-1]['identical_answers']}/{len(a.texts)}  "
              f"mean tokens {rows[-1]['mean_tokens']}", flush=True)
    assert rows[-1]['identical_answers'] == len(prompts), "fp32 twice gave other answers"
    tf_p, tf_a = prompts[:TF], ref.texts[:TF]
    lp = position_logprobs(merged, tok, tf_p, tf_a, fp32)
    for r, (_, how, _, m) in zip(rows, variants):
        r['kl_from_fp32'] = kl_rows(lp, position_logprobs(m, tok, tf_p, tf_a, how))
        print(f"{r['variant']:36s} KL(fp32 ‖ row) per position: mean {r['kl_from_fp32']['mean']:.2e}  "
              f"p99 {r['kl_from_fp32']['p99']:.2e}  max {r['kl_from_fp32']['max']:.2e}", flush=True)
    assert rows[2]['kl_from_fp32'] == rows[1]['kl_from_fp32'], "weights rounded once gave other logits than autocast's"
    fp = (rows[0]['seconds'] + rows[-1]['seconds']) / 2
    for r in rows: r['speedup'] = round(fp / r['seconds'], 2)   # against the mean of the two fp32 rows
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), date=time.strftime('%Y-%m-%d'), model='tiny' if smoke else 'smollm2',
               prompts=len(prompts), new_tokens=NEW, batch=BATCH, batches_at_once=AT_ONCE, teacher_forced=len(tf_a),
               threads=torch.get_num_threads(), rows=rows)
    path = (results or bench_results())/'bf16_sampling.json'
    path.write_text(json.dumps(out, indent=1) + '\n'); print('wrote', path)
    return out

if __name__ == '__main__':
    if '--smoke' in sys.argv:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        N_PROMPTS, NEW, BATCH, TF = 4, 6, 2, 4
        main(smoke=True, results=smoke_home()/'results')
    else: main()
