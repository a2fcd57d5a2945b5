"""The evaluation's sampled answers and their KL, before and after each speed lever, in one run on this CPU.

    .venv/bin/python bench/eval_gen_speed.py                     # writes bench/results/eval_gen_speed.json
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \\
        .venv/bin/python bench/eval_gen_speed.py --save eval_gen_speed_avx2.json   # held to AVX2 (caps recorded)
    .venv/bin/python bench/eval_gen_speed.py --smoke             # tiny policy, 4 prompts, 6 tokens; JSON to a temp folder

What `evaluate_policy` does for one policy in the demo's sampled mode (the deployment's system message, top-p 0.9,
temperature 0.7, repetition penalty 1.1, 128 new tokens, batches of 16): SmolLM2-135M-Instruct with a LoRA r16 adapter
moved off zero, answering held-out chitchat prompts, and the exact KL of each answer to the base. Rows, each lever
added to the one before:
- `before`: the adapter model answers (adapter layers in every step), the nucleus by a sort of the whole vocabulary,
  KL from two fresh passes (policy and base) over the answers;
- `+ nucleus in top 256`: `_nucleus` finds the same top-p set among the top 256 tokens;
- `+ log-probs kept`: `policy._decode(logprobs=True)`: the KL's policy side comes from sampling, only the base runs again;
- `+ merged adapter`: `plain_pair`: a merged copy answers, a plain copy of the base is the KL's base;
- `+ draw in the nucleus`: `next_token` draws among the nucleus' own tokens, not over the whole vocabulary with the
  rest zeroed (the rows before draw as `dense_next_token` below, the library's draw until then). The same
  distribution, but the random numbers fall differently: from this row on the answers are another sample, checked
  identical to this row's, and its mean KL and length are shown beside the earlier rows';
- `+ shared prefix once`: `policy._decode(share_prefix=True)`: the prompts' common beginning (the system turn) passes the
  model once and its cache serves every row, in the answers and in the KL's base pass (`path_kl(n_shared=...)`);
- `+ two batches at once`: `generate(batches_at_once=2)` (the evaluate stage's setting): two batches decoded together, each
  sampled from its own stream seeded as that batch alone would be, so each step reads the weights once for both;
- `+ prompts by length`: `policy._decode(prefill_rows=16)`: the rest of each prompt passes in groups of similar length, each cut
  to its own longest, instead of the whole batch padded to its longest prompt; and `path_kl` passes each answer as its
  own prompt and answer, without the batch's padding (the rows before pass `prefill_rows=None` and use
  `padded_path_kl` below, the library's KL pass until then);
- `+ penalty on seen tokens`: `penalize_repeats` computes the repetition penalty on each answer's own tokens only (the rows
  before use `dense_penalize` below: a (B, V) mask through `torch.where`, three passes over the vocabulary per step;
  it builds the mask afresh at each step, one (B, V) fill more than the library's old mask kept across steps, so this
  row's gain is an upper bound);
- `+ KV cache with room`: `policy._decode`'s cache writes each new position into room kept after it (`with_room`), where
  `torch.cat` copied every layer's whole cache at every token (the rows before: `no_room` below).
Rows from `+ two batches at once` on run the library's `generate`, which also hands the freed KV cache back to
the system after each decoding and KL pass (`release_memory(collect=False)`); the rows before run the loop below.
Every row must give the same answers as the first row that draws the same way (checked) and the same KL to 1e-3 nats
(checked); the time is the whole of it."""
import json, os, sys, time
from pathlib import Path

N_PROMPTS, NEW, BATCH, SYSTEM = 48, 128, 16, "You are a friendly person in a casual text chat. Reply in one to three short sentences."
MODEL = 'smollm2'

