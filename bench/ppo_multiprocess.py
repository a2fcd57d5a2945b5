"""PPO under `accelerate launch`: several processes share each step's prompts, metrics are averaged, the main process checkpoints.
    .venv/bin/torchrun --nproc_per_node 2 bench/ppo_multiprocess.py OUT_DIR      (two CPU processes, gloo)
    .venv/bin/accelerate launch --num_processes N bench/ppo_multiprocess.py OUT_DIR   (N GPUs) Prints one JSON line per process; the main process also writes OUT_DIR/checkpoint-N."""
import json, sys
from pathlib import Path
from accelerate import Accelerator
from rlnb.core import tiny_policy
from rlnb.ppo import PPOConfig, PPOTrainer

def main(out):
    import torch
    acc = Accelerator(cpu=not torch.cuda.is_available())
    model, tok = tiny_policy(init_range=0.4)
    seen = []
    def reward(prompts, responses, completion_ids):
        seen.extend(prompts); return [sum(t % 2 == 0 for t in c) / max(1, len(c)) for c in completion_ids]
    cfg = PPOConfig(batch_size=4, num_minibatches=2, ppo_epochs=1, max_new_tokens=8, steps=2, save_steps=2, learning_rate=1e-3)
    tr = PPOTrainer(model, tok, reward, cfg, accelerator=acc)
    hist = tr.train([f'prompt {i}' for i in range(16)], out, progress=False)
    print(json.dumps({'process': acc.process_index, 'of': acc.num_processes, 'prompts_seen': seen,
                      'rewards': [round(h['objective/reward'], 4) for h in hist]}), flush=True)

if __name__ == '__main__': main(sys.argv[1])
