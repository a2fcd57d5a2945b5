"""1 process against 2, on the same total batch: DPO (TRL through rlnb) and PPO (rlnb's), SmolLM2-135M with LoRA.

    .venv/bin/python bench/scale_out.py            # 6 runs; writes bench/results/scale_out.json
    .venv/bin/python bench/scale_out.py --smoke    # packed DPO and PPO, 1 and 2 processes, 2 steps on the tiny policy;
                                                   # the JSON and the table go to a temporary folder

One process runs with all the cores' threads; two run under `torchrun --nproc_per_node 2` (gloo on CPU, what
`accelerate launch --num_processes 2` does), each with half the threads and half the batch, so the work per optimiser
step is the same. DPO: 8 pairs a step (cpu preset, reference once), 6 steps, with TRL's padded forward and with rlnb's
packed one. PPO: 8 responses a step (cpu preset), 4 steps. Median seconds per step after the first, measured on the
main process."""
import json, os, socket, statistics, subprocess, sys, tempfile, time
from pathlib import Path

DPO_PAIRS, DPO_STEPS, PPO_BATCH, PPO_STEPS = 8, 6, 8, 4
STAGES, MODEL = ('dpo', 'dpo_packed', 'ppo'), 'smollm2'

def smoke_mode():
    "2 steps (the first is left out of the median) of 2 pairs / 4 responses on the tiny policy; packed DPO and PPO."
    global DPO_PAIRS, DPO_STEPS, PPO_BATCH, PPO_STEPS, STAGES, MODEL
    DPO_PAIRS, DPO_STEPS, PPO_BATCH, PPO_STEPS, STAGES, MODEL = 2, 2, 4, 2, ('dpo_packed', 'ppo'), 'tiny'

def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def dpo_pairs():
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    recs, _ = chitchat_records()
    pairs = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']['train'].shuffle(seed=0)
    pairs = pairs.select(range(DPO_PAIRS * DPO_STEPS))
    return pairs

def dpo(world:int, out:str, packed:bool):
    from dataclasses import replace
    from rlnb.dpo_config import PreferenceConfig
    from rlnb.dpo import train_dpo, step_timer
    pairs = dpo_pairs()
    cfg = replace(PreferenceConfig.PRESETS['cpu'], model=MODEL, batch_size=DPO_PAIRS // world, max_length=128, logging_steps=1,
                  save_steps=10**9, packed=packed)
    timer = step_timer()
    t0 = time.perf_counter()   # every process writes the same run folder, as under accelerate launch
    res = train_dpo(pairs, None, cfg, out + '.run', max_steps=DPO_STEPS, resume=False, callbacks=[timer])
    total = time.perf_counter() - t0
    return dict(s_per_step=statistics.median(timer.steps[1:]), total_s=total,
                prepare_s=res.metrics.get('prepare_seconds'), losses=[round(h['loss'], 4) for h in res.history
                                                                     if 'loss' in h])

def ppo(world:int):
    from accelerate import Accelerator
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from rlnb.hardware import seed_everything
    from rlnb.assets import model_path
    from rlnb.ppo_config import PPOConfig
    from rlnb.ppo import PPOTrainer
    from rlnb.prompts import read_prompts
    seed_everything(0)
    acc = Accelerator(cpu=not torch.cuda.is_available())
    cfg = PPOConfig.make('cpu', batch_size=PPO_BATCH // world, steps=PPO_STEPS, save_steps=10**9, log_completions=0,
                         **({'max_new_tokens': 4} if MODEL == 'tiny' else {}))
    p = model_path(MODEL)
    model, tok = AutoModelForCausalLM.from_pretrained(p), AutoTokenizer.from_pretrained(p)
    reward = lambda prompts, responses: [len(r) / 100 for r in responses]    # cheap: the policy's work is measured
    tr = PPOTrainer(model, tok, reward, cfg, accelerator=acc)
    t0 = time.perf_counter()
    hist = tr.train(read_prompts('chitchat'), tempfile.mkdtemp(), progress=False)
    steps = [sum(h[f'time/{k}'] for k in ('generate', 'score', 'prepare', 'update')) for h in hist]
    return dict(s_per_step=statistics.median(steps[1:]), total_s=time.perf_counter() - t0,
                rewards=[round(h['objective/reward'], 4) for h in hist])

def child(stage:str, world:int, out:str):
    import torch
    rank = int(os.environ.get('RANK', 0))
    if not torch.cuda.is_available(): torch.set_num_threads(max(1, os.cpu_count() // world))
    r = ppo(world) if stage == 'ppo' else dpo(world, out, packed=stage == 'dpo_packed')
    if rank == 0: Path(out).write_text(json.dumps(dict(r, threads=torch.get_num_threads())))

def main():
    smoke = sys.argv[-1] == '--smoke'
    if smoke: sys.argv.pop(); smoke_mode()
    if sys.argv[1:2] == ['--child']: return child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    from rlnb.core import bench_results
    from rlnb.hardware import cpu_line
    if smoke:
        from _smoke import smoke_home
        results = smoke_home()/'results'
    else: results = bench_results()
    print(cpu_line(), flush=True)
    rows = []
    for stage in STAGES:
        for world in (1, 2):
            out = tempfile.mktemp(suffix='.json')
            cmd = [sys.executable, __file__, '--child', stage, str(world), out] + ['--smoke'] * smoke
            if world > 1:
                cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', str(world),
                       '--master_port', str(free_port()), __file__, '--child', stage, str(world), out] + ['--smoke'] * smoke
            t = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, 'HF_HUB_OFFLINE': '1'})
            if p.returncode: print(stage, world, 'failed:', p.stderr[-3000:], flush=True); continue
            r = dict(stage=stage, processes=world, **json.loads(Path(out).read_text()),
                     process_s=round(time.perf_counter() - t, 1))
            rows.append(r); print(json.dumps(r), flush=True)
    for r in rows:
        one = next(x for x in rows if x['stage'] == r['stage'] and x['processes'] == 1)
        r['speedup'] = round(one['s_per_step'] / r['s_per_step'], 2)
    res = dict(cpu=cpu_line(), device='cpu', dpo_pairs=DPO_PAIRS, ppo_batch=PPO_BATCH, rows=rows)
    (results/'scale_out.json').write_text(json.dumps(res, indent=1))
    print(json.dumps({k: v for k, v in res.items() if k != 'rows'}), flush=True)
    if smoke:
        if len(rows) < 2 * len(STAGES): sys.exit(f'{2 * len(STAGES) - len(rows)} run(s) failed')
        from report import scale_out_table
        print(scale_out_table([results/'scale_out.json']))

if __name__ == '__main__': main()
