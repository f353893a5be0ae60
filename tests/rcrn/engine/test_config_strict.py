"""Configs are checked strictly: unknown keys, wrong types and values out of range are
one-line errors naming the key, the value and what is allowed, before anything runs."""

from __future__ import annotations

import ast
import copy
import inspect
from pathlib import Path

import pytest
import torch

from rcrn.cli import main
from rcrn.cli.lengthgen import load_experiment
from rcrn.engine import schema
from rcrn.engine.config import ConfigError, check_config, load_config

CONFIGS = Path(__file__).resolve().parents[3] / "rcrn" / "configs"
SYNTHETIC = CONFIGS / "synthetic.yaml"


def one_line_error(capsys: pytest.CaptureFixture, *expected: str) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    for text in expected:
        assert text in err, (text, err)
    return err


def config(*overrides: str, path: Path = SYNTHETIC) -> dict:
    return load_config(path, list(overrides))


@pytest.mark.parametrize("name", ["synthetic.yaml", "gitm_mr.yaml", "official.yaml",
                                  "vsr.yaml"])
def test_every_shipped_config_passes(name):
    cfg = config(path=CONFIGS / name)
    assert check_config(copy.deepcopy(cfg)) == cfg


def test_the_shipped_experiment_config_passes_with_every_model_entry():
    exp = load_experiment(CONFIGS / "lengthgen.yaml")
    from rcrn.cli.lengthgen import run_config

    for model in exp.models:
        check_config(run_config(exp, model, next(iter(exp.subsets)), exp.seeds[0]))


# every input: what the message must name (key, value, what is allowed / nearest key)
BAD = [
    ("train.stpes=3", ["train.stpes", "3", "did you mean train.steps?", "batch_size"]),
    ("trian.steps=3", ["trian", "did you mean train?"]),
    ("extra=1", ["extra: unknown key", "a config has: data, eval"]),
    ("train.k=5", ["train.k", "did you mean model.k?"]),
    ("data.scnes=3", ["data.scnes", "did you mean data.scenes?"]),
    ("eval.batchsize=3", ["eval.batchsize", "did you mean eval.batch_size?"]),
    ("loss.muu=1", ["loss.muu", "did you mean loss.mu?"]),
    ("model.jointt=3", ["model.jointt", "did you mean model.joint?"]),
    ("region_encoder.pool_sise=3", ["region_encoder.pool_sise",
                                    "did you mean region_encoder.pool_size?"]),
    ("words.glov=x", ["words.glov", "did you mean words.glove?"]),
    ("train.steps=abc", ["train.steps must be an integer >= 1, got 'abc'"]),
    ("model.k=abc", ["model.k must be an integer >= 1, got 'abc'"]),
    ("train.batch_size=0", ["train.batch_size must be an integer >= 1, got 0"]),
    ("train.batch_size=1.5", ["train.batch_size", "got 1.5", "not rounded"]),
    ("train.steps=2.0", ["train.steps", "got 2.0"]),
    ("train.steps=-1", ["train.steps must be an integer >= 1, got -1"]),
    ("train.lr=-1", ["train.lr must be a number > 0, got -1"]),
    ("train.lr=.nan", ["train.lr", "got nan"]),
    ("train.lr=fast", ["train.lr must be a number > 0, got 'fast'"]),
    ("train.log_every=0", ["train.log_every must be an integer >= 1, got 0"]),
    ("train.checkpoint_every=-1", ["train.checkpoint_every must be an integer >= 0, got -1"]),
    ("train.lr_decay=linear", ["train.lr_decay must be one of ['none', 'cosine']"]),
    ("train.amp=fp16", ["train.amp must be off or bf16, got 'fp16'"]),
    ("train.compile=nosuch", ["train.compile", "'nosuch'", "inductor"]),
    ("train.device=tpu", ["train.device", "'tpu'", "cpu, cuda"]),
    ("train.group_by=3", ["train.group_by", "got 3"]),
    ("train=3", ["train must be a mapping of settings, got 3"]),
    ("seed=-1", ["seed must be an integer >= 0", "got -1"]),
    ("loss.mu=abc", ["loss.mu must be a number >= 0, got 'abc'"]),
    ("loss.iou_threshold=2", ["loss.iou_threshold", "<= 1", "got 2"]),
    ("loss.reg=l2", ["loss.reg must be one of ['toolkit', 'release'], got 'l2'"]),
    ("eval.batch_size=0", ["eval.batch_size must be an integer >= 1, got 0"]),
    ("model.k=0", ["model.k must be an integer >= 1, got 0"]),
    ("model.dropout=1", ["model.dropout", "< 1", "got 1"]),
    ("model.relation_diff=maybe", ["model.relation_diff must be true or false, got 'maybe'"]),
    ("model.layers=deep", ["model.layers must be one of ['plain', 'release'], got 'deep'"]),
    ("model.grounding_scale=-1", ["model.grounding_scale", "'learned'", "got -1"]),
    ("model.arch=mlp", ["model.arch must be one of ['rcrn', 'cross_encoder'], got 'mlp'"]),
    ("model.program=(outputs (nonsense))", ["model.program", "no_top_down"]),
    ("model.program=(outputs (match (and (classify (propagate up (select 4 (local)) "
     "match_up)))))",
     ["model.program", "top 4 regions but model.k is 5", "model.k=4"]),
    ("model.message_reduce.match_upp=min", ["model.message_reduce.match_upp",
                                            "did you mean model.message_reduce.match_up?"]),
    ("model.message_reduce.match_up=max", ["model.message_reduce.match_up", "'max'",
                                           "['sum', 'min']"]),
    ("region_encoder.channels=[4, 8]", ["region_encoder.channels", "3 integers", "[4, 8]"]),
    ("region_encoder.pool_size=0", ["region_encoder.pool_size", "got 0"]),
    ("words.freeze=yes please", ["words.freeze must be true or false"]),
    ("data.scenes=-5", ["data.scenes must be an integer >= 1, got -5"]),
    ("data.train_subset=len_foo", ["data.train_subset", "'len_words'", "'len_foo'"]),
    ("data.length=chars", ["data.length", "'words'", "'chars'"]),
    ("data.parser=nope", ["data.parser", "'rule'", "'nope'"]),
    ("data.detector=yolo", ["data.detector", "'components'", "'yolo'"]),
    ("data.benchmark=coco", ["data.benchmark", "'whatsup'", "'coco'"]),
    ("train.=3", ["override 'train.=3'", "empty part"]),
    ("train.steps=[1", ["override 'train.steps=[1'", "not valid YAML", "line 1"]),
]


