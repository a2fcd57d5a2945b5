"""llama.cpp built natively (-march=native, the default of `pip install llama-cpp-python`), or as a dispatch build
(`make LLAMA_BUILD=dispatch`: a CPU backend per instruction-set level, the best loaded at run time), against rlnb's
portable build (GGML_NATIVE=OFF, x86-64-v3, no AVX-512/AMX), side by side on this CPU, each in its own process:
does q8_0/q4_k_m/f16 SmolLM2 run, with which buffer types and CPU variant, and at how many decode tokens/s?

    .venv/bin/python bench/llama_portable.py NATIVE.whl PORTABLE.whl      # writes bench/results/llama_portable.json
    .venv/bin/python bench/llama_portable.py --dispatch DISPATCH.whl PORTABLE.whl --save llama_dispatch_NAME.json
    .venv/bin/python bench/llama_portable.py --smoke     # no build: the cached portable wheel (make install) if there
        # is one, else the installed llama-cpp-python, on a q8_0 GGUF of the tiny policy, 2 prompts x 4 tokens, once;
        # the JSON goes to a temporary folder

Each wheel is unpacked into its own folder and put first on PYTHONPATH of a child process, so the two builds never mix.
A crash of the child (the AMX segfault) is recorded as its signal, not the end of the benchmark."""
import json, os, re, subprocess, sys, tempfile, time, zipfile
from pathlib import Path

QUANTS = ('f16', 'q8_0', 'q4_k_m')
REPEATS = 3

CHILD = r'''
import json, os, sys, time, re
import llama_cpp
from rlnb.llama import load_backends   # a dispatch build: its CPU variant for this CPU (None on a one-backend build)
variant = load_backends()
extra = sys.argv[2] == '1'
if not extra:                                   # what the issue's reporter did: no extra (AMX / repack) buffer types
    _orig = llama_cpp.llama_model_default_params
    def _params():
        p = _orig(); p.use_extra_bufts = False; return p
    llama_cpp.llama_model_default_params = _params
    import llama_cpp.llama as L; L.llama_cpp.llama_model_default_params = _params
import numpy as np
ids_list, n_tokens, eos = json.loads(open(sys.argv[3]).read())
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=512, verbose=True, n_threads=os.cpu_count(), seed=0)
def greedy(ids):
    llm.reset(); llm.eval(ids); out = []
    for _ in range(n_tokens):
        t = int(np.argmax(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))))
        out.append(t)
        if t == eos: break
        llm.eval([t])
    return out
greedy(ids_list[0][:8])
t = time.perf_counter(); outs = [greedy(i) for i in ids_list]; dt = time.perf_counter() - t
print('RESULT ' + json.dumps({'tokens_per_s': round(sum(map(len, outs)) / dt, 1), 'outputs': outs, 'cpu_variant': variant,
                              'system_info': llama_cpp.llama_print_system_info().decode().strip()}), flush=True)
'''

def unpack(wheel:Path, d:Path) -> Path:
    import shutil
    shutil.rmtree(d, ignore_errors=True); zipfile.ZipFile(wheel).extractall(d)
    return d

def run_child(target:Path, gguf:Path, extra:bool, data:Path) -> dict:
    env = {**os.environ, 'PYTHONPATH': str(target), 'PYTHONFAULTHANDLER': '1'}
    r = subprocess.run([sys.executable, '-c', CHILD, str(gguf), '1' if extra else '0', str(data)], capture_output=True, text=True, env=env)
    log = r.stderr + r.stdout
    bufs = {k: float(v) for k, v in re.findall(r'load_tensors:\s+(\S+) model buffer size =\s+([\d.]+) MiB', log)}
    line = next((l for l in r.stdout.splitlines() if l.startswith('RESULT ')), None)
    if r.returncode or not line:
        return {'ok': False, 'exit': r.returncode, 'signal': -r.returncode if r.returncode < 0 else None, 'buffers_mib': bufs,
                'crash_in': [l.strip() for l in log.splitlines() if 'File "' in l][-3:]}
    return {'ok': True, 'buffers_mib': bufs, **json.loads(line[7:])}

def cached_wheel() -> Path|None:
    "The portable wheel `make install` built and cached (RLNB_WHEELS, default ~/.cache/rlnb/wheels), if any."
    root = Path(os.environ.get('RLNB_WHEELS') or Path.home()/'.cache'/'rlnb'/'wheels')
    return next(iter(sorted(root.glob('llama-cpp-python-*/llama_cpp_python-*.whl'), key=lambda p: p.stat().st_mtime, reverse=True)), None)

