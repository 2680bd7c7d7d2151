"""A backfill of many projects: the embedded default against K Celery workers that share no disk.

    python bench/backfill.py PATH... [--workers 0,1,2] [--json FILE]

Each deployment analyses every PATH in turn, from nothing, one `gd-assets analyze` each, as a user
with a back catalogue would. `0` is the embedded default (sqlite instance, DuckDB file, no broker);
`K` >= 1 is the "Many machines" recipe on this machine: PostgreSQL (`gd-assets db start`), Redis
(`gd-assets broker start`), moto's S3 server, the corpus published once, and K `gd-assets worker`
processes, each with its own home in its own folder, serving `analyze --workers K` (K = 1: `--workers 2`,
whose two queued steps the one worker serves in turn).

Printed per deployment: fragments a second over the whole backfill, time to the first verdict,
whether every project's verdict and fragments (signal, migration flag, rationale) equal the
embedded default's, and for the workers: each worker's peak memory (main and pool process), the
CPU seconds the workers spent a fragment, and per fragment step (a batch of at most 1,024
fragments) the PostgreSQL transactions (instance and DuckLake catalog, from `pg_stat_database`) and
the S3 requests (moto's request log) of the whole deployment: the round trips a step costs on a
network. The corpus comes from GD_ASSETS_CORPUS_HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
BUCKET = "gd-bench"
REQUEST = re.compile(r'"(GET|PUT|POST|HEAD|DELETE) ')


def cli(env: dict, *args: str, timeout: int = 3600) -> str:
    done = subprocess.run([sys.executable, "-m", "gd_assets.cli", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, check=False)
    if done.returncode:
        raise SystemExit(f"gd-assets {' '.join(args)} failed: {done.stderr[-3000:]}")
    return done.stdout


def facts(doc: dict) -> tuple:
    """What must be equal between deployments: the verdict and each fragment's judgement."""
    return doc["verdict"], sorted((f["path"], f["start_line"], f["signal"], f["migration_needed"], f["rationale"])
                                  for f in doc["fragments"])


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GD_ASSETS_", "AWS_", "DAGSTER_")) or k == "GD_ASSETS_CORPUS_HOME"}
    return {**env, "GD_ASSETS_HOME": str(home)}


def backfill(env: dict, paths: list[Path], extra: list[str]) -> dict:
    """Analyse every path in turn; per project its seconds, fragments and facts."""
    start, projects = time.perf_counter(), []
    for i, path in enumerate(paths):
        t = time.perf_counter()
        doc = json.loads(cli(env, "analyze", str(path), "--project", f"p{i:02d}", "--json", *extra))
        projects.append({"path": str(path), "seconds": time.perf_counter() - t, "done_at": time.perf_counter() - start,
                         "fragments": len(doc["fragments"]), "facts": facts(doc)})
        print(f"  {i + 1}/{len(paths)} {path}: {len(doc['fragments'])} fragments in {projects[-1]['seconds']:.1f} s",
              flush=True)
    return {"seconds": time.perf_counter() - start, "projects": projects}


class Watch(threading.Thread):
    """Polls the workers' process trees: peak resident memory per process role, last CPU seconds per pid."""

    def __init__(self, procs: list[subprocess.Popen]):
        super().__init__(daemon=True)
        self.procs, self.peak, self.cpu, self.stop = procs, {}, {}, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            for n, proc in enumerate(self.procs):
                try:
                    main = psutil.Process(proc.pid)
                    family = [("main", main)] + [("pool", c) for c in main.children(recursive=True)]
                    for role, p in family:
                        key = (f"w{n + 1}", role)
                        self.peak[key] = max(self.peak.get(key, 0), p.memory_info().rss)
                        times = p.cpu_times()
                        self.cpu[p.pid] = times.user + times.system
                except psutil.Error:
                    continue


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_transactions(url: str) -> int:
    import psycopg2

    con = psycopg2.connect(url)
    try:
        with con.cursor() as cur:
            cur.execute("SELECT pg_stat_force_next_flush()")
            cur.execute("SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database")
            return int(cur.fetchone()[0])
    finally:
        con.close()


def fragment_steps(head: Path) -> int:
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(head / "dagster"))
    return sum("gd-assets/worker" in run.tags for run in instance.get_runs())


