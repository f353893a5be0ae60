"""``rcrn lengthgen``: runs, resumption, aggregation and config errors on a tiny dataset."""

from __future__ import annotations

import csv
import json
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from rcrn import programs as P
from rcrn.cli.lengthgen import (
    Claim,
    Experiment,
    ci95,
    format_summary,
    load_experiment,
    match_start,
    run_config,
    run_experiment,
    select_fraction,
)
from rcrn.engine.config import ConfigError

ROOT = Path(__file__).resolve().parents[3]
BASE = ROOT / "rcrn" / "configs" / "synthetic.yaml"
TINY_MODEL = dict(word_dim=8, lstm_hidden=8, joint=16, hidden=16, sim_dim=8, vis_dim=8,
                  spatial_dim=4, pair_dim=8, classify_hidden=8)
NO_TOP_DOWN = P.to_text(P.ABLATIONS["no_top_down"])


def experiment(root: Path, **extra) -> dict:
    config = {
        "base": str(BASE),
        "overrides": {
            "data": {"root": str(root)},
            "model": TINY_MODEL,
            "region_encoder": {"channels": [4, 4, 4], "pool_size": 2},
            "train": {"steps": 2, "batch_size": 8, "log_every": 1},
        },
        "models": {"rcrn": {}, "no_top_down": {"model": {"program": NO_TOP_DOWN}}},
        "subsets": {"len_words": {"train_subset": "len_words"},
                    "uniform_50": {"fraction": 0.5}},
        "seeds": [0, 1],
        "claim": {"model": "rcrn", "baseline": "no_top_down"},
    }
    config.update(extra)
    return config


