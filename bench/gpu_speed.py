"""The DPO, PPO and generation benchmarks on a CUDA GPU, where one is lent; CPU figures come from the other bench scripts.

    .venv/bin/python bench/gpu_speed.py --prepare DIR   # on the CPU machine: config, tokenizer, pairs, prompts into DIR
    python3 bench/gpu_speed.py DIR                      # on the GPU machine: writes bench/results/gpu_speed.json
    .venv/bin/python bench/gpu_speed.py --smoke         # prepare into a temp folder, then (CUDA only) every part on a
                                                        # 2-layer model for 2 steps; without CUDA: SKIP

The lent GPU machine reaches no network and takes at most 64 MiB of files, so SmolLM2-135M's weights (270 MB in bf16)
cannot travel: the GPU runs use SmolLM2-135M-Instruct's architecture and real tokenizer with seeded random weights, on
the real chitchat pairs and prompts. Speed depends on shapes, not on weight values, once lengths are fixed: PPO and
generation decode a fixed number of new tokens (random weights almost never emit EOS; the rows count what ran).
Losses and rewards from random weights mean nothing and are not reported.
- DPO: TRL's `DPOConfig` defaults (bf16, gradient checkpointing, reference recomputed every step) against rlnb's GPU
  choices one at a time (reference log-probs once, no checkpointing, the packed forward), batch 16 pairs, LoRA r16.
- PPO: rlnb's `PPOTrainer` with the `small_gpu` preset's shape (32 responses of 64 tokens a step, 4 minibatches).
- Generation: HF `generate`, bf16, batch 1 and 32, 128 new tokens."""
import json, os, statistics, sys, tempfile, time
from pathlib import Path

DPO_BATCH, DPO_STEPS = 16, 12
PPO = dict(steps=6)                        # PPOConfig overrides of the small_gpu preset
GEN_BATCHES, GEN_NEW, GEN_REPEATS = (1, 32), 128, 3
ARCH = {}                                  # config overrides of the random model (--smoke: 2 small layers)
DPO = {  # PreferenceConfig overrides of the `default` preset (LoRA r16, bf16 weights + autocast, TRL's forward)
    'trl_defaults': dict(gradient_checkpointing=True, precompute_ref_log_probs=False),
    'ref_once': dict(gradient_checkpointing=True),
    'ref_once_no_checkpointing': dict(gradient_checkpointing=False),
    'packed_ref_once_no_checkpointing': dict(gradient_checkpointing=False, packed=True),
}

def prepare(d:Path):
    import shutil
    from rlnb.assets import model_path, chitchat_prompts
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    d.mkdir(parents=True, exist_ok=True)
    src = model_path('smollm2')
    for f in src.iterdir():
        if f.suffix != '.safetensors': shutil.copy(f, d/f.name)
    recs, _ = chitchat_records()
    pairs = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']['train'].shuffle(seed=0)
    with open(d/'pairs.jsonl', 'w') as f:
        for r in pairs.select(range(DPO_BATCH * DPO_STEPS)): f.write(json.dumps(r) + '\n')
    (d/'prompts.json').write_text(json.dumps(chitchat_prompts()))

def smoke_mode():
    "2 DPO variants and 2 PPO steps of a few rows, 8 new tokens once, on a 2-layer model of SmolLM2's vocabulary."
    global DPO_BATCH, DPO_STEPS, GEN_BATCHES, GEN_NEW, GEN_REPEATS
    DPO_BATCH, DPO_STEPS, GEN_BATCHES, GEN_NEW, GEN_REPEATS = 2, 2, (1, 2), 8, 1
    for k in list(DPO)[2:]: del DPO[k]
    PPO.update(steps=2, batch_size=4, num_minibatches=2, max_new_tokens=8)
    ARCH.update(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2)

def random_model(d:Path) -> Path:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    out = Path(tempfile.mkdtemp())/'smollm2-arch'
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(d, **ARCH))
    m.save_pretrained(out); AutoTokenizer.from_pretrained(d).save_pretrained(out)
    return out

