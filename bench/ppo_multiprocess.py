"""PPO under `accelerate launch`: several processes share each step's prompts, metrics are averaged, the main process checkpoints.
    .venv/bin/torchrun --nproc_per_node 2 bench/ppo_multiprocess.py OUT_DIR      (two CPU processes, gloo)
    .venv/bin/accelerate launch --num_processes N bench/ppo_multiprocess.py OUT_DIR   (N GPUs) Prints one JSON line per process (and writes it to OUT_DIR/process-I.json); the main process also writes OUT_DIR/checkpoint-N.
    .venv/bin/python bench/ppo_multiprocess.py --smoke     (launches itself under torchrun, 2 CPU processes, 1 step, into a temp folder)"""
import json, os, subprocess, sys
from pathlib import Path

def main(out, steps:int=2):
    import torch
    from accelerate import Accelerator
    from rlnb.assets import tiny_policy
    from rlnb.ppo_config import PPOConfig
    from rlnb.ppo import PPOTrainer
    acc = Accelerator(cpu=not torch.cuda.is_available())
    model, tok = tiny_policy(init_range=0.4)
    seen = []
    def reward(prompts, responses, completion_ids):
        seen.extend(prompts); return [sum(t % 2 == 0 for t in c) / max(1, len(c)) for c in completion_ids]
    cfg = PPOConfig(batch_size=4, num_minibatches=2, ppo_epochs=1, max_new_tokens=8, steps=steps, save_steps=steps, learning_rate=1e-3)
    tr = PPOTrainer(model, tok, reward, cfg, accelerator=acc)
    hist = tr.train([f'prompt {i}' for i in range(16)], out, progress=False)
    line = json.dumps({'process': acc.process_index, 'of': acc.num_processes, 'prompts_seen': seen,
                       'rewards': [round(h['objective/reward'], 4) for h in hist]})
    Path(out).mkdir(parents=True, exist_ok=True); (Path(out)/f'process-{acc.process_index}.json').write_text(line)   # the processes share one stdout: lines can interleave
    print(line, flush=True)

def smoke():
    "Two CPU processes under torchrun for one step; checks each printed its line and the main process checkpointed."
    from _smoke import smoke_home
    out = smoke_home()/'results'/'ppo_multiprocess'
    p = subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', __file__,
                        str(out), '--steps', '1'], capture_output=True, text=True,
                       env={**os.environ, 'CUDA_VISIBLE_DEVICES': '', 'OMP_NUM_THREADS': '1'})
    print(p.stdout[-3000:], p.stderr[-3000:] if p.returncode else '', sep='\n')
    assert p.returncode == 0, f'torchrun exited {p.returncode}'
    lines = [json.loads(f.read_text()) for f in sorted(out.glob('process-*.json'))]   # not stdout: its lines interleaved once
    assert sorted(l['process'] for l in lines) == [0, 1] and all(l['of'] == 2 for l in lines), lines
    assert len({q for l in lines for q in l['prompts_seen']}) == sum(len(l['prompts_seen']) for l in lines), 'prompts shared'
    assert (out/'checkpoint-1'/'ppo_state.json').exists(), sorted(out.rglob('*'))

if __name__ == '__main__':
    if sys.argv[1:] == ['--smoke']: smoke()
    else: main(sys.argv[1], int(sys.argv[3]) if sys.argv[2:3] == ['--steps'] else 2)