@pytest.mark.parametrize("override, expected", BAD, ids=[b[0] for b in BAD])
def test_a_bad_setting_is_one_line_naming_it_before_training(override, expected, tmp_path,
                                                              capsys):
    out = tmp_path / "run"
    assert main(["train", "--out", str(out), f"data.root={tmp_path / 'data'}",
                 override]) == 2
    one_line_error(capsys, *expected)
    assert not (tmp_path / "data").exists() and not (out / "last.pt").exists()


def test_demo_and_lengthgen_check_their_configs(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "d"), "--data", str(tmp_path / "data"),
                 "train.stpes=3"]) == 2
    one_line_error(capsys, "rcrn demo: error: train.stpes", "did you mean train.steps?")
    assert main(["lengthgen", "--out", str(tmp_path / "l"), "--dry-run",
                 "train.batch_size=1.5"]) == 2
    one_line_error(capsys, "rcrn lengthgen: error: train.batch_size", "1.5")
    assert not (tmp_path / "data").exists()


def test_a_lengthgen_model_entry_is_checked(tmp_path):
    exp = {"base": str(SYNTHETIC), "overrides": {"data": {"root": str(tmp_path / "data")}},
           "models": {"rcrn": {"train": {"lr": -1}}}, "subsets": {"all": {}}}
    from rcrn.cli.lengthgen import run_experiment

    with pytest.raises(ConfigError, match=r"models\.rcrn: .*train\.lr must be a number > 0, "
                                          r"got -1"):
        run_experiment(exp, tmp_path / "out", progress=False, log=lambda s: None)
    assert not (tmp_path / "data").exists()


