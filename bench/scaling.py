"""How cost grows with the model, on this CPU: DPO (TRL's speed defaults against rlnb's `cpu` and `cpu_bf16` presets,
`bench/dpo_speed.py`'s variants) and the evaluation's sampling (rlnb's engine, `generate`, against
transformers' `generate`, what TRL samples with) at the shapes of SmolLM2-135M, -360M and -1.7B: weights drawn at
random from each shape (the real tokenizer), seconds per step, tokens per second, peak memory; and one DPO step at 1
and 2 threads, the serial share an Amdahl fit of the two gives, and the 16-thread time it projects.
    .venv/bin/python bench/scaling.py                     # every size; writes bench/results/scaling.json
    .venv/bin/python bench/scaling.py --sizes 135M,360M   # some sizes (the file then holds only those)
    .venv/bin/python bench/scaling.py --smoke             # the tiny shape, 2 steps; the JSON to a temporary folder
Each measurement runs in its own process, one after another, so peak memory is that measurement's alone."""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path

SHAPES = {  # SmolLM2's published configurations (vocabulary 49,152, tied embeddings)
    '135M': dict(hidden_size=576, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536),
    '360M': dict(hidden_size=960, num_hidden_layers=32, num_attention_heads=15, num_key_value_heads=5, intermediate_size=2560),
    '1.7B': dict(hidden_size=2048, num_hidden_layers=24, num_attention_heads=32, num_key_value_heads=32,
                 intermediate_size=8192),
    'tiny': dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128),
}
DPO_VARIANTS, STEPS, PROMPTS, NEW = ('trl_defaults', 'cpu', 'cpu_bf16'), 4, 16, 32
SMOKE_VARIANTS = ('trl_defaults', 'cpu')   # --smoke: the anchor and one preset
HERE = Path(__file__).parent

def shape_folder(size:str, root:Path) -> Path:
    "A model folder of `size`'s shape with random weights (seed 0, stored in bf16) and the real tokenizer, made once."
    d = root/f'smollm2-shape-{size}'
    if (d/'config.json').exists(): return d
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from rlnb.assets import policy_tokenizer
    tok = policy_tokenizer()
    cfg = LlamaConfig(vocab_size=len(tok), max_position_embeddings=8192, tie_word_embeddings=True, rms_norm_eps=1e-5,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      **SHAPES[size])
    torch.manual_seed(0)
    m = LlamaForCausalLM(cfg).to(torch.bfloat16)
    tmp = d.with_name(d.name + '.part'); m.save_pretrained(tmp); tok.save_pretrained(tmp); tmp.rename(d)
    return d

def generation(engine:str, folder:str):
    "Child: sample `PROMPTS` answers of `NEW` tokens with one engine; prints one JSON line."
    import torch
    from rlnb.hardware import peak_rss_mb
    from rlnb.assets import load_policy
    from rlnb.prompts import heldout_prompts
    model, tok = load_policy(folder)
    prompts = heldout_prompts(None, PROMPTS)
    torch.manual_seed(0); t = time.perf_counter()
    if engine == 'rlnb':
        from rlnb.policy import generate
        a = generate(model, tok, prompts, max_new_tokens=NEW, do_sample=True, temperature=0.7, top_p=0.9,
                             batch_size=PROMPTS, progress=None, bf16=None)   # the evaluate stage's sampling and precision rule
        tokens, precision = sum(a.n_tokens), 'bf16' if a.plan.get('bf16') else 'fp32'
    else:
        from rlnb.core import render_chat   # transformers' generate, as PPO samples
        from rlnb.decoding import decode_result
        tok.padding_side = 'left'
        enc = tok([render_chat(tok, p) for p in prompts], return_tensors='pt', padding=True, add_special_tokens=False)
        with torch.no_grad():
            g = model.generate(**enc, do_sample=True, temperature=0.7, top_p=0.9, top_k=0, max_new_tokens=NEW,
                               pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
        r = decode_result(tok, enc['input_ids'], enc['attention_mask'], g[:, enc['input_ids'].shape[1]:], 0)
        tokens, precision = int(r['mask'].sum()), 'fp32'
    s = time.perf_counter() - t
    print(json.dumps(dict(engine=engine, seconds=round(s, 2), tokens=tokens, tokens_per_s=round(tokens / s, 1),
                          precision=precision, peak_rss_mb=round(peak_rss_mb()))))

def child(args:list, env=None) -> dict|None:
    "Run `args` in a fresh interpreter; its last JSON line, or None (with the error printed)."
    out = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, env=env)
    lines = [l for l in out.stdout.splitlines() if l.startswith('{"')]
    if not lines: print('failed:', ' '.join(map(str, args)), out.stderr[-1500:], flush=True); return None
    return json.loads(lines[-1])

