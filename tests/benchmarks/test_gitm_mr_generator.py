"""Building GITM-MR data: from Ref-Reasoning expressions and from the synthetic benchmark."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from benchmarks.base import DataError
from benchmarks.gitm_mr import (
    SUBSTITUTIONS,
    GenerateConfig,
    GITMMRBenchmark,
    MLMUnavailable,
    PseudoPerplexity,
    generate_from_refreasoning,
)
from benchmarks.gitm_mr.cli import register
from benchmarks.gitm_mr.generator import MLM_SKIPPED, find_sites, substitute
from benchmarks.gitm_mr.substitutions import RELATION_VOCABULARY, count_phrases
from parsers import load as load_parser
from rcrn.errors import RcrnError
from rcrn.structures import Proposals

TRAIN = {
    "1": "the man wearing a hat that is to the left of the car",
    "2": "the cup on top of the table",
    "3": "the woman holding an umbrella and sitting on the bench",
    "4": "the dog under the table that is next to the chair",
    "5": "the boy riding a horse",
    "6": "the man standing in front of the building",
    "7": "the red apple",
    "8": "the girl eating a sandwich behind the fence",
}


def sgmn(words: list[tuple[str, int, str]], triples: list[tuple[int, int, int]]
         ) -> tuple[dict, dict]:
    """An SGMN ``sg_seqs`` record and its ``sgs`` words (word, split id, dependency)."""
    seq = [{"seq": list(t), "type": "SPO"} for t in triples]
    return ({"seq_sg": seq, "com_seq": [len(seq) - 1], "num_seq": len(seq), "split_to_seq": {}},
            {"words_info": [[1.0, dep, split, w] for w, split, dep in words], "co_index": {}})


def write_refreasoning(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "train_expressions.json").write_text(json.dumps(
        {k: {"image_id": 10 + int(k) % 3, "bbox": [10, 20, 30, 40], "expression": v}
         for k, v in TRAIN.items()}))
    val = {"101": "the cat to the right of the dog", "102": "the lamp above the desk"}
    (root / "val_expressions.json").write_text(json.dumps(
        {k: {"image_id": 20, "bbox": [0, 0, 5, 5], "expression": v} for k, v in val.items()}))
    s1, g1 = sgmn([("the", 0, "mod"), ("cat", 0, "head"), ("to", 1, "rel"), ("the", 1, "rel"),
                   ("right", 1, "rel"), ("of", 1, "rel"), ("the", 2, "mod"), ("dog", 2, "head")],
                  [(0, 1, 2)])
    s2, g2 = sgmn([("the", 0, "mod"), ("lamp", 0, "head"), ("above", 1, "rel"),
                   ("the", 2, "mod"), ("desk", 2, "head")], [(0, 1, 2)])
    (root / "val_sg_seqs.json").write_text(json.dumps({"101": s1, "102": s2}))
    (root / "val_sgs.json").write_text(json.dumps({"101": g1, "102": g2}))
    return root


def templated(root: Path) -> Path:
    """60 one-relation expressions over nine table relations."""
    root.mkdir(parents=True, exist_ok=True)
    combos = itertools.islice(itertools.product(
        ["the man", "the woman", "the boy", "the girl"],
        ["to the left of", "to the right of", "wearing", "holding", "next to", "behind",
         "in front of", "above", "below"],
        ["the car", "the tree", "the table", "the dog", "the bench"]), 0, None, 3)
    (root / "train_expressions.json").write_text(json.dumps(
        {str(i): {"image_id": i % 5, "bbox": [0, 0, 10, 10], "expression": " ".join(c)}
         for i, c in enumerate(combos)}))
    return root


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rcrn")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


def test_sites_and_substitution() -> None:
    text = "the man standing in front of the building"
    graph = load_parser("rule").parse(text)
    (site,) = find_sites(text, graph)
    assert site.phrase == "standing in front of"  # the longest table phrase wins
    neg_text, neg_graph, foil = substitute(text, graph, site, "standing behind")
    assert neg_text == "the man standing behind the building"
    assert neg_text.split()[foil[0]:foil[1]] == ["standing", "behind"]
    assert [e.text for e in neg_graph.entities] == [e.text for e in graph.entities]
    assert neg_graph.relations[site.relation].text == "standing behind"
    assert neg_graph.entity_tokens(1) == ["the", "building"]  # spans shifted
    assert count_phrases("standing in front of the car in front of".split()) == {
        "standing in front of": 1, "in front of": 1}
    assert len(SUBSTITUTIONS) == 27 and "looking at" in RELATION_VOCABULARY


def test_generate_from_refreasoning_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manifest = generate_from_refreasoning(write_refreasoning(tmp_path / "rr"), out,
                                          GenerateConfig(seed=1, candidates=2))
    report = manifest["report"]
    train, val = report["splits"]["train"], report["splits"]["val"]
    assert train["graphs_from_parser"] == 8 and val["graphs_from_sgmn"] == 2
    assert train["without_sites"] == 1  # "the red apple" has no relation
    for entry in (train, val):
        assert 0.0 <= entry["relation_tv"] <= 1.0 and 0.0 <= entry["relation_tv_uniform"] <= 1.0
    bias = report["bias_classifier"]
    assert len(bias["runs"]) == 2 and 0.0 <= bias["heldout_accuracy"] <= 1.0
    assert bias["heldout_accuracy"] == min(r["heldout_accuracy"] for r in bias["runs"])
    assert report["pseudo_perplexity"] == MLM_SKIPPED
    assert json.loads((out / "manifest.json").read_text())["report"]["pseudo_perplexity"] \
        == MLM_SKIPPED
    total = 0
    for split in ("train", "val"):
        bench = GITMMRBenchmark(out, split)
        assert len(bench) % 2 == 0  # items need no proposals
        for pos, neg in zip(bench.items[0::2], bench.items[1::2]):
            total += 1
            assert (pos["match"], neg["match"]) == (1, 0)
            assert neg["foil_phrase"] in SUBSTITUTIONS[neg["target_phrase"]]
            # the texts differ only by the phrase, at foil_indices
            start, end = neg["foil_indices"]
            words, old = pos["expression"].split(), neg["target_phrase"].split()
            assert words[start:start + len(old)] == old
            assert (words[:start] + neg["foil_phrase"].split() + words[start + len(old):]
                    == neg["expression"].split())
            assert " ".join(neg["expression"].split()[start:end]) == neg["foil_phrase"]
            gp, gn = bench.graph(pos["id"]), bench.graph(neg["id"])
            assert [e.text for e in gp.entities] == [e.text for e in gn.entities]
            differ = [k for k, (a, b) in enumerate(zip(gp.relations, gn.relations))
                      if (a.text, a.subject, a.object) != (b.text, b.subject, b.object)]
            k, how = bench._mismatch(neg)
            assert differ == [k] and how == "foil_pos"
            assert neg["foil_phrase"] in gn.relations[k].text
    assert total == 9
    len16 = GITMMRBenchmark(out, "train", subset="len16")
    assert len(len16) == 14  # every generated train pair has at most 16 words
    assert json.loads((out / "small" / "train_small_sent_ids_11.json").read_text())["pos"]


def test_balancing_and_rejection_reduce_the_relation_distance(tmp_path: Path) -> None:
    root = templated(tmp_path / "rr")
    uniform = generate_from_refreasoning(root, tmp_path / "a",
                                         GenerateConfig(balance=0, reject=0))
    balanced = generate_from_refreasoning(root, tmp_path / "b",
                                          GenerateConfig(balance=4, reject=0.2))
    u, b = uniform["report"]["splits"]["train"], balanced["report"]["splits"]["train"]
    assert u["pairs"] == 60 and b["rejected_for_balance"] > 0
    assert b["pairs"] == 60 - b["rejected_for_balance"]
    assert b["relation_tv"] < 0.75 * u["relation_tv"]
    again = generate_from_refreasoning(root, tmp_path / "c",
                                       GenerateConfig(balance=4, reject=0.2))
    assert again["report"] == balanced["report"]  # seeded


def test_pseudo_perplexity_filter_with_a_scorer(tmp_path: Path) -> None:
    def scorer(texts: list[str]) -> list[float]:
        return [50.0 if "looking at" in t or "behind" in t else 10.0 for t in texts]

    out = tmp_path / "out"
    manifest = generate_from_refreasoning(templated(tmp_path / "rr"), out,
                                          GenerateConfig(max_ppl_ratio=2.0), scorer=scorer)
    entry = manifest["report"]["splits"]["train"]
    assert entry["rejected_candidates"] > 0
    assert entry["mean_ppl_matched"] == pytest.approx(10.0)
    negatives = json.loads((out / "expression" / "train_expressions_foil_rel.json").read_text())
    # a positive mentioning "behind" is itself at 50, so only its substitutes are far
    for rec in negatives.values():
        if "behind" not in rec["target_phrase"]:
            assert rec["foil_phrase"] not in ("looking at", "behind")
    assert manifest["report"]["pseudo_perplexity"]["model"] == "custom scorer"


def test_trained_masked_lm_drives_the_pseudo_perplexity_filter(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A masked LM trained by ``rcrn gitm-mr train-mlm`` loads through transformers,
    scores word salad far above fluent text, matches a direct re-computation of the
    pseudo-perplexity, and filters the generator's candidates."""
    pytest.importorskip("transformers")
    import torch

    root = templated(tmp_path / "rr")
    model_dir = tmp_path / "mlm"
    assert run_cli(["gitm-mr", "train-mlm", "--refreasoning", str(root), "--out",
                    str(model_dir), "--steps", "150", "--batch-size", "32", "--hidden", "32",
                    "--layers", "1", "--heads", "2", "--lr", "2e-3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["texts"] == 60 and summary["vocabulary"] == 5 + 22  # specials + distinct words
    assert summary["last_loss"] < 0.7 * summary["first_loss"]
    ppl = PseudoPerplexity(model_dir)
    fluent = "the man to the left of the car"
    assert ppl.score("car the of left man the to the") > 2 * ppl.score(fluent)
    # direct re-computation: mask each word alone, average -log p(original word)
    enc = ppl.tokenizer(fluent)
    ids = enc["input_ids"]
    assert ppl.tokenizer.convert_ids_to_tokens(ids)[1:-1] == fluent.split()
    logps = []
    with torch.no_grad():
        for pos in range(1, len(ids) - 1):
            masked = list(ids)
            masked[pos] = ppl.tokenizer.mask_token_id
            logits = ppl.model(input_ids=torch.tensor([masked])).logits[0, pos]
            logps.append(float(torch.log_softmax(logits, -1)[ids[pos]]))
    assert ppl.score(fluent) == pytest.approx(math.exp(-sum(logps) / len(logps)), rel=1e-5)

    out = tmp_path / "out"
    manifest = generate_from_refreasoning(root, out, GenerateConfig(max_ppl_ratio=1.5),
                                          mlm=model_dir)
    entry = manifest["report"]["splits"]["train"]
    assert manifest["report"]["pseudo_perplexity"]["model"] == str(model_dir)
    assert entry["mean_ppl_matched"] > 1.0 and entry["mean_ppl_mismatched"] > 1.0
    assert entry["rejected_candidates"] > 0
    bench = GITMMRBenchmark(out, "train")
    assert len(bench) == 2 * entry["pairs"] > 0
    for pos, neg in zip(bench.items[0::2], bench.items[1::2]):
        # every written mismatch lies within the accepted ratio of its positive
        ratio = ppl.score(neg["expression"]) / ppl.score(pos["expression"])
        assert 1 / 1.5 - 1e-6 <= ratio <= 1.5 + 1e-6


def test_train_mlm_errors_name_the_input(tmp_path: Path) -> None:
    with pytest.raises(RcrnError, match="no such file"):
        run_cli(["gitm-mr", "train-mlm", "--text", str(tmp_path / "nope.txt"), "--out",
                 str(tmp_path / "m")])
    with pytest.raises(RcrnError, match="no val_expressions.json"):
        run_cli(["gitm-mr", "train-mlm", "--refreasoning", str(templated(tmp_path / "rr")),
                 "--split", "val", "--out", str(tmp_path / "m")])
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    pytest.importorskip("transformers")
    with pytest.raises(RcrnError, match="empty.txt: no text"):
        run_cli(["gitm-mr", "train-mlm", "--text", str(empty), "--out", str(tmp_path / "m")])
    # the model folder: never a file, never someone else's folder, a previous model only
    # with --overwrite; nothing there is touched when refused
    text = tmp_path / "corpus.txt"
    text.write_text("a cup on a table\n")
    with pytest.raises(RcrnError, match="is a file"):
        run_cli(["gitm-mr", "train-mlm", "--text", str(text), "--out", str(empty)])
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "vocab.txt").write_text("[PAD]\n")
    with pytest.raises(RcrnError, match="did not write"):
        run_cli(["gitm-mr", "train-mlm", "--text", str(text), "--out", str(bert)])
    (bert / "training.json").write_text("{}")
    with pytest.raises(RcrnError, match="--overwrite"):
        run_cli(["gitm-mr", "train-mlm", "--text", str(text), "--out", str(bert)])
    assert (bert / "vocab.txt").read_text() == "[PAD]\n"


def test_missing_mlm_gives_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(MLMUnavailable, match="no such model folder"):
        PseudoPerplexity(tmp_path / "nope")
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(MLMUnavailable, match="needs the 'transformers' package"):
            PseudoPerplexity(tmp_path)
        root = write_refreasoning(tmp_path / "rr")
        with pytest.raises(RcrnError, match="transformers.*leave --mlm out"):
            run_cli(["gitm-mr", "generate", "--refreasoning", str(root), "--out",
                     str(tmp_path / "out"), "--mlm", str(tmp_path)])
    else:
        with pytest.raises(MLMUnavailable, match="not a loadable masked language model"):
            PseudoPerplexity(tmp_path)


def test_generator_cli_and_proposals(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = write_refreasoning(tmp_path / "rr")
    out = tmp_path / "out"
    assert run_cli(["gitm-mr", "generate", "--refreasoning", str(root), "--out", str(out),
                    "--splits", "val"]) == 0
    printed = capsys.readouterr().out
    assert "relation distance (TV)" in printed and "skipped" in printed
    with pytest.raises(RcrnError, match="exists; use --overwrite"):
        run_cli(["gitm-mr", "generate", "--refreasoning", str(root), "--out", str(out)])
    props = {"20": Proposals(boxes=[[0, 0, 5, 5], [1, 1, 3, 3]], image_size=(50, 40),
                             features=np.ones((2, 4), dtype=np.float32), image_id="20")}
    generate_from_refreasoning(root, out, GenerateConfig(splits=("val",), feature_dim=6),
                               proposals=props)
    bench = GITMMRBenchmark(out, "val")
    first = next(bench.problems())
    assert first.meta["gt_idx"] == 0 and first.proposals.features.shape == (2, 6)
    np.testing.assert_allclose(first.proposals.features[:, :4], 1.0)
    assert run_cli(["gitm-mr", "stats", "--root", str(out)]) == 0
    assert "val: 4 expressions, 2 pairs" in capsys.readouterr().out
    with pytest.raises(DataError, match="no image '20'"):
        generate_from_refreasoning(root, tmp_path / "o2", GenerateConfig(splits=("val",)),
                                   proposals={})


def test_generator_bad_input(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="Ref-Reasoning folder not found"):
        generate_from_refreasoning(tmp_path / "none", tmp_path / "out")
    (tmp_path / "rr").mkdir()
    with pytest.raises(DataError, match="no \\{split\\}_expressions.json"):
        generate_from_refreasoning(tmp_path / "rr", tmp_path / "out")
    (tmp_path / "rr" / "train_expressions.json").write_text('{"5": {"image_id": 1, "bbox": '
                                                           '[0, 0, 1, 1]}}')
    with pytest.raises(DataError, match="train_expressions.json: record '5': missing field"):
        generate_from_refreasoning(tmp_path / "rr", tmp_path / "out")
    (tmp_path / "rr" / "train_expressions.json").write_text("[1, 2")
    with pytest.raises(DataError, match="train_expressions.json: line 1"):
        generate_from_refreasoning(tmp_path / "rr", tmp_path / "out")
    with pytest.raises(ValueError, match="balance must be >= 0"):
        generate_from_refreasoning(tmp_path / "rr", tmp_path / "out",
                                   GenerateConfig(balance=-1))


def test_from_synthetic_round_trip(tmp_path: Path) -> None:
    from benchmarks.synthetic import GeneratorConfig, SyntheticBenchmark, generate_dataset

    src = tmp_path / "synthetic"
    generate_dataset(src, GeneratorConfig(scenes=6, seed=0, size=64, per_scene=2),
                     progress=False)
    out = tmp_path / "gitm"
    assert run_cli(["gitm-mr", "generate", "--from-synthetic", str(src), "--out", str(out),
                    "--feature-dim", "16"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["vinvl_objects"]["feature_dim"] == 16
    assert (out / "word_embedding").glob("vocabulary_*.txt")
    info = pickle.loads((out / "vinvl_objects" / "rois_info.pkl").read_bytes())
    checked = 0
    for split in ("train", "val", "test"):
        ours = list(GITMMRBenchmark(out, split).problems())
        theirs = list(SyntheticBenchmark(src, split).problems())
        assert len(ours) == len(theirs) > 0
        for a, b in zip(ours, theirs):
            assert a.match == b.match and a.meta["length"] == b.meta["length"]
            assert a.meta["expression"] == b.graph.text
            assert len(a.proposals) == len(b.proposals) == info[a.meta["image_id"]]["num_objs"]
            assert a.proposals.features.shape == (len(b.proposals), 16)
            if a.match:
                np.testing.assert_allclose(a.referent_box, b.referent_box)
                assert a.meta["gt_idx"] == b.target_index and a.meta["gt_iou"] == 1.0
            else:
                assert a.meta["mismatch_from"] == "foil_pos"
                assert (a.graph.relations[a.mismatched_relation].text
                        == b.graph.relations[b.mismatched_relation].text)
            checked += 1
    assert checked == sum(manifest["counts"][s]["positives"] + manifest["counts"][s]["negatives"]
                          for s in ("train", "val", "test"))
    with pytest.raises(RcrnError, match="no manifest"):
        run_cli(["gitm-mr", "generate", "--from-synthetic", str(tmp_path / "none"), "--out",
                 str(tmp_path / "x")])
