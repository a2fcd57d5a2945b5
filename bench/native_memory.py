"""What the native libraries keep between stages, with their own defaults and with `rlnb.hardware.NATIVE_MEMORY`, in one run.

    .venv/bin/python bench/native_memory.py          # writes bench/results/native_memory.json
    .venv/bin/python bench/native_memory.py --smoke  # the tiny policy, 2 steps; JSON to a temporary folder

Each setting runs in its own process, which does what an on-policy DPO round of `make demo` does, twice: the policy
samples answers to chitchat prompts (fp32, 96 new tokens), then DPO trains on pairs (`cpu_bf16`, 12 steps of 4 pairs),
and everything is let go (`release_memory`: garbage collected, the C heap trimmed). Per round: resident memory at its
start, its peak, what stays held after it (what the next stage starts from), its seconds and its losses. Settings:
- `library defaults`: oneDNN's primitive cache and ideep's weight cache at 1,024 entries each, glibc's 8 malloc
  arenas per core (what torch does when nothing is set);
- `rlnb`: `rlnb.hardware.NATIVE_MEMORY`, which `import rlnb` sets unless the environment already says otherwise.
The losses and answers must be identical (these caches hold how to compute, not what): checked."""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path

ROUNDS, STEPS, BATCH, PROMPTS, NEW = 2, 12, 4, 32, 96
MODEL = {}

def smoke_budget():
    "--smoke: the tiny policy, 2 steps, 4 prompts, 8 new tokens (in the parent and in each child)."
    global STEPS, PROMPTS, NEW
    STEPS, PROMPTS, NEW = 2, 4, 8; MODEL['model'] = 'tiny'

def child(data:str, smoke:bool):
    from datasets import Dataset
    from rlnb.hardware import release_memory, reset_peak_rss, peak_rss_mb
    from rlnb.dpo_config import PreferenceConfig
    from rlnb.dpo import train_dpo
    from rlnb.policy import generate
    from rlnb.checkpoints import load_checkpoint
    rss = lambda: int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20
    rows = [json.loads(l) for l in open(data)]
    prompts = [r['prompt'][-1]['content'] if isinstance(r['prompt'], list) else r['prompt'] for r in rows][:PROMPTS]
    pairs = Dataset.from_list(rows)
    out = []
    for r in range(ROUNDS):
        release_memory(); reset_peak_rss(); start = rss(); t = time.perf_counter()
        model, tok = load_checkpoint(MODEL.get('model', 'smollm2'))   # as a round loads its policy
        a = generate(model.eval(), tok, prompts, max_new_tokens=NEW, do_sample=True, top_p=0.9, seed=r, batch_size=16)
        del model
        cfg = PreferenceConfig.make('tiny' if smoke else 'cpu_bf16', batch_size=BATCH, save_steps=10**9, logging_steps=1, seed=r)
        with tempfile.TemporaryDirectory() as d:
            res = train_dpo(pairs, None, cfg, d, max_steps=STEPS, resume=False)
            losses = [round(h['loss'], 6) for h in res.history if 'loss' in h]
        del res; release_memory()
        out.append(dict(round=r + 1, start_mb=round(start), peak_mb=round(peak_rss_mb()), held_after_mb=round(rss()),
                        seconds=round(time.perf_counter() - t, 1), losses=losses, answers=a.texts))
    print('RESULT ' + json.dumps(out), flush=True)

def main(smoke:bool=False):
    from rlnb.core import utc_now
    from rlnb.hardware import NATIVE_MEMORY, cpu_line, isa_caps
    from rlnb.feedback import chitchat_records
    from rlnb.formatting import build_datasets
    sys.path.insert(0, str(Path(__file__).parent))
    from _smoke import save_result, smoke_home
    home = smoke_home() if smoke else None
    if smoke: smoke_budget()
    print(cpu_line(), flush=True)
    recs, _ = chitchat_records()
    pairs = build_datasets(recs, max_pairs_per_prompt=300, formats=('pairs',))['pairs']['train'].shuffle(seed=0)
    data = os.path.join(tempfile.mkdtemp(), 'pairs.jsonl')
    with open(data, 'w') as f:
        for r in pairs.select(range(max(STEPS * BATCH, PROMPTS))): f.write(json.dumps(r) + '\n')
    cores = os.cpu_count() or 1
    settings = {'library defaults': {'ONEDNN_PRIMITIVE_CACHE_CAPACITY': '1024', 'LRU_CACHE_CAPACITY': '1024',
                                     'MALLOC_ARENA_MAX': str(8 * cores)},
                'rlnb': dict(NATIVE_MEMORY)}
    res = {'cpu': cpu_line(), 'isa_caps': isa_caps(), 'date': utc_now(), 'smoke': smoke, 'rounds': ROUNDS, 'steps': STEPS,
           'batch': BATCH, 'prompts': PROMPTS, 'new_tokens': NEW, 'settings': settings, 'rows': {}}
    for name, env in settings.items():
        p = subprocess.run([sys.executable, __file__, '--child', data] + ['--smoke'] * smoke, capture_output=True,
                           text=True, env={**os.environ, **env})
        line = [l for l in p.stdout.splitlines() if l.startswith('RESULT ')]
        if p.returncode or not line: sys.exit(f"{name} failed:\n{p.stderr[-3000:]}")
        res['rows'][name] = json.loads(line[-1][7:])
        for r in res['rows'][name]:
            print(f"{name:17s} round {r['round']}: start {r['start_mb']:5d} MiB, peak {r['peak_mb']:5d}, held after "
                  f"{r['held_after_mb']:5d}, {r['seconds']:6.1f} s", flush=True)
    a, b = res['rows'].values()
    res['identical'] = all(x['losses'] == y['losses'] and x['answers'] == y['answers'] for x, y in zip(a, b))
    for rows in res['rows'].values():
        for r in rows: r['answers'] = len(r['answers'])   # checked above; the count is what the file keeps
    if not res['identical']: sys.exit('the settings changed the losses or the answers')
    print(f"identical losses and answers: {res['identical']}")
    save_result(res, 'native_memory.json', home)
    return res

if __name__ == '__main__':
    if '--child' in sys.argv:
        if '--smoke' in sys.argv: smoke_budget()
        child(sys.argv[sys.argv.index('--child') + 1], '--smoke' in sys.argv)
    else: main(smoke='--smoke' in sys.argv)