def amdahl(t1:float, t2:float, n:int=16) -> dict:
    "The serial share `s` with t(k) = t1·(s + (1 - s)/k) through the 1- and 2-thread times, and t(n) it projects."
    s = min(max(2 * t2 / t1 - 1, 0.0), 1.0)
    return dict(serial_share=round(s, 3), speedup_2=round(t1 / t2, 2), projected_s=round(t1 * (s + (1 - s) / n), 3),
                projected_speedup=round(1 / (s + (1 - s) / n), 2), threads=n)

def main():
    args = sys.argv[1:]
    if args and args[0] == '--generation': return generation(args[1], args[2])
    smoke = '--smoke' in args
    sizes = ['tiny'] if smoke else (args[args.index('--sizes') + 1].split(',') if '--sizes' in args else ['135M', '360M', '1.7B'])
    from rlnb.core import bench_results, cache_dir
    from rlnb.hardware import cpu_line, isa_caps, precision_decision
    if smoke:
        from _smoke import smoke_home
        results = smoke_home()/'results'
    else: results = bench_results()
    steps = 2 if smoke else STEPS
    print(cpu_line(), isa_caps() or '', flush=True)
    sys.path.insert(0, str(HERE)); import dpo_speed
    dpo_speed.STEPS, dpo_speed.BATCH = steps, 4
    data = os.path.join(tempfile.mkdtemp(), 'pairs.jsonl'); dpo_speed.make_data(data)
    rows = []
    for size in sizes:
        folder = shape_folder(size, cache_dir()/'shapes')
        row = dict(size=size, shape=SHAPES[size], dpo={}, generation={})
        for v in (SMOKE_VARIANTS if smoke else DPO_VARIANTS):
            r = child([HERE/'dpo_speed.py', v, data, '--model', folder, '--steps', steps])
            if r: row['dpo'][v] = {k: r[k] for k in ('s_per_step', 'pairs_per_s', 'tokens_per_s', 'total_s', 'peak_rss_mb', 'bf16')}
            print(size, 'dpo', v, row['dpo'].get(v), flush=True)
        for e in ('transformers', 'rlnb'):
            row['generation'][e] = child([__file__, '--generation', e, folder])
            print(size, 'generation', e, row['generation'][e], flush=True)
        rows.append(row)
    # thread scaling: the `cpu` preset's step on the smallest size, at 1 thread and at 2
    small = shape_folder(sizes[0], cache_dir()/'shapes')
    threads = {}
    for n in (1, 2):
        env = {**os.environ, 'OMP_NUM_THREADS': str(n), 'MKL_NUM_THREADS': str(n)}
        r = child([HERE/'dpo_speed.py', 'cpu', data, '--model', small, '--steps', steps], env=env)
        threads[n] = r['s_per_step'] if r else None
    scaling = dict(size=sizes[0], variant='cpu', s_per_step={str(k): v for k, v in threads.items()},
                   **(amdahl(threads[1], threads[2]) if all(threads.values()) else {}))
    from datetime import datetime, timezone
    out = dict(cpu=cpu_line(), isa_caps=isa_caps(), precision=precision_decision(), steps=steps, batch_pairs=4,
               max_length=128, prompts=PROMPTS, new_tokens=NEW, rows=rows, threads=scaling,
               date=datetime.now(timezone.utc).isoformat(timespec='seconds'))
    (results/'scaling.json').write_text(json.dumps(out, indent=1) + '\n')
    print(json.dumps(scaling)); print('wrote', results/'scaling.json')
    from report import scaling_table
    print(scaling_table(results/'scaling.json'))

if __name__ == '__main__': main()
