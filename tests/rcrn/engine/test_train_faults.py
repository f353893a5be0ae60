"""Faults during training: runs killed with SIGKILL and resumed, refused resumes and
output folders, unreadable checkpoints, data roots holding other files.

The kill-and-resume runs are real ``rcrn train`` processes on a tiny synthetic dataset.
One helper process imports the toolkit once and forks a child per run (a fresh
interpreter costs ~10 s of imports here); a child that is to be killed sends itself
SIGKILL at a chosen point: right after the N-th optimizer update, just before or just
after the K-th ``last.pt`` is moved into place, or half-way through writing it.  The
run that is never killed is a child of the same helper, so every run starts alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcrn.cli import main
from rcrn.engine.trainer import CheckpointError, read_checkpoint, state_digest

ROOT = Path(__file__).resolve().parents[3]
STEPS = 20
TINY = ["data.scenes=10", "data.per_scene=2", "model.word_dim=8", "model.lstm_hidden=8",
        "model.joint=16", "model.hidden=16", "model.sim_dim=8", "model.vis_dim=8",
        "model.spatial_dim=4", "model.pair_dim=8", "model.classify_hidden=8",
        "model.word_dropout=0.2",  # the forward draws from torch's generator
        "region_encoder.channels=[4, 8, 8]", "train.batch_size=4", "train.log_every=3",
        "train.eval_every=8", "train.checkpoint_every=4", f"train.steps={STEPS}",
        "eval.batch_size=16"]

HELPER = textwrap.dedent("""
    import json, os, signal, sys, traceback
    import torch

    torch.set_num_threads(1)
    from rcrn.cli import build_parser, main

    build_parser()  # import every command module once, before forking
    jobs = json.loads(open(sys.argv[1]).read())
    results = []

    def child(job):
        fd = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        kind, _, n = (job.get("kill") or "none:0").partition(":")
        n = int(n)
        count = {"update": 0, "replace": 0, "save": 0}

        def die():
            sys.stdout.flush()
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)

        adam_step = torch.optim.Adam.step

        def step(self, *a, **k):
            out = adam_step(self, *a, **k)
            count["update"] += 1
            if kind == "update" and count["update"] == n:
                die()
            return out

        torch.optim.Adam.step = step
        replace = os.replace

        def patched_replace(src, dst, *a, **k):
            if os.path.basename(os.fspath(dst)) != "last.pt":
                return replace(src, dst, *a, **k)
            count["replace"] += 1
            if kind == "before_replace" and count["replace"] == n:
                die()
            replace(src, dst, *a, **k)
            if kind == "after_replace" and count["replace"] == n:
                die()

        os.replace = patched_replace
        save = torch.save

        def patched_save(obj, f, *a, **k):
            if isinstance(obj, dict) and "training" in obj:
                count["save"] += 1
                if kind == "partial" and count["save"] == n:
                    import io
                    buf = io.BytesIO()
                    save(obj, buf, *a, **k)
                    f.write(buf.getvalue()[: len(buf.getvalue()) // 2])
                    f.flush()
                    die()
            return save(obj, f, *a, **k)

        torch.save = patched_save
        try:
            rc = main(job["argv"])
        except BaseException:
            traceback.print_exc()
            rc = 70
        with open(job["log"] + ".updates", "w") as f:
            f.write(str(count["update"]))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(rc or 0))

    for job in jobs:
        if "copy" in job:
            import shutil
            shutil.copytree(*job["copy"])
            continue
        pid = os.fork()
        if pid == 0:
            child(job)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            results.append({"name": job["name"], "signal": os.WTERMSIG(status)})
        else:
            results.append({"name": job["name"], "code": os.WEXITSTATUS(status)})
    print(json.dumps(results))
""")


def _make_data(root: Path) -> Path:
    from benchmarks.synthetic import GeneratorConfig, generate_dataset

    generate_dataset(root, GeneratorConfig(scenes=10, seed=0, per_scene=2), progress=False)
    return root


#: (chain, extra overrides, kill points of its runs; the last run finishes)
CHAINS = {
    # batches of one image kept together (the DataLoader draws from torch's generator)
    "grouped": ([], ["update:6", "before_replace:2", "partial:1", "after_replace:1",
                     "update:3", "after_replace:2"]),
    # a seeded RandomSampler (the DataLoader's own generator)
    "sampler": (["train.group_by=null"], ["update:7", "update:9"]),
}
#: the step each resumed run of a chain starts from (the last checkpoint before its kill)
RESUMED_AT = {"grouped": [4, 8, 8, 12, 12, 20], "sampler": [4, 12]}
#: 9 training problems in batches of 4: 3 batches an epoch, so the checkpoints of steps 4,
#: 8, 16 and 20 are inside an epoch, that of step 12 at its end


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("faults")
    data = _make_data(base / "data")
    jobs: list[dict] = []
    argv = ["train", *TINY, f"data.root={data}"]
    for chain, (extra, kills) in CHAINS.items():
        jobs.append({"name": f"{chain}-ref", "log": str(base / f"{chain}-ref.log"),
                     "argv": [*argv, *extra, "--out", str(base / f"{chain}-ref")]})
        out = str(base / chain)
        for i, kill in enumerate([*kills, None]):
            jobs.append({"name": f"{chain}-{i}", "kill": kill,
                         "argv": [*argv, *extra, "--out", out] + (["--resume"] if i else []),
                         "log": str(base / f"{chain}-{i}.log")})
    # a finished run resumed with a longer schedule, then replaced by a new run
    jobs += [{"copy": [str(base / "grouped-ref"), str(base / "longer")]},
             {"name": "longer", "log": str(base / "longer.log"),
              "argv": [*argv, f"train.steps={STEPS + 3}", "--out", str(base / "longer"),
                       "--resume"]},
             {"copy": [str(base / "longer"), str(base / "replaced")]},
             {"name": "replaced", "log": str(base / "replaced.log"),
              "argv": [*argv, "train.steps=3", "--out", str(base / "replaced"),
                       "--overwrite"]}]
    (base / "jobs.json").write_text(json.dumps(jobs))
    (base / "helper.py").write_text(HELPER)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    proc = subprocess.run([sys.executable, str(base / "helper.py"), str(base / "jobs.json")],
                          capture_output=True, text=True, env=env, cwd=base, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = {r["name"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])}
    return base, results


def _log(base: Path, name: str) -> str:
    return (base / f"{name}.log").read_text(errors="replace")


def _records(path: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "time"}
            for line in path.read_text().splitlines()]


@pytest.mark.parametrize("chain", list(CHAINS))
def test_a_run_killed_anywhere_and_resumed_ends_with_the_same_weights(runs, chain):
    base, results = runs
    kills = CHAINS[chain][1]
    assert results[f"{chain}-ref"].get("code") == 0, _log(base, f"{chain}-ref")[-3000:]
    for i, kill in enumerate(kills):
        assert results[f"{chain}-{i}"].get("signal") == signal.SIGKILL, \
            (kill, results[f"{chain}-{i}"], _log(base, f"{chain}-{i}")[-3000:])
    last = f"{chain}-{len(kills)}"
    assert results[last].get("code") == 0, _log(base, last)[-3000:]
    # every resumed run started at the last checkpoint written before its kill, and
    # trained only the steps left (the work before the checkpoint was not repeated)
    for i, at in enumerate(RESUMED_AT[chain], 1):
        text = _log(base, f"{chain}-{i}")
        assert f"at step {at} of {STEPS}" in text, text[-2000:]
    assert (base / f"{last}.log.updates").read_text() == str(STEPS - RESUMED_AT[chain][-1])

    ref, got = base / f"{chain}-ref", base / chain
    want = torch.load(ref / "last.pt", weights_only=True)
    have = torch.load(got / "last.pt", weights_only=True)
    assert have["step"] == want["step"] == STEPS
    assert want["training"]["position"] == have["training"]["position"] == [6, 2]
    assert want["model"].keys() == have["model"].keys()
    for k in want["model"]:
        assert torch.equal(want["model"][k], have["model"][k]), k
    moments = [(a, b) for s in want["optimizer"]["state"]
               for a, b in zip(want["optimizer"]["state"][s].values(),
                               have["optimizer"]["state"][s].values())]
    assert moments and all(torch.equal(a, b) for a, b in moments)
    # the log: the same records (losses and evaluations), steps in order, once each
    assert _records(got / "metrics.jsonl") == _records(ref / "metrics.jsonl")
    steps = [r["step"] for r in _records(got / "metrics.jsonl") if "loss" in r]
    assert steps == [*range(3, STEPS + 1, 3), STEPS]
    assert (got / "config.yaml").read_text() == (ref / "config.yaml").read_text()
    assert json.loads((got / "metrics.json").read_text()) == \
        json.loads((ref / "metrics.json").read_text())
    assert not list(got.glob("*.tmp"))


def test_a_killed_run_left_a_whole_checkpoint_and_its_config(runs):
    base, _ = runs
    # the partial write of the third run died half-way through last.pt.tmp: the run
    # after it resumed from the intact last.pt (step 8) and removed the leftover
    assert "at step 8 of" in _log(base, "grouped-3")
    state = torch.load(base / "grouped" / "last.pt", weights_only=True)
    training = state["training"]
    assert set(training["rng"]) >= {"python", "numpy", "torch"}
    assert len(training["position"]) == 2 and training["world_size"] == 1
    import yaml

    assert yaml.safe_load((base / "grouped" / "config.yaml").read_text()) == state["config"]


def _sha(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_resume_and_new_runs_are_refused_where_they_would_lose_or_mix_work(
        runs, tmp_path, capsys):
    base, _ = runs
    data = base / "data"
    run = base / "grouped-ref"
    before = _sha(run)

    def train(out: Path, *args: str) -> list[str]:
        overrides = [a for a in args if "=" in a]
        flags = [a for a in args if "=" not in a]
        return ["train", *TINY, f"data.root={data}", *overrides, "--out", str(out), *flags]

    # a new run into a folder holding one
    err = _error(capsys, train(run))
    assert "is not empty" in err and "--resume" in err and "--overwrite" in err
    # nothing to resume
    err = _error(capsys, train(tmp_path / "new", "--resume"))
    assert "nothing to resume" in err and str(tmp_path / "new" / "last.pt") in err
    assert "give one of them" in _error(capsys, train(run, "--resume", "--overwrite"))
    # a config that differs in anything but the schedule's length, named key by key
    err = _error(capsys, train(run, "--resume", "train.lr=0.01", "seed=3", "data.seed=0"))
    assert "train.lr: 0.001 in the checkpoint, 0.01 now" in err and "seed: 0" in err
    assert str(run / "last.pt") in err
    err = _error(capsys, train(run, "--resume", "model.hidden=32"))
    assert "model.hidden" in err and "16" in err and "32" in err
    err = _error(capsys, train(run, "--resume", f"train.steps={STEPS - 5}"))
    assert f"at step {STEPS}, past train.steps={STEPS - 5}" in err
    assert _sha(run) == before  # none of these changed the run


def test_a_longer_schedule_continues_a_finished_run_and_overwrite_replaces_it(runs):
    base, results = runs
    assert results["longer"].get("code") == 0, _log(base, "longer")[-2000:]
    assert f"at step {STEPS} of {STEPS + 3}" in _log(base, "longer")
    # the log up to the checkpoint (not the evaluation after it, which a run of the
    # longer schedule would not have made), then the new steps
    lines, ref = _records(base / "longer" / "metrics.jsonl"), _records(
        base / "grouped-ref" / "metrics.jsonl")
    assert "eval" in ref[-1] and lines[:len(ref) - 1] == ref[:-1]
    assert [r["step"] for r in lines[len(ref) - 1:]] == [21, STEPS + 3, STEPS + 3]
    assert torch.load(base / "longer" / "last.pt", weights_only=True)["step"] == STEPS + 3
    # --overwrite: a new run, its log and checkpoint only
    assert results["replaced"].get("code") == 0, _log(base, "replaced")[-2000:]
    assert [r["step"] for r in _records(base / "replaced" / "metrics.jsonl")] == [3, 3]
    assert torch.load(base / "replaced" / "last.pt", weights_only=True)["step"] == 3


def test_demo_reruns_need_resume_or_overwrite(tmp_path, capsys):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    err = _error(capsys, ["demo", "--out", str(out), "--data", str(tmp_path / "data")])
    assert "is not empty" in err and "notes.txt" in err
    err = _error(capsys, ["demo", "--out", str(out), "--resume"])
    assert "nothing to resume" in err
    assert (out / "notes.txt").read_text() == "mine" and not (tmp_path / "data").exists()


def test_commands_refuse_what_they_cannot_use_in_one_line(runs, tmp_path, capsys):
    """Cases of the command-line audit that were tracebacks or silently ignored."""
    base, _ = runs
    data, checkpoint = base / "data", base / "grouped-ref" / "last.pt"
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    # an empty config: every default, and the synthetic benchmark's regions are pixels
    for command in ("train", "demo"):
        err = _error(capsys, [command, "--config", str(empty), "--out",
                              str(tmp_path / command), f"data.root={data}"])
        assert "carry no region features" in err and "region_encoder" in err
    err = _error(capsys, ["evaluate", "--checkpoint", str(checkpoint), "--split", "dev"])
    assert "unknown split 'dev'" in err and "'test'" in err
    # --markdown is refused before a benchmark runs for minutes, not after
    err = _error(capsys, ["bench", "propagation", "--quick", "--markdown", "p.md"])
    assert "training and pipeline" in err
    err = _error(capsys, ["bench", "training", "--quick", "--markdown", str(tmp_path)])
    assert "is a folder" in err
    binary = tmp_path / "corpus.txt"
    binary.write_bytes(b"a cup\n\x83\xffon a table\n")
    err = _error(capsys, ["gitm-mr", "train-mlm", "--text", str(binary), "--out",
                          str(tmp_path / "mlm")])
    assert f"{binary} line 2: not UTF-8" in err and not (tmp_path / "mlm").exists()


def test_a_resumed_run_drops_the_tensorboard_events_after_its_checkpoint(
        runs, tmp_path, monkeypatch):
    """TensorBoard's log is cut back like metrics.jsonl: the resumed writer purges the
    events from the step after the checkpoint on (a stand-in writer records it)."""
    import types

    base, _ = runs
    made: list[dict] = []

    class Writer:
        def __init__(self, log_dir, purge_step=None):
            made.append({"log_dir": log_dir, "purge_step": purge_step})

        def add_scalar(self, *args):
            pass

        def close(self):
            pass

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard",
                        types.SimpleNamespace(SummaryWriter=Writer))
    out = tmp_path / "run"
    short = [a for a in TINY if not a.startswith("train.steps=")]
    assert main(["train", *short, "train.steps=4", f"data.root={base / 'data'}",
                 "--out", str(out)]) == 0
    assert main(["train", *short, "train.steps=6", f"data.root={base / 'data'}",
                 "--out", str(out), "--resume"]) == 0
    assert [m["purge_step"] for m in made] == [None, 5]
    assert made[1]["log_dir"] == str(out / "tb")


def _bad_checkpoints(good: Path, folder: Path) -> dict[str, Path]:
    raw = good.read_bytes()
    written = torch.load(good, weights_only=True)
    # the edited states below are written without a digest, as another program would
    state = {k: v for k, v in written.items() if k != "digest"}
    folder.mkdir()
    cases = {}

    def put(name: str, data: bytes) -> None:
        cases[name] = folder / f"{name}.pt"
        cases[name].write_bytes(data)

    put("empty", b"")
    put("truncated", raw[: len(raw) // 2])
    put("garbage", os.urandom(4096))
    put("text", b"model: not a checkpoint\n")
    put("pickle with code", pickle.dumps(os.system))  # refused by weights_only
    cases["folder"] = folder / "a-folder.pt"
    cases["folder"].mkdir()
    cases["missing"] = folder / "missing.pt"
    for name, value in {"a list": [1, 2, 3], "no model": {"vocab": [], "config": {}},
                        "bad vocab": dict(state, vocab=[1, 2]),
                        "other model size": dict(state, config=dict(
                            state["config"], model=dict(state["config"]["model"], hidden=32))),
                        "unknown weights": dict(state, model=dict(state["model"],
                                                                  extra=torch.zeros(2))),
                        "bad config": dict(state, config=dict(
                            state["config"], model=dict(state["config"]["model"],
                                                        arch="nope"))),
                        "an unknown entry": dict(state, extra=1),
                        "a weight changed after writing": dict(written, model={
                            k: v + 1 if i == 0 else v
                            for i, (k, v) in enumerate(written["model"].items())})}.items():
        cases[name] = folder / f"{name.replace(' ', '-')}.pt"
        torch.save(value, cases[name])
    return cases


def test_unreadable_or_mismatched_checkpoints_are_one_line_errors(runs, tmp_path, capsys):
    base, _ = runs
    cases = _bad_checkpoints(base / "grouped-ref" / "last.pt", tmp_path / "bad")
    for name, path in cases.items():
        err = _error(capsys, ["evaluate", "--checkpoint", str(path), "--benchmark",
                              "synthetic", "--root", str(base / "data")])
        assert str(path) in err, (name, err)
        assert err.startswith("rcrn evaluate: error: checkpoint"), (name, err)
    # the same files as the checkpoint of a run to resume
    data = base / "data"
    for name in ("empty", "truncated", "garbage", "pickle with code", "other model size",
                 "a list", "folder"):
        run = tmp_path / "resume" / name.replace(" ", "-")
        run.mkdir(parents=True)
        target = run / "last.pt"
        if cases[name].is_dir():
            target.mkdir()
        else:
            target.write_bytes(cases[name].read_bytes())
        err = _error(capsys, ["train", *TINY, f"data.root={data}", "--out", str(run),
                              "--resume"])  # (overrides before the flags)
        assert str(target) in err, (name, err)


@settings(deadline=None, max_examples=60, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(cut=st.one_of(st.none(), st.floats(0, 1, exclude_max=True)),
       flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)),
                      max_size=3))
def test_fuzz_damaged_checkpoints_are_refused_or_read_unchanged(runs, tmp_path_factory, cut,
                                                                flips):
    """A checkpoint truncated or with bits flipped anywhere is refused with a
    CheckpointError, or reads back exactly what was written (the flip hit bytes that
    hold no content); before the digest, a third of single-bit flips changed weights
    silently."""
    base, _ = runs
    good = base / "grouped-ref" / "last.pt"
    raw = bytearray(good.read_bytes())
    for where, bit in flips:
        raw[int(where * len(raw))] ^= 1 << bit
    if cut is not None:
        raw = raw[:int(cut * len(raw))]
    path = tmp_path_factory.mktemp("damaged") / "last.pt"
    path.write_bytes(bytes(raw))
    try:
        state = read_checkpoint(path)
    except CheckpointError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    assert state_digest(state) == torch.load(good, weights_only=True)["digest"]


def test_training_never_erases_a_data_root_of_other_files(tmp_path, capsys):
    # a VSR-like folder: COCO images and annotations, no synthetic manifest
    root = tmp_path / "vsr"
    (root / "images").mkdir(parents=True)
    (root / "annotations").mkdir()
    (root / "images" / "000000001.jpg").write_bytes(b"\xff\xd8 an image")
    (root / "annotations" / "instances_train2017.json").write_text("{}")
    (root / "train.jsonl").write_text('{"caption": "a cat"}\n')
    before = _sha(root)
    for extra in ([], ["--overwrite"]):
        err = _error(capsys, ["train", f"data.root={root}", "--out", str(tmp_path / "run"),
                              *extra])
        assert "did not write" in err and str(root) in err
        err = _error(capsys, ["demo", "--data", str(root), "--out", str(tmp_path / "demo"),
                              *extra])
        assert "did not write" in err and str(root) in err
        err = _error(capsys, ["synthetic", "generate", "--out", str(root), "--scenes", "2",
                              "--quiet", *extra])
        assert "did not write" in err and str(root / "annotations") in err
        err = _error(capsys, ["gitm-mr", "generate", "--from-synthetic", str(tmp_path / "s"),
                              "--out", str(root), *extra])
        assert "did not write" in err and str(root) in err
    assert _sha(root) == before


def test_random_states_round_trip_through_a_weights_only_checkpoint(tmp_path):
    import random

    import numpy as np

    from rcrn.engine.trainer import rng_states, set_rng_states

    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    np.random.randn()  # NumPy now holds a second normal deviate

    def draw():
        return (random.random(), random.gauss(0, 1), np.random.rand(), np.random.randn(),
                torch.rand(3), torch.randn(2))

    torch.save(rng_states(), tmp_path / "rng.pt")
    want = draw()
    set_rng_states(torch.load(tmp_path / "rng.pt", weights_only=True))
    got = draw()
    assert got[:4] == want[:4]
    assert torch.equal(got[4], want[4]) and torch.equal(got[5], want[5])
