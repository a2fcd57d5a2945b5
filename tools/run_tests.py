"""Run the notebooks' tests the way `nbdev_test` does (same `test_nb`, same flags from settings.ini),
one notebook at a time, with a timing per notebook and the closing line CI reads: `N passed, N failed`."""
import argparse, os, sys, time
from pathlib import Path

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--flags', default='', help='space separated test flags to run (e.g. "slow postgres")')
    ap.add_argument('--path', default=None, help='a notebook or glob (default: every notebook in nbs/)')
    args = ap.parse_args()
    from nbdev.config import get_config
    from nbdev.test import test_nb
    from nbdev.doclinks import nbglob
    cfg = get_config()
    skip, force = cfg.tst_flags.split(), args.flags.split()
    files = sorted(f.absolute() for f in nbglob(args.path, as_path=True) if not f.name.startswith('_'))
    results, t0 = [], time.time()
    os.chdir(cfg.nbs_path)
    for f in files:
        ok, secs = test_nb(f, skip_flags=skip, force_flags=force, basepath=cfg.config_path)
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {f.name:<28} {secs:7.1f} s", flush=True)
    n_ok = sum(results)
    print(f"notebooks tested with flags [{args.flags}] in {time.time()-t0:.0f} s")
    print(f"{n_ok} passed, {len(results)-n_ok} failed")
    sys.exit(0 if n_ok == len(results) else 1)

if __name__ == '__main__': main()
