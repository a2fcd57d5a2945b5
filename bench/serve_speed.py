"""Serving speed: GGUF through llama.cpp against HF `generate`, per quantisation, batch 1 and batched, on one machine.

    .venv/bin/python bench/serve_speed.py        # writes bench/results/serve_speed.json
    .venv/bin/python bench/serve_speed.py --smoke    # the tiny policy: HF fp32, GGUF f16 and q8_0, batch 1 and 2, 4 new
                                                 # tokens, once; GGUFs, JSON and table in a temporary folder

SmolLM2-135M-Instruct, the same chat prompt for every engine, greedy, exactly 64 new tokens (EOS ignored, so every run
decodes the same number of tokens), 3 repeats, median. Batched means 8 copies of the prompt decoded together:
- HF: one `generate` over a batch of 8;
- llama.cpp: 8 sequences in one context (`n_seq_max=8`), one `llama_decode` per step carrying one token of each,
  which is what llama.cpp's server does with `--parallel 8` (continuous batching over its slots).
Reported: prefill seconds and decode tokens/s (all sequences together), each engine in its own process.
GGUF files are converted once (f16 with llama.cpp's converter, then quantised) into models/.cache/bench/gguf."""
import json, os, statistics, subprocess, sys, time
from pathlib import Path

N_NEW, BATCH, REPEATS = 64, 8, 3
QUANTS = ('f16', 'q8_0', 'q5_k_m', 'q4_k_m', 'q3_k_m')
PROMPT = "What is a good way to spend a rainy Sunday afternoon?"
MODEL, ENGINES = 'smollm2', (('HF generate, fp32', 'float32'), ('HF generate, bf16 weights', 'bfloat16'))

def smoke_mode():
    global N_NEW, BATCH, REPEATS, QUANTS, MODEL, ENGINES
    N_NEW, BATCH, REPEATS, QUANTS, MODEL, ENGINES = 4, 2, 1, ('f16', 'q8_0'), 'tiny', ENGINES[:1]

def prompt_tokens():
    from transformers import AutoTokenizer
    from rlnb.assets import model_path
    from rlnb.parity import prompt_ids
    return prompt_ids(AutoTokenizer.from_pretrained(model_path(MODEL)), PROMPT)

def hf(dtype:str):
    import torch
    from transformers import AutoModelForCausalLM
    from rlnb.assets import model_path
    m = AutoModelForCausalLM.from_pretrained(model_path(MODEL), dtype=getattr(torch, dtype)).eval()
    ids = torch.tensor([prompt_tokens()])
    def gen(b, n):
        x = ids.expand(b, -1)
        t = time.perf_counter()
        with torch.no_grad():
            out = m.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                             pad_token_id=0)
        assert out.shape[1] == x.shape[1] + n
        return time.perf_counter() - t
    gen(1, 4)   # warm-up
    rows = []
    for b in (1, BATCH):
        pre = statistics.median(gen(b, 1) for _ in range(REPEATS))
        full = statistics.median(gen(b, N_NEW) for _ in range(REPEATS))
        rows.append(dict(batch=b, prefill_s=round(pre, 4), decode_tok_s=round(b * (N_NEW - 1) / (full - pre), 1)))
    return rows