def dpo(model_dir, d):
    from dataclasses import replace
    from datasets import Dataset
    from rlnb.dpo_config import PreferenceConfig
    from rlnb.dpo import train_dpo, step_timer
    pairs = Dataset.from_list([json.loads(l) for l in open(d/'pairs.jsonl')])
    rows = []
    for name, over in DPO.items():
        cfg = replace(PreferenceConfig.PRESETS['default'], model=str(model_dir), batch_size=DPO_BATCH, max_length=512, logging_steps=1,
                      save_steps=10**9, **over)
        timer = step_timer()
        import torch; torch.cuda.reset_peak_memory_stats()
        with tempfile.TemporaryDirectory() as o:
            t0 = time.perf_counter()
            res = train_dpo(pairs, None, cfg, o, max_steps=DPO_STEPS, resume=False, callbacks=[timer])
            total = time.perf_counter() - t0
        s = statistics.median(timer.steps[1:])
        rows.append(dict(variant=name, s_per_step=round(s, 4), pairs_per_s=round(DPO_BATCH / s, 1),
                         total_s=round(total, 1), prepare_s=res.metrics.get('prepare_seconds'),
                         peak_gpu_mb=round(torch.cuda.max_memory_allocated() / 2**20), settings=over))
        print(json.dumps(rows[-1]), flush=True)
    for r in rows: r['speedup'] = round(rows[0]['s_per_step'] / r['s_per_step'], 2)
    return rows

def ppo(model_dir, d):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from rlnb.hardware import seed_everything
    from rlnb.ppo_config import PPOConfig
    from rlnb.ppo import PPOTrainer, bf16_on
    seed_everything(0)
    cfg = PPOConfig.make('small_gpu', save_steps=10**9, log_completions=0, missing_eos_penalty=None, **PPO)
    model, tok = AutoModelForCausalLM.from_pretrained(model_dir), AutoTokenizer.from_pretrained(model_dir)
    reward = lambda prompts, responses: [len(r) / 100 for r in responses]
    torch.cuda.reset_peak_memory_stats()
    tr = PPOTrainer(model, tok, reward, cfg)
    hist = tr.train(json.loads((d/'prompts.json').read_text()), tempfile.mkdtemp(), progress=False)
    parts = {k: statistics.median(h[f'time/{k}'] for h in hist[1:]) for k in ('generate', 'score', 'prepare', 'update')}
    return dict(batch=cfg.batch_size, max_new_tokens=cfg.max_new_tokens, minibatches=cfg.num_minibatches,
                epochs=cfg.ppo_epochs, bf16=bf16_on(cfg, 'cuda'), **{k: round(v, 3) for k, v in parts.items()},
                s_per_step=round(sum(parts.values()), 3), peak_gpu_mb=round(torch.cuda.max_memory_allocated() / 2**20))

def gen(model_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from rlnb.parity import prompt_ids
    tok = AutoTokenizer.from_pretrained(model_dir)
    m = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16).cuda().eval()
    ids = torch.tensor([prompt_ids(tok, "What is a good way to spend a rainy Sunday afternoon?")], device='cuda')
    def run(b, n):
        x = ids.expand(b, -1); torch.cuda.synchronize(); t = time.perf_counter()
        with torch.no_grad():
            m.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n, do_sample=False,
                       pad_token_id=0)
        torch.cuda.synchronize(); return time.perf_counter() - t
    run(1, 8)
    rows = []
    for b in GEN_BATCHES:
        pre = statistics.median(run(b, 1) for _ in range(GEN_REPEATS))
        full = statistics.median(run(b, GEN_NEW) for _ in range(GEN_REPEATS))
        rows.append(dict(batch=b, prefill_s=round(pre, 4), decode_tok_s=round(b * (GEN_NEW - 1) / (full - pre), 1)))
        print(json.dumps(rows[-1]), flush=True)
    return rows

def main():
    smoke = sys.argv[1:] == ['--smoke']
    if not smoke and sys.argv[1] == '--prepare': return prepare(Path(sys.argv[2]))
    if smoke:
        from _smoke import smoke_home, skip
        smoke_mode(); home = smoke_home(); d = home/'gpu_prepared'
        prepare(d)
        assert {'config.json', 'pairs.jsonl', 'prompts.json'} <= {f.name for f in d.iterdir()}
    import torch
    if smoke and not torch.cuda.is_available(): return skip('no CUDA: the DPO, PPO and generation runs (--prepare ran)')
    assert torch.cuda.is_available(), 'this benchmark needs a CUDA GPU'
    if not smoke: d = Path(sys.argv[1])
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line
    model_dir = random_model(d)
    res = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, cpu=cpu_line(),
               weights='SmolLM2-135M-Instruct architecture, seeded random weights (see the docstring)')
    res['generate'] = gen(model_dir)
    res['ppo'] = ppo(model_dir, d); print(json.dumps(res['ppo']), flush=True)
    res['dpo'] = dpo(model_dir, d)
    out = (home/'results' if smoke else Path(os.environ.get('OUT', bench_results())))/'gpu_speed.json'
    out.write_text(json.dumps(res, indent=1)); print('wrote', out)
    if smoke:
        from report import gpu_speed_table
        print(gpu_speed_table(out))

if __name__ == '__main__': main()
