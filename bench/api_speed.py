"""Feedback ingestion speed of `rlnb_serve_api` on loopback: single-record POSTs (every record committed before its 201)
from 8 client threads, and the batch endpoint; SQLite (default) or PostgreSQL (`--db postgresql://...`).

    .venv/bin/python bench/api_speed.py                         # SQLite in a temporary folder
    eval "$(tools/pg.sh start)"; .venv/bin/python bench/api_speed.py --db "$DATABASE_URL"; tools/pg.sh stop
Goals (issue: registry and HTTP API): >= 500 requests/s single-record, >= 10,000 records/s through the batch endpoint.
Writes bench/results/api_speed_<backend>.json."""
import argparse, json, os, socket, subprocess, sys, tempfile, threading, time, urllib.request
from pathlib import Path

def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=60) as r: return r.status, json.loads(r.read())

def main():
    ap = argparse.ArgumentParser(); ap.add_argument('--db'); ap.add_argument('--threads', type=int, default=8)
    ap.add_argument('--per-thread', type=int, default=500); ap.add_argument('--batches', type=int, default=10); ap.add_argument('--batch-size', type=int, default=5000)
    a = ap.parse_args()
    from rlnb.core import cpu_line
    from rlnb.feedback import FeedbackStore
    d = tempfile.mkdtemp()
    db = a.db or str(Path(d)/'bench.db')
    backend = 'postgresql' if db.startswith('postgres') else 'sqlite'
    if backend == 'postgresql': FeedbackStore(db).delete(agent='bench'); FeedbackStore(db).delete(agent='benchb')
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    srv = subprocess.Popen([sys.executable, '-c', f'from rlnb.api import serve_api_cli; serve_api_cli(["--port", "{port}", "--db", {db!r}])'])
    base = f'http://127.0.0.1:{port}'
    try:
        for _ in range(200):
            try: urllib.request.urlopen(f'{base}/docs', timeout=1); break
            except OSError: time.sleep(0.1)
        post(f'{base}/api/policies/feedback/warm', {'prompt': 'p', 'response': 'r', 'label': True})
        lat, errors = [], []
        def burst(t):
            for i in range(a.per_thread):
                t0 = time.perf_counter()
                try: c, _ = post(f'{base}/api/policies/feedback/bench', {'prompt': f'thread {t} q {i}', 'response': 'an answer', 'score': 0.5}); assert c == 201
                except Exception as e: errors.append(repr(e))
                lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ths = [threading.Thread(target=burst, args=(t,)) for t in range(a.threads)]
        for t in ths: t.start()
        for t in ths: t.join()
        wall = time.perf_counter() - t0
        lat.sort(); n = len(lat)
        single = {'requests': n, 'seconds': round(wall, 2), 'requests_per_s': round(n / wall, 1), 'p50_ms': round(lat[n // 2] * 1e3, 2),
                  'p99_ms': round(lat[int(n * 0.99)] * 1e3, 2), 'errors': len(errors), 'stored': FeedbackStore(db).count(agent='bench')}
        print('single', json.dumps(single), flush=True)
        bt = []
        for b in range(a.batches):
            rows = [{'prompt': f'batch {b} q {i}', 'response': 'an answer', 'rating': 1 + i % 5} for i in range(a.batch_size)]
            t0 = time.perf_counter(); c, r = post(f'{base}/api/policies/feedback/benchb/batch', rows); bt.append(time.perf_counter() - t0)
            assert c == 201 and r['added'] == a.batch_size, r
        batch = {'batches': a.batches, 'batch_size': a.batch_size, 'records_per_s': round(a.batches * a.batch_size / sum(bt), 1),
                 'p50_batch_s': round(sorted(bt)[len(bt) // 2], 3), 'stored': FeedbackStore(db).count(agent='benchb')}
        print('batch', json.dumps(batch), flush=True)
    finally:
        srv.terminate(); srv.wait(10)
    res = {'cpu': cpu_line(), 'backend': backend, 'threads': a.threads, 'single': single, 'batch': batch}
    out = Path(__file__).parent/'results'/f'api_speed_{backend}.json'; out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=1)); print(json.dumps(res))

if __name__ == '__main__': main()