def write(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    from benchmarks.synthetic import ensure_dataset

    return ensure_dataset(tmp_path_factory.mktemp("syn") / "data", scenes=20, seed=3, size=64,
                          per_scene=3, progress=False)


@pytest.fixture(scope="module")
def done(dataset, tmp_path_factory):
    """The experiment run once through the ``rcrn`` command line."""
    from rcrn.cli import main

    tmp = tmp_path_factory.mktemp("lengthgen")
    config = write(tmp / "exp.yaml", experiment(dataset))
    out = tmp / "out"
    assert main(["lengthgen", "--config", str(config), "--out", str(out), "--quiet"]) == 0
    return SimpleNamespace(config=config, out=out, tmp=tmp)


def runs(out: Path) -> list[Path]:
    return sorted((out / "runs").glob("*/*/seed*/result.json"))


def test_every_run_writes_its_result_and_the_aggregates(done, capsys):
    out = done.out
    found = runs(out)
    assert len(found) == 2 * 2 * 2
    for model in ("rcrn", "no_top_down"):
        for subset in ("len_words", "uniform_50"):
            for seed in (0, 1):
                d = out / "runs" / model / subset / f"seed{seed}"
                result = json.loads((d / "result.json").read_text())
                assert (result["model"], result["subset"], result["seed"]) == (model, subset,
                                                                               seed)
                assert result["key"]["config"]["seed"] == seed
                assert result["wall_time_s"] > 0 and result["steps"] == 2
                for name in ("last.pt", "metrics.jsonl", "config.yaml", "predictions.jsonl"):
                    assert (d / name).exists(), name
    for name in ("results.csv", "summary.md", "accuracy_vs_length.png",
                 "accuracy_vs_relations.png", "accuracy_vs_train_size.png", "experiment.yaml"):
        assert (out / name).exists(), name
    summary = (out / "summary.md").read_text()
    assert " ± " in summary
    for model in ("rcrn", "no_top_down"):
        for subset in ("len_words", "uniform_50"):
            assert f"| {model} | {subset} | 2 |" in summary
    assert "## Verdict" in summary and "`len_words` (ID / OOD by words, 2 seed(s)):" in summary
    assert "- rcrn OOD drop, Match: " in summary
    assert "no_top_down did not learn" in summary   # two steps of training
    assert "- rcrn / len_words: Match" in summary
    # every run's match head start, read from its training log
    assert "Match head start: the first logged step" in summary
    for model in ("rcrn", "no_top_down"):
        d = out / "runs" / model / "len_words" / "seed0"
        result = json.loads((d / "result.json").read_text())
        assert result["match_start"] == match_start(d / "metrics.jsonl")


def test_match_start_is_the_first_logged_step_below_the_bound(tmp_path):
    log = tmp_path / "metrics.jsonl"
    records = [{"step": 50, "loss": 3.0, "match": 0.69}, {"step": 100, "eval": {"full": {}}},
               {"step": 100, "match": 0.61}, {"step": 150, "match": 0.58},
               {"step": 200, "match": 0.3}]
    log.write_text("\n".join(json.dumps(r) for r in records) + "\nnot json\n")
    assert match_start(log) == 150
    assert match_start(log, below=0.62) == 100
    assert match_start(log, below=0.2) is None
    assert match_start(tmp_path / "absent.jsonl") is None
    log.write_text(json.dumps({"step": 50, "grd": 0.1}) + "\n")     # no match loss logged
    assert match_start(log) is None


def test_the_summary_gives_every_seeds_match_head_start():
    results = [dict(_result("rcrn", k, (95, 95), (90, 90)), match_start=v)
               for k, v in enumerate((550, None, 900))]
    results += [dict(_result("ce", k, (60, 60), (50, 50)), match_start=None) for k in range(3)]
    exp = Experiment(base={}, models={"rcrn": {}, "ce": {}},
                     subsets={"len_words": {"train_subset": "len_words", "fraction": None,
                                            "length": "words"}},
                     seeds=[0, 1, 2], claim=Claim(model="rcrn", baseline="ce"))
    lines = format_summary(exp, results).splitlines()
    at = lines.index("| Model | Subset | Step by seed | Spread (steps) |")
    assert lines[at + 2] == "| rcrn | len_words | 0: 550 / 1: never / 2: 900 | 350 (1 never) |"
    assert lines[at + 3] == "| ce | len_words | 0: never / 1: never / 2: never | – |"
    # results without the key (none of their runs logged) leave the table out
    assert "Step by seed" not in format_summary(exp, [_result("rcrn", 0, (95, 95), (90, 90))])


def test_csv_rows_and_bucket_counts_add_up(done, dataset):
    from benchmarks.synthetic import SyntheticBenchmark

    n_test = len(SyntheticBenchmark(dataset, "test"))
    rows = list(csv.DictReader((done.out / "results.csv").open()))
    results = [json.loads(p.read_text()) for p in runs(done.out)]
    expected = sum(3 + len(r["buckets"]["words"]) + len(r["buckets"]["relations"])
                   for r in results)
    assert len(rows) == expected
    for r in results:
        mine = [x for x in rows if (x["model"], x["subset"], x["seed"])
                == (r["model"], r["subset"], str(r["seed"]))]
        parts = {x["bucket"]: x for x in mine if x["bucket_kind"].startswith("part_by_")}
        assert set(parts) == {"in_distribution", "out_of_distribution", "full"}
        assert int(parts["full"]["n"]) == n_test == r["test_size"]
        assert (int(parts["in_distribution"]["n"]) + int(parts["out_of_distribution"]["n"])
                == n_test)
        for kind in ("words", "relations"):
            assert sum(int(x["n"]) for x in mine if x["bucket_kind"] == kind) == n_test
            assert sum(int(x["n_matched"]) for x in mine if x["bucket_kind"] == kind) \
                == int(parts["full"]["n_matched"])
        assert float(parts["full"]["wall_time_s"]) == r["wall_time_s"]
        assert int(parts["full"]["train_size"]) == r["train_size"]


def test_parts_agree_with_the_benchmark_evaluation(done):
    from rcrn.cli.commands import synthetic_benchmark
    from rcrn.structures import Prediction

    d = done.out / "runs" / "rcrn" / "len_words" / "seed0"
    result = json.loads((d / "result.json").read_text())
    preds = [Prediction.from_dict(json.loads(x))
             for x in (d / "predictions.jsonl").read_text().splitlines()]
    bench = synthetic_benchmark(result["key"]["config"], "test", progress=False)
    list(bench.problems())
    official = bench.evaluate(preds)
    for part in ("full", "in_distribution", "out_of_distribution"):
        assert official[part] == result["parts"][part]


def test_a_rerun_reuses_every_result(done, capsys):
    before = {p: p.stat().st_mtime_ns for p in runs(done.out)}
    report = run_experiment(done.config, done.out, progress=False, log=lambda s: None)
    assert [o.status for o in report.outcomes] == ["cached"] * 8
    assert {p: p.stat().st_mtime_ns for p in runs(done.out)} == before
    assert len(report.results) == 8 and " ± " in report.summary
    # the stand-alone script is the same command
    argv = sys.argv
    sys.argv = ["length_generalization.py", "--config", str(done.config), "--out",
                str(done.out), "--dry-run", "--models", "rcrn"]
    try:
        with pytest.raises(SystemExit) as exit_:
            runpy.run_path(str(ROOT / "scripts" / "length_generalization.py"),
                           run_name="__main__")
    finally:
        sys.argv = argv
    assert exit_.value.code == 0
    printed = capsys.readouterr().out
    assert printed.count(": cached") == 4 and "no_top_down" not in printed


def test_a_changed_config_is_refused_then_retrained(dataset, tmp_path):
    config = write(tmp_path / "one.yaml", experiment(
        dataset, models={"rcrn": {}}, subsets={"uniform_25": {"fraction": 0.25}}, seeds=[0],
        keep_checkpoints=False))
    out = tmp_path / "out"
    first = run_experiment(config, out, progress=False, log=lambda s: None)
    run_dir = out / "runs" / "rcrn" / "uniform_25" / "seed0"
    assert first.outcomes[0].status == "trained" and not (run_dir / "last.pt").exists()
    # a setting written out at its default value is the same run; another value is not
    same = run_experiment(config, out, overrides=["loss.pair_margin=1.0"], progress=False,
                          log=lambda s: None)
    assert same.outcomes[0].status == "cached"
    with pytest.raises(ConfigError, match=r"loss\.pair_margin: '<unset>' -> 2\.0"):
        run_experiment(config, out, overrides=["loss.pair_margin=2.0"], progress=False,
                       log=lambda s: None)
    with pytest.raises(ConfigError, match=r"(?s)train\.steps: 2 -> 3.*--rerun-changed"):
        run_experiment(config, out, overrides=["train.steps=3"], progress=False,
                       log=lambda s: None)
    with pytest.raises(ConfigError, match=r"subset\.fraction: 0\.25 -> 0\.3"):
        run_experiment(config, out, overrides=["subsets.uniform_25.fraction=0.3"],
                       progress=False, log=lambda s: None)
    again = run_experiment(config, out, overrides=["train.steps=3"], rerun_changed=True,
                           progress=False, log=lambda s: None)
    assert again.outcomes[0].status == "trained"
    result = json.loads((run_dir / "result.json").read_text())
    assert result["steps"] == 3
    logged = [json.loads(x)["step"] for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert logged == [1, 2, 3]  # the old log was cleared, not appended to
    # a new bucket width reuses the training and recomputes the buckets
    wide = run_experiment(config, out, overrides=["train.steps=3", "buckets.word_bin=100"],
                          progress=False, log=lambda s: None)
    assert wide.outcomes[0].status == "rebucketed"
    words = json.loads((run_dir / "result.json").read_text())["buckets"]["words"]
    assert len(words) <= 2 and words[0]["hi"] == result["thresholds"]["max_words"]
    # no fraction subset and no baseline: the plot is skipped, the claim says why
    assert "accuracy_vs_train_size.png" in wide.summary
    assert "not judged: rcrn has no results on a subset of short expressions" in wide.summary


def test_a_model_of_another_arch_trains_with_its_own_model_section(dataset, tmp_path):
    from rcrn.engine.trainer import ARCHS

    if "cross_encoder" not in ARCHS:
        pytest.skip("no cross_encoder arch in this checkout")
    tiny = {"arch": "cross_encoder", "mil": True, "word_dim": 8, "vis_dim": 8, "dim": 16,
            "layers": 1, "heads": 2, "ff": 16}
    config = experiment(dataset, models={"cross_encoder": {"model": tiny}},
                        subsets={"len_words": {"train_subset": "len_words"}}, seeds=[0])
    report = run_experiment(config, tmp_path / "out", progress=False, log=lambda s: None)
    result = report.outcomes[0].result
    assert report.outcomes[0].status == "trained"
    assert result["key"]["config"]["model"] == tiny
    assert result["parts"]["full"]["n"] == result["test_size"]


def test_the_packaged_experiment_plans_the_table_2_grid(tmp_path):
    from rcrn.cli.lengthgen import default_experiment_path

    exp = load_experiment(default_experiment_path())
    assert list(exp.models) == ["official", "rcrn", "cross_encoder", "cross_encoder_mil",
                                "rcrn_vl"]
    assert list(exp.subsets) == ["len_words", "len_rels", "uniform_10", "uniform_25",
                                 "uniform_100"]
    assert exp.seeds == [0, 1, 2] and exp.init_from == {"rcrn_vl": "cross_encoder"}
    assert exp.claim == Claim("official", "cross_encoder")
    assert exp.subsets["uniform_10"] == {"train_subset": None, "fraction": 0.1,
                                         "length": "words"}
    official = run_config(exp, "official", "len_words", 0)
    assert official["model"]["layers"] == "release" and official["model"]["joint"] == 128
    lines = []
    run_experiment(exp, tmp_path, dry_run=True, log=lines.append)
    assert len(lines) == 78 and all(line.endswith(": to train") for line in lines)
    # both cross-encoders fine-tune from one pre-training stage per seed on the short
    # expressions of eight times the demo's scenes' expressions
    assert lines[-3:] == [f"pretrain ce_short / seed {k}: to train" for k in range(3)]
    assert exp.pretrained == {"cross_encoder": "ce_short", "cross_encoder_mil": "ce_short"}
    stage = load_experiment(default_experiment_path()).pretrain["ce_short"]
    assert stage["data"]["train_subset"] == "len_short" and stage["data"]["per_scene"] == 64
    assert run_config(exp, "cross_encoder", "len_words", 0)["data"] == official["data"]
    # the cross-encoder trains before the RCRN-VL runs it initialises
    order = [line.split(" / ")[0] for line in lines[:75]]
    assert order.index("rcrn_vl") > max(i for i, m in enumerate(order) if m == "cross_encoder")
    quick = exp.reduced()
    assert (list(quick.models), list(quick.subsets), quick.seeds) == (
        ["rcrn", "cross_encoder"], ["len_words"], [0])
    assert run_config(quick, "rcrn", "len_words", 0)["train"]["steps"] == 1200
    # its pre-training stage is short and reads the demo's data (nothing more to generate)
    from rcrn.cli.lengthgen import pretrain_config

    stage = pretrain_config(quick, "ce_short", 0)
    assert stage["train"]["steps"] == 1200 and stage["data"]["train_subset"] == "len_short"
    assert (stage["data"]["root"], stage["data"]["per_scene"]) == ("data/synthetic", 8)


def test_fraction_keeps_whole_pairs_and_depends_only_on_the_seed():
    problems = []
    for i in range(40):
        problems.append(SimpleNamespace(id=f"p{i}-pos", meta={"pair_id": f"p{i}"}))
        if i % 5:
            problems.append(SimpleNamespace(id=f"p{i}-neg", meta={"pair_id": f"p{i}"}))
    a = select_fraction(problems, 0.25, seed=0)
    assert [p.id for p in a] == [p.id for p in select_fraction(problems, 0.25, seed=0)]
    pairs = {p.meta["pair_id"] for p in a}
    assert len(pairs) == 10
    assert {p.id for p in a} == {p.id for p in problems if p.meta["pair_id"] in pairs}
    assert pairs != {p.meta["pair_id"] for p in select_fraction(problems, 0.25, seed=1)}
    larger = {p.meta["pair_id"] for p in select_fraction(problems, 0.5, seed=0)}
    assert pairs < larger  # nested for one seed
    assert len(select_fraction(problems, 1.0, seed=3)) == len(problems)


def test_model_entries_merge_unless_the_arch_differs(dataset):
    config = experiment(dataset, models={
        "rcrn": {"train": {"lr": 0.01}},
        "ablation": {"model": {"program": NO_TOP_DOWN}},
        "other": {"model": {"arch": "cross_encoder", "mil": True, "layers": 2}}})
    exp = load_experiment(config, ["train.steps=7"])
    cfg = run_config(exp, "rcrn", "uniform_50", 1)
    assert cfg["train"]["lr"] == 0.01 and cfg["train"]["steps"] == 7 and cfg["seed"] == 1
    assert cfg["data"]["seed"] == 0 and cfg["data"]["train_subset"] is None
    assert cfg["train"]["eval_every"] == 0
    ablation = run_config(exp, "ablation", "len_words", 0)
    assert ablation["model"]["program"] == NO_TOP_DOWN and ablation["model"]["joint"] == 16
    assert ablation["data"]["train_subset"] == "len_words"
    other = run_config(exp, "other", "len_words", 0)
    assert other["model"] == {"arch": "cross_encoder", "mil": True, "layers": 2}
    assert other["region_encoder"] == ablation["region_encoder"]
    rels = load_experiment(experiment(dataset, subsets={"r": {"train_subset": "len_rels"}}))
    assert rels.subsets["r"]["length"] == "relations"


@pytest.mark.parametrize("change, message", [
    ({"modles": {}}, r"unknown key\(s\) \['modles'\]"),
    ({"subsets": {"x": {"fraction": 1.5}}}, r"subsets\.x\.fraction"),
    ({"subsets": {"x": {"train_subset": "len_foo"}}}, r"subsets\.x\.train_subset: 'len_foo'"),
    ({"subsets": {"x": {"fractoin": 0.1}}}, r"subsets\.x: unknown key\(s\) \['fractoin'\]"),
    ({"models": {"bad": {"modle": {"k": 3}}}}, r"models\.bad: unknown training-config"),
    ({"models": {"bad": [1]}}, r"models\.bad: must be a mapping"),
    ({"models": {"a/b": {}}}, r"name 'a/b'"),
    ({"seeds": [0, "one"]}, r"'seeds' must be a non-empty list of integers"),
    ({"keep_checkpoints": "no"}, r"keep_checkpoints"),
    ({"buckets": {"word_bin": 0}}, r"buckets\.word_bin"),
    ({"base": "missing.yaml"}, r"base config 'missing\.yaml' not found"),
])
def test_bad_config_entries_name_the_key(dataset, change, message):
    with pytest.raises(ConfigError, match=message):
        load_experiment(experiment(dataset, **change))


def test_bad_selections_and_models_fail_before_training(dataset, tmp_path):
    config = experiment(dataset, models={"rcrn": {}, "broken": {"model": {"nonsense": 1}}})
    with pytest.raises(ConfigError, match=r"unknown models \['nope'\]"):
        run_experiment(config, tmp_path / "o", models=["nope"], progress=False)
    with pytest.raises(ConfigError, match=r"models\.broken: the model cannot be built.*nonsense"):
        run_experiment(config, tmp_path / "o", progress=False, log=lambda s: None)
    assert not list((tmp_path / "o").glob("runs/*/*/*/result.json"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_experiment(tmp_path / "none.yaml")
    with pytest.raises(ConfigError, match="training-config section"):
        load_experiment(config, ["trian.steps=3"])


def test_an_interrupted_run_continues_from_its_checkpoint(dataset, tmp_path, monkeypatch):
    """A run stopped during training (here: an error at the 5th optimizer update, after
    the checkpoint of step 4) continues from that checkpoint when the experiment is run
    again, and ends with the weights of a run never stopped."""
    import torch

    from rcrn.cli.lengthgen import PROBE_STEPS

    config = write(tmp_path / "one.yaml", experiment(
        dataset, models={"rcrn": {}}, subsets={"len_words": {"train_subset": "len_words"}},
        seeds=[0]))
    steps = ["train.steps=7", "train.checkpoint_every=2"]

    def run(out: Path) -> list[str]:
        said: list[str] = []
        run_experiment(config, out, overrides=steps, progress=False, log=said.append)
        return said

    run(tmp_path / "whole")
    adam_step, updates = torch.optim.Adam.step, []

    def failing_step(self, *args, **kwargs):
        updates.append(1)
        if len(updates) == 1 + PROBE_STEPS + 5:   # after the time estimate's probe
            raise KeyboardInterrupt
        return adam_step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", failing_step)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "stopped")
    monkeypatch.setattr(torch.optim.Adam, "step", adam_step)
    run_dir = tmp_path / "stopped" / "runs" / "rcrn" / "len_words" / "seed0"
    assert not (run_dir / "result.json").exists()
    said = run(tmp_path / "stopped")
    assert any(f"resumed at step 4 from {run_dir / 'last.pt'}" in line for line in said)
    whole = torch.load(tmp_path / "whole" / "runs" / "rcrn" / "len_words" / "seed0" / "last.pt",
                       weights_only=True)
    again = torch.load(run_dir / "last.pt", weights_only=True)
    assert again["step"] == whole["step"] == 7
    assert all(torch.equal(whole["model"][k], again["model"][k]) for k in whole["model"])
    result = json.loads((run_dir / "result.json").read_text())
    assert result["parts"] == json.loads(
        (tmp_path / "whole" / "runs" / "rcrn" / "len_words" / "seed0" / "result.json"
         ).read_text())["parts"]
    # a checkpoint of another config is not resumed: the run starts again
    (run_dir / "result.json").unlink()
    said = run_experiment(config, tmp_path / "stopped", overrides=steps + ["train.lr=0.01"],
                          progress=False, log=lambda s: None)
    assert said.outcomes[0].status == "trained"


def test_the_95_percent_interval_is_the_t_interval_of_the_mean():
    mean, lo, hi = ci95([0.01, 0.02, 0.03])
    assert mean == pytest.approx(0.02)
    assert hi - mean == pytest.approx(4.303 * 0.01 / 3 ** 0.5, rel=1e-4)
    assert lo == pytest.approx(2 * mean - hi)
    assert ci95([0.5]) is None and ci95([None, 0.4]) is None
    stats = pytest.importorskip("scipy.stats")
    values = [0.1, 0.3, 0.2, 0.6, 0.4, 0.5, 0.9, 0.2]
    half = stats.t.ppf(0.975, len(values) - 1) * stats.sem(values)
    assert ci95(values)[2] - ci95(values)[0] == pytest.approx(half, rel=1e-3)


def _result(model: str, seed: int, id_: tuple[float, float], ood: tuple[float, float]
            ) -> dict:
    def part(match: float, grounding: float) -> dict:
        return {"match": match / 100, "grounding": grounding / 100, "mrr": grounding / 100}

    return {"model": model, "subset": "len_words", "seed": seed, "train_size": 100,
            "length": "words", "threshold": 16, "thresholds": {"max_words": 16,
                                                               "max_relations": 2},
            "wall_time_s": 10.0, "buckets": {"words": [], "relations": []},
            "parts": {"in_distribution": part(*id_), "out_of_distribution": part(*ood),
                      "full": part(*ood)}}


def _verdict(results: list[dict]) -> list[str]:
    exp = Experiment(base={}, models={"rcrn": {}, "ce": {}},
                     subsets={"len_words": {"train_subset": "len_words", "fraction": None,
                                            "length": "words"}},
                     seeds=[0, 1, 2], claim=Claim(model="rcrn", baseline="ce"))
    summary = format_summary(exp, results)
    return [line for line in summary.splitlines() if "**" in line or "not judged" in line
            or "learned" in line]


def test_the_verdict_judges_the_drop_and_the_margin_by_their_intervals():
    # RCRN drops 2-3 points; the baseline learned (ID 90) and falls to 60-70 OOD
    good = [_result("rcrn", k, (95, 95), (95 - d, 94 - d)) for k, d in enumerate((2, 2.5, 3))]
    ce = [_result("ce", k, (90, 90), (70 - k * 5, 66 - k * 3)) for k in range(3)]
    lines = _verdict(good + ce)
    assert lines[0] == "- rcrn OOD drop, Match: 2.5 [1.3, 3.7] (<= 5): **holds**"
    # drops of 2, 3 and 4 points: the interval [0.5, 5.5] contains the bound
    near = [_result("rcrn", k, (95, 95), (95 - d, 95 - d)) for k, d in enumerate((2, 3, 4))]
    assert "[0.5, 5.5] (<= 5): **undecided" in _verdict(near + ce)[0]
    assert "- ce learned: ID Match 90.0, Grounding 90.0" in lines
    assert all("**holds**" in line for line in lines if "rcrn - ce" in line)
    # a drop of 10-12 points refutes the first part
    bad = [_result("rcrn", k, (95, 95), (95 - d, 95 - d)) for k, d in enumerate((10, 11, 12))]
    assert "**refuted**" in _verdict(bad + ce)[0]
    # a drop of 1-9 points: the interval contains the bound
    wide = [_result("rcrn", k, (95, 95), (95 - d, 95 - d)) for k, d in enumerate((1, 5, 9))]
    assert "**undecided (the interval contains the bound)**" in _verdict(wide + ce)[0]
    # a baseline that did not learn is not compared
    chance = [_result("ce", k, (50, 17), (50, 17)) for k in range(3)]
    lines = _verdict(good + chance)
    assert any("not judged: ce did not learn (ID Match 50.0, Grounding 17.0; both must "
               "reach 85)" in line for line in lines)
    assert not any("rcrn - ce, OOD" in line for line in lines)
    # one seed: no interval, no decision
    assert "undecided (one seed)" in _verdict(good[:1] + ce[:1])[0]


def test_a_model_with_no_mismatch_readout_has_no_mrr_not_a_zero_one(done):
    """The cross-encoder without MIL names no mismatched relation: its MRR is shown as
    undefined ('–') in the table and the drop lines, not as 0.0 +- 0.0."""
    from rcrn.cli.commands import synthetic_benchmark
    from rcrn.cli.lengthgen import evaluate_predictions
    from rcrn.structures import Prediction

    d = done.out / "runs" / "rcrn" / "len_words" / "seed0"
    result = json.loads((d / "result.json").read_text())
    preds = [Prediction.from_dict(json.loads(x))
             for x in (d / "predictions.jsonl").read_text().splitlines()]
    test = list(synthetic_benchmark(result["key"]["config"], "test",
                                    progress=False).problems())
    assert any(p.mismatched_relation is not None for p in preds)
    named = evaluate_predictions(test, preds, result["thresholds"])
    assert named["parts"]["full"]["mrr"] is not None
    for p in preds:
        p.mismatched_relation = None
    silent = evaluate_predictions(test, preds, result["thresholds"])
    for part in silent["parts"].values():
        assert part["mrr"] is None and part["mrr_oracle"] is None
        assert part["match"] is not None and part["grounding"] is not None
    results = [dict(_result("ce", k, (90, 90), (70, 66)), parts={
        name: dict(part, mrr=None) for name, part in
        _result("ce", k, (90, 90), (70, 66))["parts"].items()}) for k in range(3)]
    exp = Experiment(base={}, models={"ce": {}},
                     subsets={"len_words": {"train_subset": "len_words", "fraction": None,
                                            "length": "words"}},
                     seeds=[0, 1, 2], claim=Claim(model="ce", baseline="ce"))
    summary = format_summary(exp, results)
    row = next(line for line in summary.splitlines() if line.startswith("| ce |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert [cells[i] for i in (7, 10, 13)] == ["–", "–", "–"]      # ID / OOD / full MRR
    assert "MRR – (no mismatch readout)" in summary


def test_the_summary_gives_grounding_with_the_match_decision_aside():
    """A model that finds the referent but misjudges the match has a low Grounding and a
    high oracle grounding; the summary shows both."""
    def with_oracle(r: dict, id_: float, ood: float) -> dict:
        parts = dict(r["parts"])
        parts["in_distribution"] = dict(parts["in_distribution"], grounding_oracle=id_)
        parts["out_of_distribution"] = dict(parts["out_of_distribution"],
                                            grounding_oracle=ood)
        parts["full"] = dict(parts["full"], grounding_oracle=(id_ + ood) / 2)
        return dict(r, parts=parts)

    results = [with_oracle(_result("ce", k, (60, 20), (50, 10)), 0.9 + k / 100, 0.8)
               for k in range(3)]
    exp = Experiment(base={}, models={"ce": {}},
                     subsets={"len_words": {"train_subset": "len_words", "fraction": None,
                                            "length": "words"}},
                     seeds=[0, 1, 2], claim=Claim(model="ce", baseline="ce"))
    lines = format_summary(exp, results).splitlines()
    at = lines.index("| Model | Subset | ID | OOD | Full |")
    assert "match decision set aside" in lines[at - 2]
    assert lines[at + 2] == "| ce | len_words | 91.0 ± 1.0 | 80.0 ± 0.0 | 85.5 ± 0.5 |"


def test_claim_bounds_are_read_and_checked(dataset):
    exp = load_experiment(experiment(dataset, claim={"model": "rcrn", "baseline":
                                                     "no_top_down", "max_drop": 3}))
    assert exp.claim == Claim("rcrn", "no_top_down", max_drop=3)
    with pytest.raises(ConfigError, match=r"claim\.min_margin must be a number of points"):
        load_experiment(experiment(dataset, claim={"min_margin": "ten"}))
    with pytest.raises(ConfigError, match="'claim' takes model, baseline, max_drop"):
        load_experiment(experiment(dataset, claim={"modle": "x"}))


TINY_CE = {"arch": "cross_encoder", "word_dim": 8, "vis_dim": 8, "dim": 16, "layers": 1,
           "heads": 2, "ff": 16}


def test_quick_runs_its_grid_after_estimating_it_and_the_full_one(dataset, tmp_path):
    import torch

    config = experiment(
        dataset, seeds=[0, 1], keep_checkpoints=False,
        models={"ce": {"model": TINY_CE},
                "rcrn_vl": {"model": {"vl": {"layers": 1, "dim": 16, "heads": 2, "ff": 16}},
                            "init_from": "ce"}},
        subsets={"len_words": {"train_subset": "len_words"}},
        quick={"seeds": [1], "overrides": {"train": {"steps": 1}}})
    lines: list[str] = []
    report = run_experiment(config, tmp_path, quick=True, progress=False, log=lines.append)
    # the initialised model trains after the model it starts from
    assert [(o.model, o.seed, o.status) for o in report.outcomes] == [
        ("ce", 1, "trained"), ("rcrn_vl", 1, "trained")]
    assert all(o.result["steps"] == 1 for o in report.outcomes)
    estimate = json.loads((tmp_path / "time_estimate.json").read_text())
    assert (estimate["runs"], estimate["full_runs"]) == (2, 4)
    assert 0 < estimate["seconds"] < estimate["full_seconds"]   # 1 step against 2
    assert set(estimate["probe"]) == {"ce", "rcrn_vl"}
    assert any(line.startswith("time estimate: 2 run(s), about ") for line in lines)
    assert any(line.startswith("the full grid: 4 run(s), about ") for line in lines)
    assert "time: the full grid (4 runs) is estimated at" in report.summary
    # rcrn_vl's vision-language layers start from ce's checkpoint, which is kept
    ce_ckpt = tmp_path / "runs" / "ce" / "len_words" / "seed1" / "last.pt"
    vl_run = tmp_path / "runs" / "rcrn_vl" / "len_words" / "seed1"
    assert ce_ckpt.exists() and not (vl_run / "last.pt").exists()
    assert yaml.safe_load((vl_run / "config.yaml").read_text())["model"]["vl"]["init"] == \
        str(ce_ckpt)
    # a retrained source retrains what it initialises
    exp = load_experiment(config).reduced()
    ce_key = report.outcomes[0].result["key"]
    assert report.outcomes[1].result["key"]["init_from"] == {"model": "ce", "key": ce_key}
    assert exp.seeds == [1] and exp.init_from == {"rcrn_vl": "ce"}
    assert torch.load(ce_ckpt, weights_only=False)["step"] == 1


@pytest.mark.parametrize("change, message", [
    ({"models": {"a": {"init_from": "b"}}}, r"models\.a\.init_from: 'b' is not another"),
    ({"models": {"a": {}, "b": {"init_from": "a"}, "c": {"init_from": "b"}}},
     r"models\.c\.init_from: 'b' is itself initialised"),
    ({"models": {"a": {}, "b": {"init_from": "a"}}, "quick": {"models": ["b"]}},
     "quick.models lists b but not a"),
    ({"quick": {"steps": 3}}, "'quick' takes models, subsets, seeds, overrides"),
    ({"quick": {"subsets": ["nope"]}}, "quick.subsets must list some of"),
])
def test_quick_and_init_from_entries_are_checked(dataset, change, message):
    with pytest.raises(ConfigError, match=message):
        load_experiment(experiment(dataset, **change))


def test_quick_needs_a_quick_section(dataset, tmp_path):
    with pytest.raises(ConfigError, match="no 'quick' section"):
        run_experiment(experiment(dataset), tmp_path, quick=True, log=lambda s: None)


def test_a_model_entry_may_start_from_its_own_base_config(dataset):
    exp = load_experiment(experiment(dataset, models={
        "rcrn": {}, "official": {"base": "official.yaml", "train": {"lr": 0.002}}}))
    official = run_config(exp, "official", "len_words", 0)
    toolkit = run_config(exp, "rcrn", "len_words", 0)
    # the preset's own settings, with the experiment's overrides and the entry's on top
    assert official["model"]["layers"] == "release" and official["loss"]["reg"] == "release"
    assert official["train"]["grad_clip"] == 0.5 and official["train"]["lr"] == 0.002
    assert official["model"]["word_dim"] == TINY_MODEL["word_dim"]
    assert official["train"]["steps"] == toolkit["train"]["steps"] == 2
    assert official["data"] == toolkit["data"]       # one dataset for both
    assert "layers" not in toolkit["model"]
    with pytest.raises(ConfigError, match=r"models\.x\.base: base config 'nope.yaml' not"):
        load_experiment(experiment(dataset, models={"x": {"base": "nope.yaml"}}))


def test_pretrained_models_fine_tune_from_a_stage_trained_once_per_seed(dataset, tmp_path):
    import torch

    pre = {"model": dict(TINY_CE, verifier=True), "data": {"train_subset": "len_words"},
           "train": {"steps": 3}}
    tuned = {"model": dict(TINY_CE, verifier=True), "train": {"lr": 1e-9},
             "pretrained": "pre"}
    config = experiment(dataset, seeds=[0], pretrain={"pre": pre},
                        models={"ce": tuned, "ce_mil": {**tuned, "model": dict(
                            TINY_CE, verifier=True, mil=True)}})
    lines: list[str] = []
    report = run_experiment(config, tmp_path, progress=False, log=lines.append)
    assert [o.status for o in report.outcomes] == ["trained"] * 4
    # one stage for both models and both subsets, its checkpoint kept
    assert sum(line.startswith("pretraining pre / seed 0") for line in lines) == 1
    stage = tmp_path / "pretrain" / "pre" / "seed0"
    info = json.loads((stage / "pretrain.json").read_text())
    assert info["steps"] == 3 and info["train_size"] > 0
    assert "pretrain pre" in json.loads((tmp_path / "time_estimate.json").read_text())["probe"]
    assert f"| pre | 0 | {info['train_size']} | 3 | " in report.summary
    assert "the full grid (4 runs and 1 pre-training stage(s)) is estimated" in report.summary
    start = torch.load(stage / "last.pt", weights_only=True)["model"]
    for o in report.outcomes:
        assert yaml.safe_load((o.path / "config.yaml").read_text())["train"]["init"] == \
            str(stage / "last.pt")
        assert o.result["key"]["pretrained"]["stage"] == "pre"
        end = torch.load(o.path / "last.pt", weights_only=True)["model"]
        # lr 1e-9: the fine-tuned weights are the stage's (word rows by word)
        for key in ("encoder.layers.0.linear1.weight", "mark", "mark_scale",
                    "match_head.weight"):
            assert torch.allclose(end[key], start[key], atol=1e-6), key
    # done stages and runs are reused; a changed stage makes its runs stale
    lines.clear()
    run_experiment(config, tmp_path, progress=False, log=lines.append)
    assert not any(line.startswith("pretraining") for line in lines)
    run_experiment(config, tmp_path, dry_run=True, log=lines.append)
    assert "pretrain pre / seed 0: done" in lines
    pre["train"]["steps"] = 4
    with pytest.raises(ConfigError, match="4 run.s. .* another config"):
        run_experiment(config, tmp_path, progress=False, log=lines.append)


@pytest.mark.parametrize("change, message", [
    ({"models": {"a": {"pretrained": "b"}}},
     r"models\.a\.pretrained: 'b' is not a stage of the 'pretrain' section \(none\)"),
    ({"pretrain": {"p": 3}}, r"pretrain\.p: must be a mapping"),
    ({"pretrain": {"p": {"modle": {}}}}, r"pretrain\.p"),
])
def test_pretrain_entries_are_checked(dataset, change, message):
    with pytest.raises(ConfigError, match=message):
        load_experiment(experiment(dataset, **change))


def test_jobs_train_runs_side_by_side_after_what_they_start_from(dataset, tmp_path):
    import torch

    pre = {"model": dict(TINY_CE, verifier=True), "data": {"train_subset": "len_words"},
           "train": {"steps": 2}}
    config = experiment(
        dataset, seeds=[0], pretrain={"pre": pre},
        models={"rcrn": {},
                "ce": {"model": dict(TINY_CE, verifier=True), "pretrained": "pre"},
                "rcrn_vl": {"model": {"vl": {"layers": 1, "dim": 16, "heads": 2, "ff": 16}},
                            "init_from": "ce"}},
        subsets={"len_words": {"train_subset": "len_words"}})
    lines: list[str] = []
    report = run_experiment(config, tmp_path / "two", progress=False, jobs=2,
                            log=lines.append)
    # in the plan's order, each after its stage and the run it starts from (rcrn_vl reads
    # ce's checkpoint, which must exist when its worker starts)
    assert [(o.model, o.status) for o in report.outcomes] == [
        ("rcrn", "trained"), ("ce", "trained"), ("rcrn_vl", "trained")]
    assert "training 3 run(s) and 1 pre-training stage(s), 2 at a time" in " ".join(lines)
    started = [line for line in lines if line.endswith("(started)")]
    assert started.index("pretraining pre / seed 0 (started)") < \
        started.index("[2/3] ce / len_words / seed 0: training (started)")
    vl = report.outcomes[2].path
    assert yaml.safe_load((vl / "config.yaml").read_text())["model"]["vl"]["init"] == \
        str(tmp_path / "two" / "runs" / "ce" / "len_words" / "seed0" / "last.pt")
    estimate = json.loads((tmp_path / "two" / "time_estimate.json").read_text())
    # two at a time is no longer than one after the other (`makespan` is tested below;
    # the tiny runs' seconds round to a tenth, so they may be equal)
    assert estimate["jobs"] == 2 and 0 < estimate["jobs_seconds"] <= estimate["seconds"]
    assert 0 < estimate["full_jobs_seconds"] <= estimate["full_seconds"]
    # the same runs trained one after the other give the same results
    one = run_experiment(config, tmp_path / "one", progress=False, log=lambda _: None)
    for a, b in zip(report.outcomes, one.outcomes):
        assert a.result["parts"] == b.result["parts"], a.model
        assert a.result["buckets"] == b.result["buckets"]
        wa = torch.load(a.path / "last.pt", weights_only=False)["model"]
        wb = torch.load(b.path / "last.pt", weights_only=False)["model"]
        assert wa.keys() == wb.keys()
        for key in wa:
            assert torch.allclose(wa[key].float(), wb[key].float(), atol=1e-5), (a.model, key)
    with pytest.raises(ConfigError, match="jobs must be a whole number >= 1, got 0"):
        run_experiment(config, tmp_path / "zero", jobs=0)


def test_makespan_starts_each_task_when_a_worker_and_its_inputs_are_free():
    from rcrn.cli.lengthgen import makespan

    needs = {"stage": set(), "a": set(), "b": {"stage"}, "c": {"b"}}
    seconds = {"stage": 10.0, "a": 5.0, "b": 3.0, "c": 4.0}
    assert makespan(needs, seconds, 1) == 22.0
    assert makespan(needs, seconds, 2) == 17.0   # a beside the stage; b, c wait for it
    assert makespan(needs, seconds, 8) == 17.0
    with pytest.raises(ValueError, match="not given"):
        makespan({"b": {"missing"}}, {"b": 1.0}, 2)