def test_cuda_is_refused_without_cuda_and_accepted_with_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=r"train\.device .* got 'cuda' \(CUDA is not "
                                          r"available"):
        check_config(config("train.device=cuda"))
    for ok in ("cpu", "auto"):
        check_config(config(f"train.device={ok}"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    check_config(config("train.device=cuda"))
    check_config(config("train.device=cuda:0"))
    with pytest.raises(ConfigError, match=r"got 'cuda:3' \(this machine has 1 CUDA"):
        check_config(config("train.device=cuda:3"))


def test_cuda_through_the_command_line_without_cuda(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["train", "--out", str(tmp_path / "r"), "train.device=cuda"]) == 2
    one_line_error(capsys, "train.device", "'cuda'", "CUDA is not available")


def test_good_values_pass_and_only_numbers_written_as_text_change():
    cfg = config("train.lr=1e-3", "loss.mu=5E-1", "train.checkpoint_every=0",
                 "train.lr_decay=cosine", "train.amp=bf16", "train.compile=false",
                 "model.program=no_top_down", "model.message_reduce.match_up=min",
                 "data.train_subset=null", "data.detector=null", "model.k=3")
    before = copy.deepcopy(cfg)
    check_config(cfg)
    assert cfg["train"]["lr"] == 0.001 and cfg["loss"]["mu"] == 0.5
    before["train"]["lr"], before["loss"]["mu"] = 0.001, 0.5
    assert cfg == before
    check_config(config("train.checkpoint_every=100"))
    # "1e3" is not an integer: an integer setting reads only integers
    with pytest.raises(ConfigError, match=r"train\.steps must be an integer >= 1, got '1e3'"):
        check_config(config("train.steps=1e3"))


def test_data_keys_follow_the_benchmark():
    # gitm_mr: its own keys and rules
    gitm = config(path=CONFIGS / "gitm_mr.yaml")
    with pytest.raises(ConfigError, match=r"data\.train_subset must be len16, len11 or "
                                          r"uniform .* got 'len_words'"):
        check_config(load_config(CONFIGS / "gitm_mr.yaml", ["data.train_subset=len_words"]))
    check_config(load_config(CONFIGS / "gitm_mr.yaml", ["data.train_subset=Train-Len11",
                                                        "data.threshold=11"]))
    with pytest.raises(ConfigError, match=r"data\.threshold must be an integer >= 1 or null, "
                                          r"got 1\.5"):
        check_config(dict(gitm, data=dict(gitm["data"], threshold=1.5)))
    # the synthetic data section trained with --benchmark gitm_mr (official.yaml's use in
    # docs/usage.md): the synthetic keys are known, checked by their own rules, and unused
    official = ["data.benchmark=gitm_mr", "data.train_subset=len16"]
    check_config(load_config(CONFIGS / "official.yaml", official))
    with pytest.raises(ConfigError, match=r"data\.scenes must be an integer >= 1, got 'x'"):
        check_config(load_config(CONFIGS / "official.yaml", [*official, "data.scenes=x"]))
    # vsr / whatsup
    vsr = ["data.proposals={format: vinvl, path: p.tsv}", "data.image_size=[64, 48]",
           "data.concept_filter=false"]
    check_config(load_config(CONFIGS / "vsr.yaml", vsr))
    check_config(load_config(CONFIGS / "vsr.yaml", ["data.benchmark=whatsup",
                                                    "data.split=controlled_a"]))
    with pytest.raises(ConfigError, match=r"data\.image_size .* got 8"):
        check_config(load_config(CONFIGS / "vsr.yaml", ["data.image_size=8"]))
    with pytest.raises(ConfigError, match=r"data\.proposals .* got \{'path': 'p'\}"):
        check_config(load_config(CONFIGS / "vsr.yaml", ["data.proposals={path: p}"]))
    with pytest.raises(ConfigError, match=r"data\.splitt: unknown key .* did you mean "
                                          r"data\.split\? data \(benchmark vsr\) takes"):
        check_config(load_config(CONFIGS / "vsr.yaml", ["data.splitt=x"]))


def test_model_fields_follow_the_arch():
    ce = ["model.arch=cross_encoder"]
    cfg = config(*ce)
    cfg["model"] = {"arch": "cross_encoder", "dim": 64, "heads": 4, "layers": 2, "mil": True}
    check_config(cfg)
    with pytest.raises(ConfigError, match=r"model\.lstm_hidden: unknown key for model\.arch "
                                          r"cross_encoder \(value 64; a setting of model\.arch "
                                          r"rcrn\)"):
        check_config(config(*ce))
    with pytest.raises(ConfigError, match=r"model\.dim must be divisible by model\.heads"):
        check_config(dict(cfg, model=dict(cfg["model"], dim=30)))
    with pytest.raises(ConfigError, match=r"model\.mil must be true or false, got 1"):
        check_config(dict(cfg, model=dict(cfg["model"], mil=1)))
    # RCRNConfig.validate's rules come through as they are
    with pytest.raises(ConfigError, match=r"model\.relation_align applies to layers 'plain'"):
        check_config(config("model.layers=release"))
    with pytest.raises(ConfigError, match=r"model\.vl\.dim must be divisible"):
        check_config(config("model.vl={layers: 1, dim: 30}"))
    with pytest.raises(ConfigError, match=r"model\.vl\.depth: unknown setting"):
        check_config(config("model.vl={depth: 2}"))


def test_every_key_the_trainer_reads_is_in_the_schema():
    assert {"steps", "batch_size", "lr", "front_lr", "lr_decay", "log_every", "eval_every",
            "checkpoint_every", "grad_clip", "init", "match_warmup", "num_workers", "group_by",
            "device", "backend", "amp", "compile", "find_unused_parameters"} == set(schema.TRAIN)
    from rcrn.losses import LossConfig
    from rcrn.models.region_cnn import RegionCNN

    assert set(schema.REGION_ENCODER) < set(RegionCNN.__init__.__code__.co_varnames)
    assert set(LossConfig.__dataclass_fields__) == set(schema.LOSS)
    text = schema.describe()
    for line in ("train.checkpoint_every: an integer >= 0 (default 200)",
                 "data.rules (gitm_mr): one of ['official', 'toolkit'] (default 'official')",
                 "model.k (arch rcrn): an integer >= 1", "model.mil (arch cross_encoder)"):
        assert line in text


def _tables():
    yield from (("seed", "", s) for s in [schema.SECTIONS["seed"]])
    for name in ("train", "eval", "loss", "words", "region_encoder"):
        yield from ((name, key, s) for key, s in schema.SECTIONS[name].items())
    for bench, table in schema.DATA.items():
        yield from ((f"data ({bench})", key, s) for key, s in table.items())


def test_every_default_passes_its_own_check():
    checked = 0
    for name, key, setting in _tables():
        assert setting(f"{name}.{key}", setting.default) == setting.default, (name, key)
        checked += 1
    assert checked > 40


def test_a_section_holds_every_key_with_the_given_value_or_the_default():
    from rcrn.losses import LossConfig
    from rcrn.models.region_cnn import RegionCNN

    train = schema.section({"train": {"steps": 7, "lr": "1e-3"}}, "train")
    assert train.steps == 7 and train["lr"] == 1e-3       # given (a number written as text)
    assert train.batch_size == 64 and train.checkpoint_every == 200   # the table's defaults
    assert set(train) == set(schema.TRAIN)
    assert schema.section({}, "eval").batch_size == 128
    loss = schema.section({"loss": None}, "loss")
    assert dict(loss) == {k: getattr(LossConfig(), k) for k in schema.LOSS}
    enc = schema.section({"region_encoder": {"pool_size": 2}}, "region_encoder")
    signature = inspect.signature(RegionCNN).parameters
    assert enc.pool_size == 2 and tuple(enc.strides) == signature["strides"].default
    with pytest.raises(AttributeError, match="read-only"):
        train.steps = 3
    with pytest.raises(AttributeError, match="train has no setting 'stepz'"):
        getattr(train, "stepz")  # noqa: B009
    # a default list is a copy: changing one section's value leaves the table alone
    enc.channels.append(0)
    assert schema.section({}, "region_encoder").channels == schema.REGION_ENCODER[
        "channels"].default and len(schema.REGION_ENCODER["channels"].default) == 3


def test_a_data_section_takes_its_benchmarks_defaults():
    synthetic = schema.section({}, "data")
    assert synthetic.benchmark == "synthetic" and synthetic.root == "data/synthetic"
    assert (synthetic.scenes, synthetic.parser, synthetic.detector) == (500, "rule",
                                                                         "components")
    vsr = schema.section({"data": {"benchmark": "vsr", "root": "d"}}, "data")
    assert vsr.split == "random/train" and vsr.root == "d" and "scenes" not in vsr
    assert schema.section({"data": {"benchmark": "whatsup"}}, "data").split is None
    gitm = schema.section({"data": {"benchmark": "gitm-mr"}}, "data")
    assert gitm.eval_split == "val" and gitm.rules == "official" and gitm.root is None
    # an explicit null is kept (no evaluation), not replaced by the default
    assert schema.section({"data": {"benchmark": "gitm_mr", "eval_split": None}},
                          "data").eval_split is None


@pytest.mark.parametrize("cfg, expected", [
    ({"train": {"stepz": 3}}, "train.stepz: unknown key (value 3); did you mean train.steps?"),
    ({"train": {"steps": 1.5}}, "train.steps must be an integer >= 1, got 1.5"),
    ({"eval": []}, "eval must be a mapping of settings, got []"),
    ({"data": {"benchmark": "vsr", "scenes": 0}}, "data.scenes must be an integer >= 1"),
])
def test_a_section_is_checked_as_it_is_read(cfg, expected):
    name = next(iter(cfg))
    with pytest.raises(ConfigError) as err:
        schema.section(cfg, name)
    assert expected in str(err.value)


def test_the_trainer_takes_the_schemas_defaults(tmp_path):
    from rcrn.engine.trainer import Trainer
    from rcrn.testing import learnable_problems

    trainer = Trainer({"model": {"word_dim": 8, "lstm_hidden": 8, "joint": 8, "hidden": 8,
                                 "sim_dim": 8, "vis_dim": 8, "spatial_dim": 4,
                                 "pair_dim": 8, "classify_hidden": 4}},
                      learnable_problems(4, seed=0, feature_dim=8), tmp_path)
    assert trainer.steps == schema.TRAIN["steps"].default
    assert trainer.checkpoint_every == schema.TRAIN["checkpoint_every"].default
    assert trainer.optimizer.param_groups[0]["lr"] == schema.TRAIN["lr"].default
    assert trainer.loss_cfg.mu == schema.LOSS["mu"].default


@pytest.mark.parametrize("content, expected", [
    (bytes(range(256)), ["not a UTF-8 text file", "byte 0x80 at offset 128"]),
    (b"\xff\xfe\x00t\x00r\x00a\x00i\x00n", ["not a UTF-8 text file", "byte 0xff at offset 0"]),
    (b"train:\n  steps: 3\x00\n", ["not valid YAML", "#x0000"]),
    (b"train: [unclosed\n", ["not valid YAML", "line 2, column 1"]),
    (b"- a list\n", ["a config file is a mapping at the top level"]),
    (b"_base_: [1, 2]\n", ["_base_ must be the path of a config file"]),
    (b"_base_: cfg.yaml\n", ["_base_ 'cfg.yaml' leads back", "cycle"]),
])
def test_an_unusable_config_file_is_one_line_naming_it(content, expected, tmp_path, capsys):
    path = tmp_path / "cfg.yaml"
    path.write_bytes(content)
    assert main(["train", "--config", str(path), "--out", str(tmp_path / "r")]) == 2
    err = one_line_error(capsys, *expected)
    assert str(path) in err


def test_a_base_cycle_of_two_files_and_a_folder(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("_base_: b.yaml\n")
    (tmp_path / "b.yaml").write_text("_base_: a.yaml\n")
    with pytest.raises(ConfigError, match="cycle"):
        load_config(tmp_path / "a.yaml")
    assert main(["train", "--config", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    one_line_error(capsys, f"config file {tmp_path} is a folder")
    assert main(["demo", "--config", str(tmp_path / "b.yaml"), "--out",
                 str(tmp_path / "r")]) == 2
    one_line_error(capsys, "rcrn demo: error:", "cycle")


# ------------------------------------------------------------------------ fuzzing
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rcrn.models import RCRNConfig  # noqa: E402

_KEYS = sorted({f"{name}.{key}" for name, table in schema.SECTIONS.items()
                if isinstance(table, dict) and name != "data" for key in table}
               | {f"data.{key}" for table in schema.DATA.values() for key in table}
               | {f"model.{key}" for key in RCRNConfig.__dataclass_fields__}
               | {"seed", "train.stpes", "model.kk", "nosection.key", "data"})
_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "abc", "1e-3", "-1", "nan", "inf", "cuda", "cpu", "[1, 2]", "{}",
                     "rcrn", "release", "learned", "0x10", "1_000", "~", "true"]),
    st.lists(st.integers(-3, 300), max_size=4), st.dictionaries(st.text(max_size=3),
                                                                st.integers(), max_size=2))


@settings(deadline=None, max_examples=150, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(_KEYS), _VALUES), min_size=1, max_size=4))
def test_fuzz_settings_pass_unchanged_or_fail_in_one_line_naming_the_key(items):
    """Any known or misspelt key with any value: check_config accepts it unchanged (a
    number written as text aside) or refuses it in one line that names a key given."""
    config = load_config(CONFIGS / "synthetic.yaml")
    for key, value in items:
        node = config
        *parents, last = key.split(".")
        for part in parents:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[last] = copy.deepcopy(value)
    given_config = copy.deepcopy(config)
    try:
        checked = check_config(config)
    except ConfigError as exc:
        text = str(exc)
        assert "\n" not in text and len(text) < 2000, text
        assert any(key.split(".")[-1] in text or key.split(".")[0] in text
                   for key, _ in items), (items, text)
        return

    def same(a, b):
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(
                same(a[k], b[k]) for k in a)
        if isinstance(a, str) and not isinstance(b, str):  # a number written as text
            return schema._NUMBER_TEXT.match(a) is not None and float(a) == b
        return type(a) is type(b) and (a == b or a != a)
    assert same(given_config, checked), (items, checked)


