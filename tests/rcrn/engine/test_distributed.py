"""Distributed training (torchrun, gloo on CPU), the global-batch loss, amp and compile options.

The two-process checks share one ``torchrun`` launch (module fixture ``ddp_run``): a
worker script trains the Trainer for 3 steps, resumes it to 5, then runs ``rcrn train`` on
a tiny synthetic dataset; the tests compare its outputs with single-process runs of the
same global batches.  (``rcrn train`` leaves the process group when it ends, and a
process group is not re-created reliably inside one torchrun launch, so the worker runs
the command once.)
"""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from rcrn.batching import Vocab, collate
from rcrn.engine import distributed
from rcrn.engine.config import apply_overrides
from rcrn.engine.trainer import Trainer, build_model, make_loader
from rcrn.losses import LossConfig, loss_terms, rcrn_loss
from rcrn.testing import learnable_problems

ROOT = Path(__file__).resolve().parents[3]
PROBLEMS = 40  # one epoch of batch 9: 9, 9, 9, 9, 4 -> ranks get 5/4, ..., 2/2
CONFIG = {
    "seed": 0,
    "model": dict(word_dim=8, lstm_hidden=8, joint=16, hidden=16, sim_dim=8, vis_dim=8,
                  spatial_dim=4, pair_dim=8, classify_hidden=8, grounding_scale=5.0),
    "loss": {"mu": 3.0, "omega": 1.0},
    "train": {"steps": 3, "batch_size": 9, "lr": 0.003, "log_every": 1},
}
TINY_CLI = ["model.word_dim=8", "model.lstm_hidden=8", "model.joint=16", "model.hidden=16",
            "model.sim_dim=8", "model.vis_dim=8", "model.spatial_dim=4", "model.pair_dim=8",
            "model.classify_hidden=8", "region_encoder.channels=[4, 8, 8]", "data.scenes=8",
            "train.batch_size=4", "train.log_every=1", "eval.batch_size=16"]