def answers(model, base, tok, prompts, keep_logprobs:bool, at_once:int=1, prefix:bool=False, by_length:bool=False):
    ("The batch engine's loop (`generate`) with the KL and shared-prefix levers as switches (the library always keeps the log-probs "
     "and shares the prefix); `at_once`: the library's own loop.")
    import functools, torch
    import rlnb.policy as P
    from rlnb.policy import generate
    from rlnb.decoding import path_kl
    if at_once > 1:   # the library's loop, several batches decoded together (seeded as the loop below seeds them)
        D, K = P._decode, P.path_kl
        if not by_length: P._decode, P.path_kl = functools.partial(D, prefill_rows=None), padded_path_kl
        try: a = generate(model, tok, prompts, max_new_tokens=NEW, do_sample=True, temperature=0.7, top_p=0.9, seed=0, batch_size=BATCH, base=base,
                                  system=SYSTEM, repetition_penalty=1.1, batches_at_once=at_once)
        finally: P._decode, P.path_kl = D, K
        return a.texts, a.kl
    texts, kls = [], []
    for i in range(0, len(prompts), BATCH):
        torch.manual_seed(i)
        s = P._decode(model, tok, prompts[i:i + BATCH], NEW, True, 0.7, 0.9, SYSTEM, repetition_penalty=1.1,
                   logprobs=keep_logprobs, share_prefix=prefix, prefill_rows=16 if by_length else None)
        texts += [t.strip() for t in s['responses']]
        kls += (path_kl if by_length else padded_path_kl)(model, s['ids'], s['attn'], s['n_prompt'], s['mask'], 0.7, base=base, logprobs=s.get('logprobs'),
                       n_shared=s['n_shared'])
    return texts, kls

def padded_path_kl(model, ids, attn, n_prompt, mask, temperature=1.0, base=None, rows=8, logprobs=None, n_shared=0):
    "`path_kl` before `+ prompts by length`: rows grouped by answer length, each with the batch's whole prompt padding."
    import torch
    from rlnb.decoding import prefix_kv, kv_rows
    def lsm(m, x, a):
        kv, pos = prefix_kv(m, x, a, n_shared), (a.long().cumsum(-1) - 1).clamp(min=0)
        o = m(input_ids=x[:, n_shared:], attention_mask=a, position_ids=pos[:, n_shared:], past_key_values=kv_rows(kv, len(x)),
              use_cache=kv is not None, logits_to_keep=x.shape[1] - n_prompt + 1)
        return (o.logits[:, :-1].float() / temperature).log_softmax(-1)
    lengths = mask.sum(-1).long()
    order, out = lengths.argsort().tolist(), [0.0] * len(ids)
    with torch.no_grad():
        for i in range(0, len(order), rows):
            idx = order[i:i + rows]
            L = max(int(lengths[idx].max()), 1)
            x, a, mk = ids[idx, :n_prompt + L], attn[idx, :n_prompt + L], mask[idx, :L]
            lp = logprobs[idx, :L] if logprobs is not None else lsm(model, x, a)
            if base is not None: lq = lsm(base, x, a)
            else:
                with model.disable_adapter(): lq = lsm(model, x, a)
            for j, v in zip(idx, ((lp.exp() * (lp - lq)).sum(-1).clamp(min=0) * mk).sum(-1).tolist()): out[j] = v
    return out

def dense_penalize(logits, seen, penalty):
    "The repetition penalty before `+ penalty on seen tokens`: a (B, V) mask of each answer's tokens through `torch.where`."
    import torch
    if seen is None or not seen.shape[-1] or penalty == 1.0: return logits
    mask = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device).scatter_(-1, seen, True)
    return torch.where(mask, torch.where(logits > 0, logits / penalty, logits * penalty), logits)

def no_room(cache, step=16):
    "The KV cache before `+ KV cache with room`: transformers' `DynamicLayer`, grown by `torch.cat` at every token."
    return cache

def dense_next_token(logits, do_sample, temperature, top_p, seen=None, penalty=1.0, groups=None):
    "The draw before `+ draw in the nucleus`: a multinomial over the whole vocabulary, the nucleus scattered back."
    import torch
    import rlnb.decoding as E
    logits = E.penalize_repeats(logits, seen, penalty)
    if not do_sample: return logits.argmax(-1)
    probs = (logits / temperature).softmax(-1)
    if top_p < 1: probs = E._nucleus(probs, top_p)
    if groups is None: return torch.multinomial(probs, 1)[:, 0]
    out = torch.empty(len(probs), dtype=torch.long, device=probs.device)
    for rows, g in groups: out[rows] = torch.multinomial(probs[rows], 1, generator=g)[:, 0]
    return out