def test_one_k_serves_select_and_classify():
    """``model.k`` is the only K: a named program is built with it, and a program text
    that selects another K is refused."""
    from rcrn import programs as P
    from rcrn.models import RCRN

    for name in P.ABLATIONS:
        model = RCRN(RCRNConfig(k=3, program=name, word_dim=4, lstm_hidden=4, joint=4,
                                hidden=4, sim_dim=4, vis_dim=4, spatial_dim=2, pair_dim=4,
                                classify_hidden=4), vocab_size=3)
        text = P.to_text(model.program)
        assert "(select 3 " in text and "(select 5 " not in text, (name, text)
        assert model.propagation.select.k == model.classify.k == 3
    with pytest.raises(P.ProgramError, match="top 5 regions but model.k is 3"):
        P.resolve(P.to_text(P.RCRN_PROGRAM), 3)
    assert P.resolve(P.to_text(P.RCRN_PROGRAM), 5) == P.RCRN_PROGRAM


def _reads_a_section_key(node: ast.AST) -> str | None:
    """The section name of ``config.get("train", ...).get(key, default)`` (or
    ``(config.get("train") or {}).get(key, default)``, ``config["train"].get(key,
    default)``), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and len(node.args) == 2):
        return None
    inner = node.func.value
    if isinstance(inner, ast.BoolOp):
        inner = inner.values[0]
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
            and inner.func.attr == "get" and inner.args:
        key = inner.args[0]
    elif isinstance(inner, ast.Subscript):
        key = inner.slice
    else:
        return None
    names = {"train", "eval", "loss", "words", "region_encoder", "data"}
    return key.value if isinstance(key, ast.Constant) and key.value in names else None


def test_no_code_reads_a_section_key_with_a_default_of_its_own():
    """Settings are read through ``schema.section`` (defaults written once), not with
    ``config.get("train", {}).get("steps", 1000)`` at the site that reads them."""
    root = Path(__file__).resolve().parents[3]
    found = []
    for package in ("rcrn", "benchmarks", "parsers", "detectors"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                name = _reads_a_section_key(node)
                if name:
                    found.append(f"{path.relative_to(root)}:{node.lineno} ({name})")
    assert not found, found