WORKER = textwrap.dedent("""
    import json, os, shutil, sys
    from pathlib import Path

    import torch

    torch.set_num_threads(1)
    import rcrn.engine.trainer as T
    from rcrn.cli import main
    from rcrn.engine import distributed
    from rcrn.engine.config import apply_overrides
    from rcrn.testing import learnable_problems

    out, spec = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    save = T.save_checkpoint

    def recording_save(path, model, vocab, config, optimizer=None, step=0, **kw):
        # which rank saved, and a copy of every checkpoint
        with open(out / "saves.txt", "a") as f:
            f.write(f"{distributed.rank()} {step}\\n")
        save(path, model, vocab, config, optimizer, step, **kw)
        shutil.copy(path, out / f"step{step}.pt")

    T.save_checkpoint = recording_save
    torch.set_default_dtype(torch.float64)
    train = learnable_problems(spec["problems"], seed=0, feature_dim=8)
    T.Trainer(spec["config"], train, out / "trainer").fit(progress=False)
    trainer = T.Trainer(apply_overrides(spec["config"], ["train.steps=5"]), train,
                        out / "trainer")
    assert trainer.resume() and trainer.step == 3 and trainer.dist.world_size == 2
    trainer.fit(progress=False)
    torch.set_default_dtype(torch.float32)
    T.save_checkpoint = save
    cli, overrides = ["train", "--out", str(out / "cli")], [f"data.root={out / 'data'}",
                                                           *spec["cli"]]
    assert main([*cli, *overrides, "train.steps=2"]) == 0  # leaves the process group
    print("RANK", os.environ["RANK"], "DONE", flush=True)
""")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    (out / "worker.py").write_text(WORKER)
    (out / "spec.json").write_text(json.dumps({"problems": PROBLEMS, "config": CONFIG,
                                               "cli": TINY_CLI}))
    env = {k: v for k, v in os.environ.items()
           if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
           "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
           str(out / "worker.py"), str(out), str(out / "spec.json")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher and its workers
        stdout, stderr = proc.communicate()
        pytest.fail(f"torchrun timed out:\n{(stdout + stderr)[-6000:]}")
    log = stdout + stderr
    assert proc.returncode == 0, log[-6000:]
    assert "RANK 0 DONE" in log and "RANK 1 DONE" in log, log[-3000:]
    return out, stdout


@pytest.fixture(scope="module")
def single_run(tmp_path_factory):
    """The worker's Trainer phases in this process, float64, one process."""
    out = tmp_path_factory.mktemp("single")
    torch.set_num_threads(1)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        train = learnable_problems(PROBLEMS, seed=0, feature_dim=8)
        Trainer(CONFIG, train, out).fit(progress=False)
        after3 = torch.load(out / "last.pt", weights_only=True)["model"]
        trainer = Trainer(apply_overrides(CONFIG, ["train.steps=5"]), train, out)
        assert trainer.resume() and trainer.step == 3 and trainer.dist.world_size == 1
        trainer.fit(progress=False)
    finally:
        torch.set_default_dtype(previous)
    return out, after3


def records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


# ------------------------------------------------------------------ unit checks
def test_shard_splits_every_global_batch_into_contiguous_near_equal_slices():
    items = list(range(9))
    parts = [distributed.shard(items, r, 2) for r in range(2)]
    assert parts == [[0, 1, 2, 3, 4], [5, 6, 7, 8]]
    assert sum((distributed.shard(items, r, 4) for r in range(4)), []) == items
    assert distributed.shard([1], 1, 2) == []
    with pytest.raises(ValueError):
        distributed.shard(items, 2, 2)
    batches = [[0, 1, 2], [3, 4, 5], [6]]
    assert distributed.shard_batches(batches, 1, 2) == [[2], [5]]  # [6] is dropped


@pytest.mark.parametrize("group_by", [None, "image_path"])
def test_loader_shards_are_the_single_process_batches(group_by):
    problems = learnable_problems(23, seed=2)
    for p in problems:
        p.meta["image_path"] = f"img{int(p.id[1:]) // 3}"
    vocab = Vocab.build(problems)

    def ids(rank, world):
        loader = make_loader(problems, vocab, 6, True, False, seed=7, group_by=group_by,
                             rank=rank, world_size=world)
        assert len(loader) == len(list(loader.batch_sampler))
        return [b.ids for b in loader]

    single = ids(0, 1)
    assert [len(b) for b in single] == [6, 6, 6, 5]
    r0, r1 = ids(0, 2), ids(1, 2)
    assert [a + b for a, b in zip(r0, r1)] == single
    assert single != [[p.id for p in problems[i:i + 6]] for i in range(0, 23, 6)]  # shuffled
    r = [ids(k, 6) for k in range(6)]  # the last batch (5 items) is dropped by 6 ranks
    assert [sum((r[k][j] for k in range(6)), []) for j in range(3)] == single[:3]
    assert all(len(x) == 3 for x in r)


@pytest.fixture
def float64():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.mark.parametrize("mu, omega", [(3.0, 1.0), (0.5, 2.0)])
def test_global_batch_loss_gives_the_global_mean_and_gradient(monkeypatch, float64, mu, omega):
    """Simulated 2-rank split (no processes): the per-rank losses of ``global_batch_loss``
    average to the gradient of the whole batch's loss, where plain per-rank means do not."""
    torch.set_num_threads(1)
    problems = learnable_problems(9, seed=4, feature_dim=8)
    vocab = Vocab.build(problems)
    model = build_model(CONFIG, vocab)
    cfg = LossConfig(**{**CONFIG["loss"], "mu": mu, "omega": omega})
    params = [p for p in model.parameters() if p.requires_grad]

    def run(items):
        batch = collate(items, vocab)
        out = model(batch)
        return rcrn_loss(out, batch, cfg), loss_terms(out, batch, cfg)

    def grads(loss):  # a slice may leave parameters out of its loss (no regressed item)
        found = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        return [torch.zeros_like(p) if g is None else g for p, g in zip(params, found)]

    full, full_terms = run(problems)
    want = grads(full["loss"])
    shards = [run(distributed.shard(problems, r, 2)) for r in range(2)]
    counts = [torch.stack([c for _, c in terms.values()]).double() for _, terms in shards]
    assert counts[0][0] != counts[1][0], "the test needs ranks with different positives"
    assert torch.equal(counts[0] + counts[1],
                       torch.stack([c for _, c in full_terms.values()]).double())
    monkeypatch.setattr(distributed, "world_size", lambda: 2)
    monkeypatch.setattr(distributed, "all_reduce_sum", lambda c: counts[0] + counts[1])
    got = [torch.zeros_like(p) for p in params]
    shares: dict[str, float] = {}
    naive = [torch.zeros_like(p) for p in params]
    for losses, terms in shards:
        loss, share = distributed.global_batch_loss(terms, cfg.weights())
        for k, v in share.items():
            shares[k] = shares.get(k, 0.0) + float(v)
        for g, x in zip(got, grads(loss)):
            g += x / 2  # DDP's average
        for g, x in zip(naive, grads(losses["loss"])):
            g += x / 2
    assert float(full["grd"]) > 0 and float(full["match"]) > 0
    for k in ("loss", "grd", "match", "reg"):
        assert shares[k] == pytest.approx(float(full[k].detach()), rel=1e-12, abs=1e-14)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12)
    assert max(float((g - w).abs().max()) for g, w in zip(naive, want)) > 1e-4