def main(wheels:dict, smoke:bool=False, save:str|None=None):
    "`wheels`: build name -> wheel; 'portable' is the reference the others' tokens are compared with."
    global QUANTS, REPEATS
    from rlnb.core import cache_dir
    from rlnb.hardware import cpu_line
    from rlnb.assets import chitchat_prompts
    from rlnb.export import export_model
    from rlnb.parity import prompt_ids
    from rlnb.llama import native_instructions
    from rlnb.checkpoints import load_checkpoint
    if smoke:
        from _smoke import smoke_home, skip
        home = smoke_home(); QUANTS, REPEATS = ('q8_0',), 1
    model, n_prompts, n_tokens = ('tiny', 2, 4) if smoke else ('smollm2', 16, 32)
    print(cpu_line(), flush=True)
    gdir = home/'gguf' if smoke else cache_dir()/'bench-gguf'
    paths = {q: gdir/f'{model}-{q}.gguf' for q in QUANTS}
    if not all(p.exists() for p in paths.values()):
        export_model(model, quantization=[q for q in QUANTS if q != 'f16'], output_dir=gdir, model_name=model, parity=False, overwrite=True)
    _, tok = load_checkpoint(model)
    data = Path(tempfile.mkdtemp())/'ids.json'
    data.write_text(json.dumps([[prompt_ids(tok, p) for p in chitchat_prompts()[:n_prompts]], n_tokens, tok.eos_token_id]))
    root = Path(tempfile.gettempdir())/'rlnb-llama-builds'
    if smoke:   # no second build to compare with: the one wheel there is, or the installed package
        if portable := (wheels.get('portable') or cached_wheel()):
            print('smoke: the one build is', portable, flush=True); builds = {'portable': unpack(Path(portable), root/'portable')}
        else:
            import llama_cpp
            skip('unpacking a wheel: no cached llama-cpp-python wheel, so the installed package runs instead')
            builds = {'portable': Path(llama_cpp.__file__).parent.parent}
    else: builds = {name: unpack(Path(w), root/name) for name, w in wheels.items()}
    res = {'cpu': cpu_line(), 'builds': {}, 'runs': [], 'repeats': REPEATS, 'order': 'the builds alternate, the order reversed each round'}
    for name, d in builds.items():
        files = [*(d/'llama_cpp'/'lib').glob('libggml*.so*'), *(d/'bin').glob('libggml-cpu-*.so')]   # bin: a dispatch build's
        libs = {p.name: native_instructions(p) for p in sorted(files)                                # CPU variants
                if not p.is_symlink() and re.search(r'\.so\.\d+\.\d+|libggml-cpu-\w+\.so$', p.name)}
        res['builds'][name] = {'wheel': str(wheels.get(name)), 'libs': libs}
        print(name, libs, flush=True)
    import statistics
    for q in QUANTS:
        for extra in (True, False):
            reps, order = {name: [] for name in builds}, list(builds)
            for i in range(REPEATS):   # the builds take turns, the order reversed each round: neither always runs first
                for name in (order if i % 2 == 0 else order[::-1]):
                    if reps[name] and not reps[name][-1]['ok']: continue   # a crash is not retried
                    t = time.perf_counter(); r = run_child(builds[name]/'', paths[q], extra, data)
                    r['seconds'] = round(time.perf_counter() - t, 1); reps[name].append(r)
            for name in builds:   # the median is reported (one run varies by ~10 % here)
                xs = reps[name]
                r = dict(next((x for x in xs if not x['ok']), xs[0]), build=name, quant=q, extra_bufts=extra, runs=len(xs))
                if all(x['ok'] for x in xs):
                    r.update(tokens_per_s=statistics.median(x['tokens_per_s'] for x in xs),
                             tokens_per_s_all=[x['tokens_per_s'] for x in xs])
                res['runs'].append(r)
                print(json.dumps({k: v for k, v in r.items() if k not in ('outputs', 'system_info')}), flush=True)
    ref = {(r['quant'], r['extra_bufts']): r['outputs'] for r in res['runs'] if r['build'] == 'portable' and r['ok']}
    for r in res['runs']:
        if r['ok'] and r['build'] != 'portable': r['same_tokens_as_portable'] = r['outputs'] == ref.get((r['quant'], r['extra_bufts']))
    from datetime import datetime, timezone
    res['date'] = datetime.now(timezone.utc).isoformat(timespec='seconds')
    out = (home if smoke else Path(__file__).parent)/'results'/(save or 'llama_portable.json'); out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({**res, 'runs': [{k: v for k, v in r.items() if k != 'outputs'} for r in res['runs']]}, indent=1))
    print(f"\n{'quant':7s} {'build':9s} {'extra bufts':11s} {'result':24s} {'tokens/s':>8s}  CPU variant  buffers (MiB)")
    for r in res['runs']:
        what = 'ok' + (' (same tokens)' if r.get('same_tokens_as_portable') else '') if r['ok'] else f"CRASH signal {r['signal']}"
        print(f"{r['quant']:7s} {r['build']:9s} {str(r['extra_bufts']):11s} {what:24s} {r.get('tokens_per_s', 0):8.1f}  "
              f"{str(r.get('cpu_variant')):11s}  {r['buffers_mib']}")

    if smoke: assert all(r['ok'] for r in res['runs']), 'a llama.cpp child failed'

if __name__ == '__main__':
    a = sys.argv[1:]
    save = a[a.index('--save') + 1] if '--save' in a else None
    if save: del a[a.index('--save'):a.index('--save') + 2]
    if a == ['--smoke']: main({}, smoke=True)
    elif a[:1] == ['--dispatch']: REPEATS = 4; main({'dispatch': a[1], 'portable': a[2]}, save=save)   # 2 rounds each order
    else: main({'native': a[0], 'portable': a[1]}, save=save)
