"""rlnb's PPO against TRL 0.29's PPOTrainer (the last TRL release that has one), side by side on one machine.

    .venv/bin/python bench/ppo_speed.py --setup          # once: bench/.venv-trl029 with trl==0.29.0 (torch etc. shared)
    .venv/bin/python bench/ppo_speed.py --steps 12       # both runs, one after the other; prints the comparison
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 .venv/bin/python bench/ppo_speed.py \
        --only trl --only 'rlnb (cpu preset: + bf16 sampling copy)' --steps 8 --save ppo_speed_avx2.json
                                                         # this CPU held to AVX2 (no fast bf16); caps saved in the JSON
    .venv/bin/python bench/ppo_speed.py --smoke          # the tiny policy and a tiny reward model, 3 steps of 4
                                                         # responses, rlnb's cpu preset (and TRL 0.29 when its venv
                                                         # exists: never created here); JSON and table to a temp folder

Same policy (SmolLM2-135M-Instruct), LoRA r16/α32 on all linear layers, prompts (the chitchat questions), batch (8
responses a step), response length (32 new tokens), temperature 0.7, PPO epochs (2) and minibatches (2), learning rate
(1e-4), fixed KL coefficient 0.05 with the k1 estimator, no EOS penalty, the same MiniLM reward model and seed. Each side
runs in its own process (TRL 0.29 from its own virtual environment), so peak RSS is each run's own.

TRL 0.29's PPO is run as its documentation runs it: the value model is a separate copy of the policy with a score head,
trained in full; the reference is the policy with its adapter disabled. rlnb's PPO puts the value head on the policy.
Per-step time is split into generate / score / prepare (reference log-probs, values, advantages) / update; for TRL the
split is measured by wrapping its module-level `batch_generation`, `get_reward` and `forward` functions.
Writes bench/results/ppo_speed.json."""
import argparse, json, os, resource, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TRL_VENV = Path(os.environ.get('RLNB_TRL_VENV') or HERE/'.venv-trl029')   # where --setup puts TRL 0.29's environment
RESULT = HERE/'results'/'ppo_speed.json'

def setup():
    "Create bench/.venv-trl029: trl==0.29.0 on top of the main environment's packages (a .pth file points at them)."
    import site
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(TRL_VENV)], check=True)
    sp = next(TRL_VENV.glob('lib/python3*/site-packages'))
    # an `import` line in a .pth runs: addsitedir appends the main environment (and its own .pth files, the editable
    # rlnb among them) after this one's packages, so trl 0.29 wins and everything else is shared
    (sp/'zz_rlnb_main.pth').write_text(f"import site; site.addsitedir({site.getsitepackages()[0]!r})\n")
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--target', str(sp), 'trl==0.29.0'],
                   check=True)
    out = subprocess.run([str(TRL_VENV/'bin'/'python'), '-c', 'import trl; print(trl.__version__)'],
                         capture_output=True, text=True, check=True).stdout.strip()
    print(f"{TRL_VENV}: trl {out}")

def reward_model_dir(smoke:bool=False) -> Path:
    "A MiniLM reward model trained on 1,000 chitchat pairs (cached): the reward both runs optimise."
    from rlnb.core import cache_dir, rlnb_home
    out = rlnb_home()/'ppo_reward' if smoke else cache_dir()/'bench'/'ppo_reward'   # smoke: a tiny one, not cached
    if (out/'reward_model'/'rlnb_reward.json').exists(): return out/'reward_model'
    from rlnb.feedback_store import FeedbackStore, import_chitchat
    from rlnb.formatting import build_datasets
    from rlnb.reward import RewardConfig, train_reward_model
    import tempfile
    st = FeedbackStore(str(Path(tempfile.mkdtemp())/'fb.db')); import_chitchat(st)
    ds = build_datasets(st.query(agent='chitchat'), 0.2, 10 if smoke else None, eval_frac=0.1, formats=('pairs',))['pairs']
    cfg = RewardConfig.make('tiny', max_train_examples=16, epochs=1) if smoke else \
        RewardConfig.make('cpu', max_train_examples=1000)
    res = train_reward_model(ds['train'], ds['eval'], cfg, out)
    print(f"reward model: held-out accuracy {res.metrics.get('accuracy')}", file=sys.stderr)
    return out/'reward_model'

SETTINGS = dict(batch=8, minibatches=2, epochs=2, new_tokens=32, temperature=0.7, lr=1e-4, kl_coef=0.05, lora_r=16,
                lora_alpha=32, seed=0, model='smollm2')
SMOKE = dict(batch=4, epochs=1, new_tokens=4, model='tiny')   # --smoke: the tiny policy, short steps
SMOKE_STEPS = 3   # the first step is left out of the per-step means, and ppo_speed_table's intervals need 2 more

