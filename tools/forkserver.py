"""A zygote for the test runners: import the heavy libraries once, then fork a child per command as if `python` had
been started afresh with it (tools/run_tests.py runs each notebook this way, tools/bench_smoke.py each benchmark).

A process of this project spends seconds of CPU importing torch, transformers, peft, TRL and datasets before its
first line of work; the fast suite starts dozens of them on two cores. Each child gets what a fresh process would
have: its own session (so a time limit kills its whole group), the environment and working folder asked for,
`sys.argv` and `sys.path[0]` of the script, a reseeded numpy, faulthandler when PYTHONFAULTHANDLER is set, the
script run as `__main__`, atexit handlers at the end, and its exit code or signal reported back. The preloaded objects
are frozen out of the garbage collector (`gc.freeze`): every `Trainer.train` ends in a full collection (accelerate's
`free_memory`), and over torch's and transformers' millions of objects that was most of a short training's time. Nothing of rlnb
is imported before the fork, so RLNB_HOME and the like are each child's own; thread counts are read when torch is
imported, so the zygote is started with the children's OMP_NUM_THREADS and MKL_NUM_THREADS.

    z = Zygote(env)                                   # starts `python tools/forkserver.py FD FD`; raises if it cannot
    pid, wait = z.start(['bench/x.py', '--smoke'], env, cwd, log)   # log: the child's stdout and stderr
    rc = wait(timeout)                                # exit code (-N: killed by signal N); TimeoutError after timeout
    z.close()
"""
import json, os, queue, signal, subprocess, sys, threading, time

PRELOAD = ('torch', 'transformers', 'transformers.modeling_utils', 'transformers.trainer', 'peft',
           'trl.trainer.dpo_trainer', 'datasets', 'IPython', 'execnb.shell', 'nbdev.test', 'sqlalchemy')

def serve(req_fd:int, resp_fd:int, preload=PRELOAD) -> None:
    "Zygote side: import `preload`, then fork a child per request line (JSON) and report its pid and exit code."
    import importlib, select
    for m in preload:
        try: importlib.import_module(m)
        except Exception as e: print(f'forkserver: could not preload {m}: {e}', file=sys.stderr)
    import gc
    gc.collect(); gc.freeze()   # the preloaded objects live as long as the process: a child's collections skip them
    send = lambda **d: _write_all(resp_fd, (json.dumps(d) + '\n').encode())
    send(ready=True)
    kids, buf, eof = {}, b'', False
    while not eof or kids:
        if not eof and select.select([req_fd], [], [], 0.05)[0]:
            data = os.read(req_fd, 1 << 16); eof = not data; buf += data
            while b'\n' in buf:
                line, buf, req = *buf.split(b'\n', 1), None
                try:
                    req = json.loads(line)
                    sys.stdout.flush(); sys.stderr.flush()   # nothing of the zygote's buffers is copied into the child
                    pid = os.fork()
                except Exception as e:                       # a bad line, or no fork (EAGAIN, ENOMEM): say so, go on
                    send(id=req.get('id') if isinstance(req, dict) else None, error=f'{type(e).__name__}: {e}')
                    continue
                if pid == 0: _child(req, req_fd, resp_fd)   # never returns
                kids[pid] = req['id']; send(id=req['id'], pid=pid)
        elif eof: time.sleep(0.05)
        while kids:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0: break
            if pid in kids: send(id=kids.pop(pid), rc=os.waitstatus_to_exitcode(status))

def _write_all(fd:int, data:bytes) -> None:
    while data: data = data[os.write(fd, data):]

def _child(req:dict, *fds) -> None:
    "A forked child: its own session, the request's environment, folder and argv, the script as __main__, then exit."
    import atexit, faulthandler, io, runpy, threading, traceback
    rc = 1
    try:
        os.setsid()
        for fd in fds: os.close(fd)
        os.environ.clear(); os.environ.update(req['env']); os.chdir(req['cwd'])
        if req.get('log'):   # stdout and stderr to this file
            fd = os.open(req['log'], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644); os.dup2(fd, 1); os.dup2(fd, 2); os.close(fd)
        if os.environ.get('PYTHONUNBUFFERED'):   # unbuffered as `python -u`: a script killed on its time limit loses nothing
            for name, fd in (('stdout', 1), ('stderr', 2)):
                old = getattr(sys, name)
                setattr(sys, name, io.TextIOWrapper(open(fd, 'wb', buffering=0, closefd=False), encoding=old.encoding,
                                                    errors=old.errors, write_through=True))
        if 'tempfile' in sys.modules: sys.modules['tempfile'].tempdir = None   # TMPDIR is read again
        if os.environ.get('PYTHONFAULTHANDLER'): faulthandler.enable()
        if 'numpy' in sys.modules: sys.modules['numpy'].random.seed()   # unseeded draws as in a fresh process
        script = os.path.abspath(req['argv'][0])
        sys.argv, sys.path[0] = [script] + req['argv'][1:], os.path.dirname(script)
        runpy.run_path(script, run_name='__main__'); rc = 0
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int): print(e.code, file=sys.stderr)   # sys.exit('why')
    except BaseException: traceback.print_exc()
    finally:
        try:   # what a normal interpreter exit runs: wait for non-daemon threads, then atexit (finalizers, cleanups)
            threading._shutdown(); atexit._run_exitfuncs()
            import gc; gc.collect()
        except BaseException: traceback.print_exc()
        try: sys.stdout.flush(); sys.stderr.flush()
        except BaseException: pass
        os._exit(rc)