def llama(path:str):
    import ctypes, numpy as np
    import llama_cpp as L
    from rlnb.llama import check_llama_cpu
    check_llama_cpu()
    L.llama_backend_init()
    model = L.llama_model_load_from_file(path.encode(), L.llama_model_default_params())
    n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    ids = prompt_tokens()
    def run(b, n):
        cp = L.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_seq_max = b * (len(ids) + n + 8), max(512, b * len(ids)), b
        cp.n_threads = cp.n_threads_batch = os.cpu_count()
        ctx = L.llama_init_from_model(model, cp)
        batch = L.llama_batch_init(max(512, b * len(ids)), 0, b)
        def put(items):   # [(token, pos, seq, want_logits)]
            for i, (tk, pos, s, lg) in enumerate(items):
                batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = tk, pos, 1, lg
                batch.seq_id[i][0] = s
            batch.n_tokens = len(items)
            assert L.llama_decode(ctx, batch) == 0
        t0 = time.perf_counter()
        put([(tk, p, s, p == len(ids) - 1) for s in range(b) for p, tk in enumerate(ids)])
        t1 = time.perf_counter()
        nxt = [0] * b
        for step in range(n):
            for s in range(b):
                lg = np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, s if step else (s + 1) * len(ids) - 1),
                                           shape=(n_vocab,))
                nxt[s] = int(lg.argmax())
            if step == n - 1: break
            put([(nxt[s], len(ids) + step, s, True) for s in range(b)])
        t2 = time.perf_counter()
        L.llama_batch_free(batch); L.llama_free(ctx)
        return t1 - t0, t2 - t1, list(nxt)
    run(1, 4)   # warm-up
    rows = []
    for b in (1, BATCH):
        res = [run(b, N_NEW) for _ in range(REPEATS)]
        assert len({tuple(r[2]) for r in res}) == 1 and len(set(res[0][2])) == 1 or b == 1   # copies decode alike
        pre, dec = statistics.median(r[0] for r in res), statistics.median(r[1] for r in res)
        rows.append(dict(batch=b, prefill_s=round(pre, 4), decode_tok_s=round(b * (N_NEW - 1) / dec, 1)))
    L.llama_model_free(model)
    return rows

def gguf_files(d=None) -> dict:
    from rlnb.core import cache_dir
    from rlnb.assets import model_path
    from rlnb.export import convert_to_gguf, quantize_gguf
    d = Path(d or cache_dir()/'bench'/'gguf'); d.mkdir(parents=True, exist_ok=True)
    f16 = d/f'{MODEL}-f16.gguf'
    if not f16.exists(): convert_to_gguf(model_path(MODEL), f16, 'f16')
    out = {'f16': f16}
    for q in QUANTS[1:]:
        out[q] = d/f'{MODEL}-{q}.gguf'
        if not out[q].exists(): quantize_gguf(f16, out[q], q)
    return out

def main():
    smoke = sys.argv[-1] == '--smoke'
    if smoke: sys.argv.pop(); smoke_mode()
    if sys.argv[1:2] == ['--child']:
        kind, arg = sys.argv[2], sys.argv[3]
        print(json.dumps(hf(arg) if kind == 'hf' else llama(arg))); return
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line
    if smoke:
        from _smoke import smoke_home
        home = smoke_home(); results = home/'results'
    else: results = bench_results()
    print(cpu_line(), flush=True)
    files = gguf_files(home/'gguf' if smoke else None)
    engines = [(name, 'hf', dtype) for name, dtype in ENGINES]
    engines += [(f'llama.cpp {q}', 'llama', str(p)) for q, p in files.items()]
    rows = []
    for name, kind, arg in engines:
        p = subprocess.run([sys.executable, __file__, '--child', kind, arg] + ['--smoke'] * smoke, capture_output=True, text=True,
                           env={**os.environ, 'HF_HUB_OFFLINE': '1'})
        if p.returncode: print(name, 'failed:', p.stderr[-2000:], flush=True); continue
        for r in json.loads(p.stdout.strip().splitlines()[-1]):
            size = os.path.getsize(arg) / 2**20 if kind == 'llama' else None
            rows.append(dict(engine=name, size_mb=round(size, 1) if size else None, **r)); print(rows[-1], flush=True)
    for r in rows:
        base = next(x for x in rows if x['engine'] == 'HF generate, fp32' and x['batch'] == r['batch'])
        r['vs_hf_fp32'] = round(r['decode_tok_s'] / base['decode_tok_s'], 2)
    res = dict(cpu=cpu_line(), prompt_tokens=len(prompt_tokens()), new_tokens=N_NEW, batch=BATCH, repeats=REPEATS,
               rows=rows)
    (results/'serve_speed.json').write_text(json.dumps(res, indent=1))
    if smoke:
        if len(rows) < 2 * len(engines): sys.exit(f'{len(engines) - len(rows) // 2} engine(s) failed')
        from report import serve_speed_table
        print(serve_speed_table(results/'serve_speed.json'))

if __name__ == '__main__': main()