def peak_rss_mb() -> float: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def run_rlnb(steps:int, rm:str, bf16=None, sample_merged=True, attn=None, sample_bf16=None, sampler_logprobs=None,
             packed=None) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from rlnb.hardware import seed_everything
    from rlnb.assets import model_path
    from rlnb.ppo_config import PPOConfig
    from rlnb.ppo import PPOTrainer, reward_model_fn
    from rlnb.prompts import read_prompts
    s = SETTINGS
    seed_everything(s['seed'])
    cfg = PPOConfig.make('cpu', batch_size=s['batch'], num_minibatches=s['minibatches'], ppo_epochs=s['epochs'],
                         max_new_tokens=s['new_tokens'], temperature=s['temperature'], learning_rate=s['lr'],
                         init_kl_coef=s['kl_coef'], adaptive_kl=False, kl_estimator='k1', missing_eos_penalty=None,
                         lora_r=s['lora_r'], lora_alpha=s['lora_alpha'], steps=steps, save_steps=10**9,
                         seed=s['seed'], log_completions=0, bf16=bf16,
                         sample_merged=sample_merged, attn_implementation=attn, sample_bf16=sample_bf16,
                         sampler_logprobs=sampler_logprobs, packed=packed)
    p = model_path(s['model'])
    # fp32 weights on both sides: a shape folder of bench/scaling.py keeps its random weights in bf16
    model, tok = AutoModelForCausalLM.from_pretrained(p, dtype=torch.float32), AutoTokenizer.from_pretrained(p)
    t0 = time.perf_counter()
    tr = PPOTrainer(model, tok, reward_model_fn(rm), cfg)
    import tempfile
    hist = tr.train(read_prompts('chitchat'), tempfile.mkdtemp(), progress=False)
    wall = time.perf_counter() - t0
    steps_out = [{'generate': h['time/generate'], 'score': h['time/score'], 'prepare': h['time/prepare'],
                  'update': h['time/update'], 'reward': h['objective/reward'], 'kl': h['objective/kl'],
                  'response_tokens': h.get('charts/response_tokens')} for h in hist]
    from rlnb.hardware import auto_bf16
    from rlnb.ppo import packed_on
    return {'side': 'rlnb', 'bf16': bf16 if bf16 is not None else f'auto ({auto_bf16("cpu")})',
            'sample_merged': sample_merged, 'attn_implementation': attn or 'auto',
            'sample_bf16': sample_bf16, 'packed': packed if packed is not None else f'auto ({packed_on(cfg, "cpu")})',
            'torch': torch.__version__, 'steps': steps_out,
            'wall_s': round(wall, 1),
            'peak_rss_mb': round(peak_rss_mb())}