def main(save='eval_gen_speed.json', smoke=False, results=None):
    import torch
    from peft import LoraConfig, get_peft_model
    import rlnb.decoding as E, rlnb.policy as P
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line, isa_caps
    from rlnb.assets import load_policy, tiny_policy
    from rlnb.prompts import heldout_prompts
    from rlnb.checkpoints import plain_pair
    print(cpu_line(), f'| torch threads {torch.get_num_threads()}', flush=True)
    model, tok = tiny_policy(init_range=0.4) if smoke else load_policy()
    torch.manual_seed(0)
    policy = get_peft_model(model, LoraConfig(task_type='CAUSAL_LM', r=16, lora_alpha=32, target_modules='all-linear')).eval()
    with torch.no_grad():                       # an adapter moved off zero, so policy and base answers differ
        for n, p in policy.named_parameters():
            if 'lora_B' in n: p.normal_(0, 0.002)
    prompts = heldout_prompts(None, N_PROMPTS)
    merged, plain = plain_pair(policy)
    dense = dict(draw=dense_next_token)
    levers = [('before', dict(k=10**9, keep=False, m=policy, b=None, **dense)),
              ('+ nucleus in top 256', dict(k=E._NUCLEUS_K, keep=False, m=policy, b=None, **dense)),
              ('+ log-probs kept', dict(k=E._NUCLEUS_K, keep=True, m=policy, b=None, **dense)),
              ('+ merged adapter', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain, **dense)),
              ('+ draw in the nucleus', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain)),
              ('+ shared prefix once', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain, prefix=True)),
              ('+ two batches at once', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain, at_once=2)),
              ('+ prompts by length', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain, at_once=2, by_length=True)),
              ('+ penalty on seen tokens', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain, at_once=2, by_length=True,
                                                pen=E.penalize_repeats)),
              ('+ KV cache with room', dict(k=E._NUCLEUS_K, keep=True, m=merged, b=plain, at_once=2, by_length=True,
                                            pen=E.penalize_repeats, room=P.with_room))]
    k0, draw0, pen0, room0, rows, refs = E._NUCLEUS_K, P.next_token, E.penalize_repeats, P.with_room, [], {}
    answers(merged, plain, tok, prompts[:2], True)   # warm-up
    for name, v in levers:
        E._NUCLEUS_K, P.next_token = v['k'], v.get('draw', draw0)
        E.penalize_repeats, P.with_room = v.get('pen', dense_penalize), v.get('room', no_room)
        try:
            t = time.perf_counter(); texts, kls = answers(v['m'], v['b'], tok, prompts, v['keep'], v.get('at_once', 1), v.get('prefix', False),
                                 v.get('by_length', False)); dt = time.perf_counter() - t
        finally: E._NUCLEUS_K, P.next_token, E.penalize_repeats, P.with_room = k0, draw0, pen0, room0
        ref = refs.setdefault('draw' in v, (texts, kls))   # the first row that draws the same way
        same = sum(a == b for a, b in zip(texts, ref[0]))
        dkl = max(abs(a - b) for a, b in zip(kls, ref[1]))
        rows.append(dict(lever=name, seconds=round(dt, 2), identical_answers=same, max_kl_diff=round(dkl, 6),
                         mean_kl=round(sum(kls) / len(kls), 4),
                         mean_words=round(sum(len(x.split()) for x in texts) / len(texts), 2)))
        print(f"{name:24s} {dt:7.1f} s  identical answers {same}/{len(texts)}  max |ΔKL| {dkl:.2e}  "
              f"mean KL {rows[-1]['mean_kl']}  mean words {rows[-1]['mean_words']}", flush=True)
        assert same == len(texts), f"{name}: {len(texts) - same} answers differ from the first row's"
        assert dkl < 1e-3, f"{name}: KL differs by {dkl}"
    for r in rows: r['speedup'] = round(rows[0]['seconds'] / r['seconds'], 2)
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), date=time.strftime('%Y-%m-%d'), model=MODEL if not smoke else 'tiny',
               prompts=len(prompts), new_tokens=NEW, batch=BATCH, threads=torch.get_num_threads(), rows=rows)
    path = (results or bench_results())/save
    path.write_text(json.dumps(out, indent=1) + '\n'); print('wrote', path)

if __name__ == '__main__':
    args = sys.argv[1:]
    save = args[args.index('--save') + 1] if '--save' in args else 'eval_gen_speed.json'
    if '--smoke' in args:
        sys.path.insert(0, str(Path(__file__).parent)); from _smoke import smoke_home
        results = smoke_home()/'results'; N_PROMPTS, NEW, BATCH = 4, 6, 2
    else: results = None
    main(save, smoke='--smoke' in args, results=results)
