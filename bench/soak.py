"""A soak of a real `rlnb_serve_api`: mixed traffic for `--minutes`, the server's memory sampled as it goes.

    .venv/bin/python bench/soak.py                  # 30 minutes; writes bench/results/soak.json
    .venv/bin/python bench/soak.py --minutes 5      # a shorter one (the result says how long it ran)
    .venv/bin/python bench/soak.py --smoke          # 40 s, results to a temporary folder (CI's short form)

The server runs on a fresh SQLite store under a temporary RLNB_HOME, with two versions of a tiny policy exported to
real GGUFs (v1 deployed). Client threads, all through HTTP with a token, at once: feedback POSTs (single and batch),
chat completions (plain and streamed), status and readiness reads, a deploy or rollback between v1 and v2 every
`--deploy-s` seconds, and a tiny DPO training job started whenever none is running. The server process's RSS, threads
and open files are sampled every `--sample-s` seconds. The result holds every request's count and error count by kind,
the samples, and the RSS growth per minute over the second half (after warm-up): bounded growth is the claim checked,
`bounded` when that slope is at most `BOUND` MiB/min (fixed before the runs it judges).
A request's error is any answer but the one its kind expects (a 429 for a training job while one runs is expected)."""
import argparse, json, os, random, secrets, socket, statistics, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.request
from collections import Counter
from pathlib import Path

TOKEN = secrets.token_urlsafe(24)
KINDS = ('feedback', 'batch', 'chat', 'status', 'deploy', 'train')
BOUND = 2.0   # MiB/min: the most the server's RSS may grow over the second half for the soak to call it bounded
AGENT = 'soak'

def call(port, method, path, body=None, timeout=60):
    "`(status, parsed body or text)` of one request with the token."
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f'http://127.0.0.1:{port}{path}', data, method=method,
                                 headers={'Content-Type': 'application/json', 'Authorization': f'Bearer {TOKEN}'})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r: raw, code = r.read(), r.status
    except urllib.error.HTTPError as e: raw, code = e.read(), e.code
    try: return code, json.loads(raw)
    except ValueError: return code, raw.decode(errors='replace')

def proc_sample(pid:int) -> dict:
    "RSS (MiB), threads and open files of process `pid`, from /proc."
    st = dict(l.split(':', 1) for l in Path(f'/proc/{pid}/status').read_text().splitlines() if ':' in l)
    return {'rss_mb': round(int(st['VmRSS'].split()[0]) / 1024, 1), 'threads': int(st['Threads']),
            'open_files': len(os.listdir(f'/proc/{pid}/fd'))}

