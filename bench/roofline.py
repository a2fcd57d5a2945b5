"""How close each training stage runs to what this CPU can do: achieved matmul FLOP/s over attainable FLOP/s.

    .venv/bin/python bench/roofline.py [RUN]     # RUN: a make-demo run folder (default models/chitchat/v1);
                                                # writes bench/results/roofline.json
    .venv/bin/python bench/roofline.py RUN --save roofline_avx2.json   # another CPU's table beside the first
    .venv/bin/python bench/roofline.py --smoke   # tiny shapes and a toy run; JSON to a temp folder

- **Attainable**: `torch.nn.functional.linear` on this CPU (all its threads), in fp32 and bf16, on the linear layers
  of one transformer block of each model at 1,024 tokens (SmolLM2-135M: q, k, v, o, gate, up, down; MiniLM: q, k, v,
  o, intermediate, output); the best of 5 timed repeats after a warm-up; FLOPs / seconds summed over the block.
- **Achieved**, per training stage of the run, from its own saved metrics: tokens processed (TRL's `num_tokens`) and
  training seconds (the last count TRL logged: a lower bound). With LoRA the base weights are frozen, so a step does the forward matmuls and the input-gradient
  matmuls of the backward: 4 × (the body's linear weights) FLOPs per token. The LM head, attention scores and the LoRA
  matrices are not counted, so the achieved figure is a lower bound of the work done.
- **Precision**: the stage's own (its saved config: `base_dtype` bfloat16 for the DPO `cpu_bf16` preset where the CPU
  has native bf16, fp32 otherwise), divided by the attainable throughput in that precision.
On-policy DPO (what `make demo` trains): one row per round, its DPO training only; its sampling, like PPO's, is not in
the table. PPO is not in the table: its saved metrics time its four phases but do not count the tokens of its update,
and generation is bound by reading the weights per token, not by matmul throughput (`bench/serve_speed.py`)."""
import json, sys, time
from pathlib import Path

# per block: (in, out) of each linear layer, and the number of blocks
SHAPES = {'smollm2': ([(576, 576), (576, 192), (576, 192), (576, 576), (576, 1536), (576, 1536), (1536, 576)], 30),
          'minilm': ([(384, 384)] * 4 + [(384, 1536), (1536, 384)], 6)}

def body_params(model:str) -> int:
    shapes, blocks = SHAPES[model]
    return blocks * sum(i * o for i, o in shapes)

def attainable(model:str, dtype:str, tokens:int=1024, reps:int=5) -> float:
    "GFLOP/s of one block's linear layers at `tokens` rows, in `dtype`, best of `reps`."
    import torch
    dt = {'fp32': torch.float32, 'bf16': torch.bfloat16}[dtype]
    total_s, flops = 0.0, 0
    with torch.no_grad():
        for i, o in SHAPES[model][0]:
            x, w = torch.randn(tokens, i, dtype=dt), torch.randn(o, i, dtype=dt)
            for _ in range(2): torch.nn.functional.linear(x, w)
            best = float('inf')
            for _ in range(reps):
                t = time.perf_counter(); torch.nn.functional.linear(x, w); best = min(best, time.perf_counter() - t)
            total_s += best; flops += 2 * tokens * i * o
    return flops / total_s / 1e9

def _tokens(history:list) -> float:
    "The last `num_tokens` TRL logged (logged every few steps: the steps after it are not counted, a lower bound)."
    return max(h['num_tokens'] for h in history if 'num_tokens' in h)

def stage_rows(run:Path) -> list[dict]:
    "Tokens, seconds and precision of the run's LoRA training stages (DPO or each on-policy round's DPO, reward model, judge) from their saved metrics."
    rows = []
    dpo = [('dpo', run/'dpo'/'metrics.json')] + [(f'dpo_on_policy {d.name}', d/'metrics.json')   # each round's DPO
                                                   for d in sorted((run/'dpo_on_policy').glob('round-*'))]
    for name, d in dpo:
        if not d.exists(): continue
        m = json.loads(d.read_text()); cfg = m.get('config', {})
        bf16 = cfg.get('base_dtype') == 'bfloat16' and (m['metrics'].get('precision') or {}).get('auto_bf16', True)
        rows.append(dict(stage=name, model='smollm2', tokens=_tokens(m['history']),
                         seconds=m['metrics']['train_seconds'], dtype='bf16' if bf16 else 'fp32'))
    for st in ('reward', 'judge'):
        f = run/st/'reward_metrics.json'
        if f.exists():
            m = json.loads(f.read_text())
            rows.append(dict(stage=st, model='minilm', tokens=_tokens(m['history']),
                             seconds=m['metrics']['train_seconds'], dtype='fp32'))   # the cpu preset trains in fp32
    return rows

def main(run:str|None=None, smoke:bool=False, save:str='roofline.json'):
    import torch
    from rlnb.core import repo_dir, utc_now
    from rlnb.hardware import cpu_line
    print(cpu_line(), flush=True)
    from _smoke import save_result
    home = None
    if smoke:
        from _smoke import smoke_home, toy_run
        home = smoke_home(); run = None
        att = {(m, d): attainable(m, d, tokens=64, reps=1) for m in SHAPES for d in ('fp32', 'bf16')}
        rows = [dict(stage='dpo', model='smollm2', tokens=1000, seconds=1.0, dtype='bf16')]
    else:
        run = Path(run or repo_dir()/'models'/'chitchat'/'v1')
        att = {(m, d): attainable(m, d) for m in SHAPES for d in ('fp32', 'bf16')}
        rows = stage_rows(run)
    for r in rows:
        r['achieved_gflops'] = round(4 * body_params(r['model']) * r['tokens'] / r['seconds'] / 1e9, 1)
        r['attainable_gflops'] = round(att[(r['model'], r['dtype'])], 1)
        r['fraction'] = round(r['achieved_gflops'] / r['attainable_gflops'], 3)
    res = {'cpu': cpu_line(), 'date': utc_now(), 'smoke': smoke, 'run': str(run) if run else None,
           'threads': torch.get_num_threads(),
           'attainable_gflops': {f'{m} {d}': round(v, 1) for (m, d), v in att.items()}, 'rows': rows}
    for r in rows:
        print(f"{r['stage']:>7} ({r['model']}, {r['dtype']}): {r['achieved_gflops']:7.1f} of {r['attainable_gflops']:7.1f} "
              f"GFLOP/s = {r['fraction']:.0%}")
    save_result(res, save, home)
    return res

if __name__ == '__main__':
    sys.path.insert(0, str(Path(__file__).parent))
    from _smoke import cli; cli(main, smoke='--smoke' in sys.argv)