# ------------------------------------------------------------------ two processes
def test_two_processes_match_one_process_on_the_same_global_batch(ddp_run, single_run):
    out, _ = ddp_run
    ref, ref_after3 = single_run
    got, want = records(out / "trainer" / "metrics.jsonl"), records(ref / "metrics.jsonl")
    assert [r["step"] for r in got] == [r["step"] for r in want] == [1, 2, 3, 4, 5]
    for a, b in zip(got, want):
        for k in ("loss", "grd", "match", "reg"):
            assert a[k] == pytest.approx(b[k], rel=1e-10, abs=1e-12), (a, b)
    for mine, theirs in ((torch.load(out / "step3.pt", weights_only=True)["model"], ref_after3),
                         (torch.load(out / "trainer" / "last.pt", weights_only=True)["model"],
                          torch.load(ref / "last.pt", weights_only=True)["model"])):
        assert mine.keys() == theirs.keys()
        for k in mine:
            assert mine[k].dtype == torch.float64 or not mine[k].is_floating_point()
            torch.testing.assert_close(mine[k], theirs[k], rtol=1e-9, atol=1e-11, msg=k)


def test_only_rank_zero_writes_and_training_resumes(ddp_run):
    out, stdout = ddp_run
    # Trainer: one checkpoint per fit, by rank 0; the resumed fit logged steps 4-5 only
    assert (out / "saves.txt").read_text().splitlines() == ["0 3", "0 5"]
    assert torch.load(out / "trainer" / "last.pt", weights_only=True)["step"] == 5
    # rcrn train under torchrun: one log line per step, rank 0's evaluation and report
    cli = out / "cli"
    lines = records(cli / "metrics.jsonl")
    assert [r["step"] for r in lines if "loss" in r] == [1, 2]
    assert [r["step"] for r in lines if "eval" in r] == [2]
    assert torch.load(cli / "last.pt", weights_only=True)["step"] == 2
    assert stdout.count("checkpoint: ") == 1 and stdout.count("RCRN on synthetic / val") == 1
    assert json.loads((cli / "metrics.json").read_text())["full"]["n"] > 0
    assert not list(cli.glob("*.tmp"))


# ------------------------------------------------------------------ amp, compile
def test_bf16_autocast_trains_a_step_and_keeps_weights_in_float32(tmp_path):
    torch.set_num_threads(1)
    train = learnable_problems(16, seed=5, feature_dim=8)
    cfg = apply_overrides(CONFIG, ["train.steps=2", "train.batch_size=8", "train.amp=bf16"])
    trainer = Trainer(cfg, train, tmp_path)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    seen = {}

    def record(name):
        def hook(module, args, out):
            seen[name] = out[0].data if name == "lstm" else out
        return hook

    hooks = [m.register_forward_hook(record(name))
             for name, m in (("lstm", trainer.model.phrases.lstm),
                             ("attn", trainer.model.phrases.attn["app"]))]
    trainer.fit(progress=False)
    for h in hooks:
        h.remove()
    assert seen["attn"].dtype == torch.bfloat16  # autocast on
    assert seen["lstm"].dtype == torch.float32  # recurrent layers kept in float32
    after = trainer.model.state_dict()
    assert all(v.dtype == before[k].dtype for k, v in after.items())
    assert any(not torch.equal(v, before[k]) for k, v in after.items())
    logs = records(tmp_path / "metrics.jsonl")
    assert len(logs) == 2 and all(torch.isfinite(torch.tensor(r["loss"])) for r in logs)
    with pytest.raises(ValueError, match="train.amp"):
        Trainer(apply_overrides(cfg, ["train.amp=fp16"]), train, tmp_path / "bad")


def test_compile_option_trains_a_step(tmp_path):
    """``train.compile`` runs the step through torch.compile.  The default inductor
    backend takes about 5 minutes to compile this model on a 2-core CPU, so the test uses
    the ``eager`` backend (Dynamo tracing, graph breaks and guards, no code generation);
    the losses equal the uncompiled run's."""
    torch.set_num_threads(1)
    train = learnable_problems(16, seed=6, feature_dim=8)
    cfg = apply_overrides(CONFIG, ["train.steps=1", "train.batch_size=8"])
    torch._dynamo.reset()
    Trainer(apply_overrides(cfg, ["train.compile=eager"]), train, tmp_path / "c").fit(False)
    Trainer(cfg, train, tmp_path / "e").fit(progress=False)
    compiled, eager = records(tmp_path / "c" / "metrics.jsonl"), records(tmp_path / "e" /
                                                                         "metrics.jsonl")
    assert [r["loss"] for r in compiled] == pytest.approx([r["loss"] for r in eager], rel=1e-5)
    assert distributed.compile_backend(True) == "inductor"
    assert distributed.compile_backend("false") is None