def setup(home:Path) -> Path:
    "A store with feedback to train on and two tiny versions with real GGUFs, v1 deployed; its path."
    from rlnb.assets import tiny_policy
    from rlnb.export import convert_to_gguf
    from rlnb.feedback import Feedback
    from rlnb.feedback_store import FeedbackStore
    from rlnb.registry import Registry
    m, tok = tiny_policy(); m.save_pretrained(home/'tiny'); tok.save_pretrained(home/'tiny')
    g = convert_to_gguf(home/'tiny', home/'tiny.gguf', 'f16')
    db = home/'soak.db'; st = FeedbackStore(db)
    st.add_many([Feedback(AGENT, 'rating', f'Tell me about topic {p}?', f'answer {k} on {p}' + ' more' * k,
                          rating=1 + (k + p) % 5) for p in range(6) for k in range(8)])
    reg = Registry(st)
    reg.register(AGENT, home/'tiny', 'base', gguf_paths={'f16': str(g)}); reg.promote(AGENT, 1, 'the soak starts')
    reg.register(AGENT, home/'tiny', 'dpo', parent_version=1, gguf_paths={'f16': str(g)}, metrics={'gate_passed': True})
    return db

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--minutes', type=float, default=30); ap.add_argument('--sample-s', type=float, default=60)
    ap.add_argument('--deploy-s', type=float, default=30)
    ap.add_argument('--smoke', action='store_true', help='40 s, samples every 5 s, results to a temporary folder')
    ap.add_argument('--only', nargs='+', choices=KINDS, help='these kinds of traffic alone (to find what grows); the '
                    'result goes to a temporary folder, never bench/results/')
    a = ap.parse_args()
    if a.smoke:
        from _smoke import smoke_home
        home = smoke_home(); results = home/'results'
        a.minutes, a.sample_s, a.deploy_s = 40 / 60, 5, 10
    else:
        home = Path(tempfile.mkdtemp(prefix='rlnb-soak-'))
        results = home/'results' if a.only else Path(__file__).parent/'results'
        (home/'models').mkdir()
        cache = (Path(__file__).resolve().parent.parent/'models'/'.cache'); cache.mkdir(parents=True, exist_ok=True)
        (home/'models'/'.cache').symlink_to(cache, target_is_directory=True)
        os.environ['RLNB_HOME'] = str(home)
    from rlnb.core import utc_now
    from rlnb.hardware import cpu_line
    db = setup(home)
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    env = {**os.environ, 'RLNB_API_TOKEN': TOKEN, 'RLNB_API_RATE': '0', 'RLNB_API_CONCURRENCY': '0'}
    log = open(home/'server.log', 'w')
    srv = subprocess.Popen([sys.executable, '-c', 'import sys; from rlnb.api import serve_api_cli; serve_api_cli(sys.argv[1:])',
                            '--port', str(port), '--db', str(db)], env=env, stdout=log, stderr=subprocess.STDOUT)
    counts, errors, samples, examples = Counter(), Counter(), [], {}
    stop, lock = threading.Event(), threading.Lock()
    def note(kind, ok, what=None):
        with lock:
            counts[kind] += 1
            if not ok: errors[kind] += 1; examples.setdefault(kind, str(what)[:300])
    def loop(kind, fn, pause):
        rng = random.Random(kind)
        while not stop.is_set():
            try: ok, what = fn(rng)
            except Exception as e: ok, what = False, repr(e)
            note(kind, ok, what)
            stop.wait(pause)
    def feedback(rng):
        c, r = call(port, 'POST', f'/api/policies/feedback/{AGENT}',
                    {'prompt': f'question {rng.randrange(10**6)}?', 'response': 'an answer', 'rating': rng.randint(1, 5)})
        return c == 201, (c, r)
    def batch(rng):
        rows = [{'prompt': f'batch question {rng.randrange(10**9)}?', 'response': 'a', 'score': rng.random()} for _ in range(50)]
        c, r = call(port, 'POST', f'/api/policies/feedback/{AGENT}/batch', rows)
        return c == 201 and r['added'] == 50, (c, r)
    def chat(rng):
        body = {'model': AGENT, 'messages': [{'role': 'user', 'content': 'Hello there!'}], 'max_tokens': 8,
                'stream': rng.random() < 0.5}
        c, r = call(port, 'POST', '/v1/chat/completions', body)
        return c == 200 and ('[DONE]' in r if body['stream'] else bool(r['choices'])), (c, str(r)[:200])
    def status(rng):
        c1, _ = call(port, 'GET', f'/api/policies/{AGENT}/status'); c2, r2 = call(port, 'GET', '/ready')
        return c1 == 200 and c2 == 200, (c1, c2, r2)
    def deploy(rng):
        cur = call(port, 'GET', f'/api/policies/{AGENT}')[1]['deployed']
        c, r = call(port, 'POST', f'/api/policies/{AGENT}/deploy', {'version': 'v2' if cur == 'v1' else 'v1',
                                                                    'reason': 'the soak switches'})
        return c == 200, (c, r)
    def train(rng):
        c, r = call(port, 'POST', f'/api/policies/train_policy/{AGENT}',
                    {'maxSteps': 4, 'learningRate': 1e-3, 'baseModel': 'tiny', 'batchSize': 2, 'algorithm': 'dpo'})
        return c in (202, 429), (c, r)                 # 429: the last one still runs
    t_start = time.monotonic()
    try:
        for _ in range(600):
            try:
                if call(port, 'GET', '/ready', timeout=2)[0] == 200: break
            except OSError: pass
            time.sleep(0.1)
        else: raise SystemExit('the server did not become ready:\n' + (home/'server.log').read_text()[-3000:])
        workers = [('feedback', feedback, 0.02), ('batch', batch, 1.0), ('chat', chat, 0.2), ('status', status, 0.5),
                   ('deploy', deploy, a.deploy_s), ('train', train, 20.0)]
        workers = [w for w in workers if not a.only or w[0] in a.only]
        ths = [threading.Thread(target=loop, args=w, daemon=True) for w in workers]
        for t in ths: t.start()
        end = t_start + a.minutes * 60
        while (now := time.monotonic()) < end:
            samples.append({'s': round(now - t_start, 1), **proc_sample(srv.pid)})
            print(f"{samples[-1]} requests {sum(counts.values())}, errors {sum(errors.values())}", flush=True)
            stop.wait(min(a.sample_s, max(0.0, end - now)))
        samples.append({'s': round(time.monotonic() - t_start, 1), **proc_sample(srv.pid)})
        stop.set()
        for t in ths: t.join(120)
        jobs = call(port, 'GET', f'/api/policies/{AGENT}/status')[1]['jobs']
    finally:
        stop.set(); srv.terminate(); srv.wait(30)
    half = [x for x in samples if x['s'] >= samples[-1]['s'] / 2]
    slope = statistics.linear_regression([x['s'] / 60 for x in half], [x['rss_mb'] for x in half]).slope if len(half) >= 2 else 0.0
    res = {'cpu': cpu_line(), 'date': utc_now(), 'minutes': round(samples[-1]['s'] / 60, 2), 'sample_s': a.sample_s,
           'requests': dict(counts), 'errors': dict(errors), 'error_examples': examples,
           'rss_start_mb': samples[0]['rss_mb'], 'rss_end_mb': samples[-1]['rss_mb'],
           'rss_max_mb': max(x['rss_mb'] for x in samples), 'rss_growth_mb_per_min_second_half': round(slope, 2),
           'bound_mb_per_min': BOUND, 'bounded': slope <= BOUND,
           'threads_end': samples[-1]['threads'], 'open_files_end': samples[-1]['open_files'],
           'jobs_seen': [{k: j[k] for k in ('status', 'message')} for j in jobs], 'samples': samples}
    res['only'] = a.only
    out = results/'soak.json'; out.parent.mkdir(exist_ok=True); out.write_text(json.dumps(res, indent=1))
    print(json.dumps({k: v for k, v in res.items() if k != 'samples'}, indent=1))
    assert not errors, (dict(errors), examples)
    assert all(counts[k] for k in (a.only or KINDS)), counts

if __name__ == '__main__': main()