class Zygote:
    "Runner side: start the zygote, ask it for a child per command, wait for the child's exit code (thread-safe)."
    def __init__(self, env:dict, preload=None):   # preload: modules to import first (default PRELOAD)
        r1, w1 = os.pipe(); r2, w2 = os.pipe()
        self.p = subprocess.Popen([sys.executable, __file__, str(r1), str(w2)] + ([','.join(preload)] if preload is not None else []),
                                  pass_fds=(r1, w2), env=env)
        os.close(r1); os.close(w2)
        self.w, self.r, self.lock, self.q, self.n = w1, os.fdopen(r2, 'rb'), threading.Lock(), {}, 0
        if not json.loads(self.r.readline() or b'{}').get('ready'): raise RuntimeError('the zygote did not start')
        threading.Thread(target=self._read, daemon=True).start()
    dead = False
    def _read(self):
        for line in self.r:
            m = json.loads(line)
            if m.get('id') in self.q: self.q[m['id']].put(m)
        self.dead = True
        for q in list(self.q.values()): q.put({'rc': None, 'gone': True})   # the zygote is gone
    def start(self, argv:list, env:dict, cwd, log=None) -> tuple:
        ("Fork a child running `argv` (a script and its arguments; output to the file `log`, else the zygote's); "
         "`(pid, wait)`, `wait(timeout)` -> exit code.")
        with self.lock:
            if self.dead: raise RuntimeError('the zygote is gone')
            self.n += 1; i = self.n; q = self.q[i] = queue.Queue()
            req = dict(id=i, argv=[str(a) for a in argv], env=env, cwd=str(cwd), log=str(log) if log else None)
            try: _write_all(self.w, (json.dumps(req) + '\n').encode())
            except OSError as e: raise RuntimeError(f'the zygote is gone ({e})') from None
        m = q.get()
        if 'pid' not in m: raise RuntimeError(m.get('error') or 'the zygote is gone')
        def wait(timeout=None):
            "The child's exit code (-N: signal N); None if the zygote died first (the child may still run)."
            if self.dead and q.empty(): return None
            try: return q.get(timeout=timeout)['rc']
            except queue.Empty: raise TimeoutError from None
        return m['pid'], wait
    def close(self):
        try: os.close(self.w)
        except OSError: pass
        self.p.wait()

def run_limited(argv:list, env:dict, cwd, timeout:float, zygote=None, log=None, kill_group_after:bool=False) -> tuple:
    ("Run `argv` (a script and its arguments) in a session of its own: forked from `zygote` where one is given (a "
     "fresh python if it cannot), output to the file `log` (else this process's). After `timeout` s, or when its zygote "
     "dies under it, its whole group is killed; with `kill_group_after` also once it has exited (servers it left). "
     "`(exit code or None if its zygote died, timed out?)`.")
    pid = None
    if zygote:
        try: pid, wait = zygote.start(argv, env, cwd, log)   # a fork of the zygote, as if started afresh
        except RuntimeError as e: print(f'{os.path.basename(str(argv[0]))}: {e}; a fresh python instead', flush=True)
    if pid is None:
        out = open(log, 'ab') if log else None
        try: p = subprocess.Popen([sys.executable] + [str(a) for a in argv], cwd=cwd, env=env, stdout=out,
                                  stderr=subprocess.STDOUT if out else None, start_new_session=True)
        finally:
            if out: out.close()
        pid, wait = p.pid, p.wait
    timed_out = False
    try: rc = wait(timeout)
    except (subprocess.TimeoutExpired, TimeoutError): rc, timed_out = None, True
    if rc is None or kill_group_after:
        try: os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError: pass
        if timed_out: rc = wait()
    return rc, timed_out

def zygote_or_none(env:dict, why:str='') -> 'Zygote|None':
    "A Zygote, or None (with a line saying so) where RLNB_TEST_FORK=0, there is no fork, or it cannot start."
    if os.environ.get('RLNB_TEST_FORK', '1') == '0' or not hasattr(os, 'fork'): return None
    try: return Zygote(env)
    except Exception as e: print(f'the zygote did not start ({e}): each {why or "child"} starts a fresh python', flush=True)

if __name__ == '__main__':
    serve(int(sys.argv[1]), int(sys.argv[2]), *([[m for m in sys.argv[3].split(',') if m]] if len(sys.argv) > 3 else []))