def with_workers(k: int, paths: list[Path], root: Path) -> dict:
    import boto3

    head_home = root / f"head-{k}"
    head_home.mkdir(mode=0o755)
    head = base_env(head_home)
    url = json.loads(cli(head, "db", "start", "--json"))["url"]
    port = free_port()
    moto_log = root / f"moto-{k}.log"
    moto = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=moto_log.open("w"))
    s3 = f"http://127.0.0.1:{port}"
    workers: list[subprocess.Popen] = []
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{s3}/moto-api/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id="bench",
                     aws_secret_access_key="bench").create_bucket(Bucket=BUCKET)
        shared = {"GD_ASSETS_POSTGRES_URL": url, "GD_ASSETS_STORE": "ducklake",
                  "GD_ASSETS_OBJECT_STORE": f"s3://{BUCKET}/deployment", "AWS_ENDPOINT_URL": s3,
                  "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"}
        head.update(shared)
        shared["GD_ASSETS_BROKER_URL"] = head["GD_ASSETS_BROKER_URL"] = json.loads(
            cli(head, "broker", "start", "--json"))["broker"]
        cli(head, "corpus", "publish")
        for n in range(k):
            own = root / f"worker-{k}-{n + 1}"
            own.mkdir()
            env = {**base_env(own), **shared}
            env.pop("GD_ASSETS_CORPUS_HOME", None)   # a worker fetches the published corpus
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "gd_assets.cli", "worker", "--name", f"w{n + 1}@%h"], cwd=own, env=env,
                stdout=(own / "worker.log").open("w"), stderr=subprocess.STDOUT, start_new_session=True))
        watch = Watch(workers)
        watch.start()
        transactions, requests = pg_transactions(url), 0
        # `--workers 1` runs in the asking process; with one worker, two steps are queued at once and
        # the worker serves them in turn
        result = backfill(head, paths, ["--workers", str(max(k, 2))])
        time.sleep(11)   # idle backends report their statistics within 10 s
        transactions = pg_transactions(url) - transactions
        requests = sum(bool(REQUEST.search(line)) for line in moto_log.read_text(errors="replace").splitlines())
        watch.stop.set()
        watch.join()
        result.update(peak_rss={f"{w} {role}": rss for (w, role), rss in sorted(watch.peak.items())},
                      worker_cpu_s=sum(watch.cpu.values()), pg_transactions=transactions, s3_requests=requests,
                      steps=fragment_steps(head_home))
        return result
    finally:
        for proc in workers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in workers:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        if "GD_ASSETS_BROKER_URL" in head:
            subprocess.run([sys.executable, "-m", "gd_assets.cli", "broker", "stop"], env=head, cwd=REPO,
                           capture_output=True, check=False)
        subprocess.run([sys.executable, "-m", "gd_assets.cli", "db", "stop"], env=head, cwd=REPO,
                       capture_output=True, check=False)
        moto.terminate()
        moto.wait(30)


def report(name: str, result: dict, reference: dict | None) -> None:
    frags = sum(p["fragments"] for p in result["projects"])
    first = result["projects"][0]
    line = (f"{name:<22} {len(result['projects'])} projects, {frags} fragments in {result['seconds']:.0f} s = "
            f"{frags / result['seconds']:.1f} fragments/s; first verdict {first['done_at']:.1f} s "
            f"({first['fragments']} fragments)")
    if reference is not None:
        same = sum(p["facts"] == r["facts"] for p, r in zip(result["projects"], reference["projects"]))
        line += f"; equal to the embedded default: {same}/{len(reference['projects'])} projects"
    print(line)
    if "steps" in result:
        steps = max(result["steps"], 1)
        print(f"{'':<22} worker CPU {result['worker_cpu_s']:.0f} s = {1000 * result['worker_cpu_s'] / frags:.2f} ms a "
              f"fragment; {result['steps']} fragment steps ({frags / steps:.0f} fragments each): "
              f"{result['pg_transactions'] / steps:.0f} PostgreSQL transactions and "
              f"{result['s3_requests'] / steps:.0f} S3 requests a step (whole deployment, head included)")
        print(f"{'':<22} peak memory: " + ", ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in result["peak_rss"].items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--workers", default="0,1,2", help="deployments: 0 = embedded default, K = K workers")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    if not os.environ.get("GD_ASSETS_CORPUS_HOME"):
        print("set GD_ASSETS_CORPUS_HOME to a built corpus home", file=sys.stderr)
        return 1
    kinds = [int(k) for k in args.workers.split(",")]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="gd-backfill-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)   # the PostgreSQL server's user enters the heads' homes
        for k in kinds:
            name = "embedded default" if k == 0 else f"{k} Celery worker{'s' * (k > 1)}"
            print(f"{name}:", flush=True)
            if k == 0:
                home = root / "default"
                results[name] = backfill(base_env(home), args.paths, [])
            else:
                results[name] = with_workers(k, args.paths, root)
    reference = results.get("embedded default")
    for name, result in results.items():
        report(name, result, reference if name != "embedded default" else None)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
