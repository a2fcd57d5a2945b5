"""Reward-model training speed on this machine: pairs/s and peak RSS per backbone, one process per backbone.
    .venv/bin/python bench/reward_speed.py minilm      # or smollm2
Trains on 128 real chitchat pairs (batch 8, max_length 128, LoRA r16) after a short warm-up and prints one JSON line."""
import json, sys
from dataclasses import replace

def main(backbone='minilm', n=128):
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    from rlnb.reward import PRESETS, train_reward_model
    recs, _ = chitchat_records()
    pairs = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']['train'].shuffle(seed=0)
    cfg = replace(PRESETS['cpu'], backbone=backbone, batch_size=8, max_train_examples=None)
    train_reward_model(pairs.select(range(16)), None, cfg)                       # warm-up (allocations, kernels)
    res = train_reward_model(pairs.select(range(16, 16 + n)), None, cfg)
    m = res.metrics
    print(json.dumps(dict(backbone=backbone, pairs=n, seconds=m['train_seconds'], pairs_per_s=m['rows_per_s'],
                          s_per_step=round(m['train_seconds'] / m['steps'], 2), peak_rss_mb=m['peak_rss_mb'])))

if __name__ == '__main__': main(*sys.argv[1:2])