def run_trl(steps:int, rm:str) -> dict:
    import torch, trl
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, TrainerCallback
    from trl.experimental.ppo import PPOConfig, PPOTrainer
    import trl.experimental.ppo.ppo_trainer as T
    from rlnb.core import render_chat
    from rlnb.hardware import seed_everything
    from rlnb.assets import model_path
    from rlnb.ppo import reward_model_fn
    from rlnb.prompts import read_prompts
    s = SETTINGS
    seed_everything(s['seed'])
    p = model_path(s['model'])
    tok = AutoTokenizer.from_pretrained(p); tok.padding_side = 'left'
    # SmolLM2 pads with <|im_end|>, its EOS, which also closes every chat turn inside a prompt. TRL 0.29 masks every
    # pad id as padding, so it would hide those tokens: give it a pad token no prompt contains, as a careful user would.
    tok.pad_token = '<|endoftext|>'
    prompts = read_prompts('chitchat')
    ids = {q: tok(render_chat(tok, q), add_special_tokens=False)['input_ids'] for q in prompts}
    by_ids = {tuple(v): q for q, v in ids.items()}
    ds = Dataset.from_dict({'input_ids': list(ids.values())})
    policy = AutoModelForCausalLM.from_pretrained(p, dtype=torch.float32)
    policy.generation_config.pad_token_id = tok.pad_token_id
    value = AutoModelForSequenceClassification.from_pretrained(p, num_labels=1, dtype=torch.float32)
    value.config.pad_token_id = tok.pad_token_id
    reward = reward_model_fn(rm)

    stub = torch.nn.Module()   # stands for the MiniLM reward model; the patched get_reward below scores with it
    timers = {'generate': 0.0, 'score': 0.0, 'prepare': 0.0}
    orig_gen, orig_reward, orig_forward = T.batch_generation, T.get_reward, T.forward
    def timed(key, f):
        def g(*a, **k):
            t = time.perf_counter(); out = f(*a, **k); timers[key] += time.perf_counter() - t; return out
        return g
    def get_reward(model, query_responses, pad_token_id, context_length):
        if model is not stub: return timed('prepare', orig_reward)(model, query_responses, pad_token_id, context_length)
        t = time.perf_counter()
        qs = []
        for row in query_responses[:, :context_length].tolist():   # left-padded queries: drop the leading pads
            k = next(i for i, t in enumerate(row) if t != pad_token_id)
            qs.append(by_ids[tuple(row[k:])])
        rs = tok.batch_decode(query_responses[:, context_length:], skip_special_tokens=True)
        sc = torch.tensor(reward(qs, rs), dtype=torch.float32)
        seq = T.first_true_indices(query_responses[:, context_length:] == pad_token_id) - 1 + context_length
        timers['score'] += time.perf_counter() - t
        return None, sc, seq
    def forward(model, query_responses, pad_token_id):
        return (orig_forward if torch.is_grad_enabled() else timed('prepare', orig_forward))(
            model, query_responses, pad_token_id)
    T.batch_generation, T.get_reward, T.forward = timed('generate', orig_gen), get_reward, forward

    steps_out, marks = [], [time.perf_counter()]
    class Clock(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs and 'objective/scores' in logs:
                steps_out.append({'reward': logs['objective/scores'], 'kl': logs['objective/kl']})
        def on_step_end(self, args, state, control, **kw):
            now = time.perf_counter(); total = now - marks[-1]; marks.append(now)
            st = steps_out[-1]
            st.update({k: round(v, 3) for k, v in timers.items()})
            st['update'] = round(total - sum(timers.values()), 3)
            for k in timers: timers[k] = 0.0
    args = PPOConfig(output_dir=str(Path(os.environ.get('TMPDIR', '/tmp'))/'trl029_ppo'), report_to='none',
                     per_device_train_batch_size=s['batch'] // s['minibatches'],
                     gradient_accumulation_steps=s['minibatches'], num_mini_batches=s['minibatches'],
                     num_ppo_epochs=s['epochs'], total_episodes=steps * s['batch'], response_length=s['new_tokens'],
                     temperature=s['temperature'], learning_rate=s['lr'], kl_coef=s['kl_coef'], kl_estimator='k1',
                     missing_eos_penalty=None, stop_token='eos', local_rollout_forward_batch_size=s['batch'],
                     num_sample_generations=0, save_strategy='no', logging_steps=1, seed=s['seed'],
                     use_cpu=True, disable_tqdm=True, bf16=False, lr_scheduler_type='constant')
    peft = LoraConfig(r=s['lora_r'], lora_alpha=s['lora_alpha'], target_modules='all-linear', task_type='CAUSAL_LM')
    t0 = time.perf_counter()
    tr = PPOTrainer(args=args, processing_class=tok, model=policy, ref_model=None, reward_model=stub,
                    train_dataset=ds, value_model=value, eval_dataset=ds.select(range(2)), peft_config=peft,
                    callbacks=[Clock()])
    marks[0] = time.perf_counter()
    tr.train()
    wall = time.perf_counter() - t0
    return {'side': f'trl {trl.__version__}', 'torch': torch.__version__, 'steps': steps_out, 'wall_s': round(wall, 1),
            'peak_rss_mb': round(peak_rss_mb())}

SIDES = {   # TRL first, then rlnb one lever at a time
    'trl': lambda steps, rm: run_trl(steps, rm),
    # the ladder's first rungs pass padded rows, as they ran before the packed passes: each adds one lever
    'rlnb fp32, sampling through PEFT': lambda steps, rm: run_rlnb(steps, rm, bf16=False, sample_merged=False,
                                                                   packed=False),
    'rlnb fp32, merged sampler': lambda steps, rm: run_rlnb(steps, rm, bf16=False, packed=False),
    'rlnb + bf16 scoring and update where it pays': lambda steps, rm: run_rlnb(steps, rm, attn='sdpa', sample_bf16=False,
                                                                               packed=False),
    'rlnb + eager attention under bf16': lambda steps, rm: run_rlnb(steps, rm, sample_bf16=False, packed=False),
    # where the CPU has no fast bf16 (sampling, scoring and update all fp32), the preset takes the old log-probs from the
    # sampling pass; this side computes them again in a second forward, as the preset did before
    'rlnb (cpu preset, old log-probs by a second forward)': lambda steps, rm: run_rlnb(steps, rm, sampler_logprobs=False),
    # the scoring and update passes over padded rows, as before `packed` (on a CPU the preset packs them: no padding,
    # the system turn every prompt shares computed once)
    'rlnb (cpu preset, padded passes)': lambda steps, rm: run_rlnb(steps, rm, packed=False),
    'rlnb (cpu preset: + bf16 sampling copy)': run_rlnb}

def summarise(r:dict, skip:int=1) -> dict:
    "Mean seconds per phase and per step over the steps after the first `skip` (warm-up)."
    xs = r['steps'][skip:] or r['steps']
    m = {k: round(sum(x[k] for x in xs) / len(xs), 2) for k in ('generate', 'score', 'prepare', 'update')}
    m['step'] = round(sum(m.values()), 2)
    m['reward_mean'] = round(sum(x['reward'] for x in r['steps']) / len(r['steps']), 4)
    m['kl_last'] = round(r['steps'][-1]['kl'], 3)
    return m

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--setup', action='store_true'); ap.add_argument('--steps', type=int, default=12)
    ap.add_argument('--side', choices=list(SIDES)); ap.add_argument('--out'); ap.add_argument('--rm')
    ap.add_argument('--threads', type=int, default=0, help='torch threads (0: torch default)')
    ap.add_argument('--only', action='append', choices=list(SIDES), help='run only these sides; nothing is saved')
    ap.add_argument('--save', help="with --only (trl among them): save to bench/results/<SAVE>")
    ap.add_argument('--smoke', action='store_true', help=f'{SMOKE_STEPS} short steps on tiny models; results to a temp folder')
    ap.add_argument('--model', help="the policy on both sides: a model folder (bench/scaling.py's shapes); default SmolLM2")
    a = ap.parse_args()
    if a.setup: return setup()
    if a.smoke: SETTINGS.update(SMOKE)
    if a.model: SETTINGS['model'] = a.model
    if a.side:
        import torch
        if a.threads: torch.set_num_threads(a.threads)
        res = SIDES[a.side](a.steps, a.rm)
        Path(a.out).write_text(json.dumps(res)); return
    from rlnb.hardware import cpu_line
    from datetime import datetime, timezone
    from rlnb.recipe import code_commit   # the commit a run folder records, read the same way
    date, commit = datetime.now(timezone.utc).isoformat(timespec='seconds'), code_commit()   # when the sides start
    tmp, result = Path('/tmp'), RESULT
    if a.smoke:
        if a.only or a.save: ap.error('--smoke runs its own sides and saves to a temporary folder')
        from _smoke import smoke_home, skip
        tmp = smoke_home()/'results'; result = tmp/RESULT.name; a.steps = SMOKE_STEPS
        a.only = ['rlnb (cpu preset: + bf16 sampling copy)']
        if (TRL_VENV/'bin'/'python').exists(): a.only.insert(0, 'trl')
        else: skip(f'the TRL 0.29 side: {TRL_VENV} is missing (create it with --setup; smoke runs never do)')
    elif not (TRL_VENV/'bin'/'python').exists() and (not a.only or 'trl' in a.only): setup()
    rm = str(reward_model_dir(a.smoke))
    env = {**os.environ, 'TRL_EXPERIMENTAL_SILENCE': '1', 'HF_HUB_OFFLINE': '1'}
    runs = {}
    for side in a.only or SIDES:
        py = str(TRL_VENV/'bin'/'python') if side == 'trl' else sys.executable
        out = tmp/f"ppo_speed_{side.split()[0]}_{len(runs)}.json"
        t = time.perf_counter()
        subprocess.run([py, __file__, '--side', side, '--steps', str(a.steps), '--out', str(out), '--rm', rm,
                        '--threads', str(a.threads)] + ['--smoke'] * a.smoke + ['--model', a.model] * bool(a.model),
                       check=True, env=env, cwd=ROOT)
        runs[side] = json.loads(out.read_text()); runs[side]['process_s'] = round(time.perf_counter() - t, 1)
        print(f"{side}: {json.dumps(summarise(runs[side]))}", flush=True)
    if a.only and not (a.save and 'trl' in runs) and not a.smoke: return
    from rlnb.hardware import isa_caps
    caps = isa_caps()   # torch, oneDNN and MKL held to an older instruction set
    s = {k: summarise(v) for k, v in runs.items()}
    res = {'cpu': cpu_line(), 'isa_caps': caps, 'date': date, 'commit': commit, 'settings': SETTINGS, 'steps': a.steps,
           'summary': s,
           'speedup_per_step': {k: round(s['trl']['step'] / s[k]['step'], 2) for k in s if k != 'trl' and 'trl' in s},
           'peak_rss_mb': {k: v['peak_rss_mb'] for k, v in runs.items()}, 'runs': runs}
    out = result.with_name(a.save) if a.save else result
    out.parent.mkdir(exist_ok=True); out.write_text(json.dumps(res, indent=1))
    print(json.dumps({k: v for k, v in res.items() if k != 'runs'}, indent=1))
    if a.smoke:
        from report import plot_ppo_speed, ppo_speed_table
        plot_ppo_speed(out).savefig(out.with_suffix('.png'))
        if 'trl' in runs: print(ppo_speed_table(out))
        else: skip('ppo_speed_table: it compares with the TRL side, which did not run')

if __name__ == '__main__': main()
